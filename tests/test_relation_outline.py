"""A question on how one thing bears on another, on invented entries: its deep outline is the
relation's aspects (the sentences that link the two things, then each thing's side), not a section
per thing; every section gathers two sources or more, no sentence stands in two sections, and none
is named after an article alone. Meaning by the embedded model, as the product reads it."""

from __future__ import annotations

from deepresearch.nodes.planner import concept_plan
from deepresearch.research.relation_outline import relation_outline
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_aspect_outline import _subject, sim
from tests.test_aspects import Library

ENTRIES = {
    "Kessel loom": "Kessel loom (Weaving machine). The Kessel loom is a weaving machine driven by a water wheel. "
    "Its shuttle is thrown by a spring, so one worker can tend four looms at once. "
    "Ada Kessel built the first loom of this kind in a barn in 1781. "
    "The machine weaves a plain cloth of wool twice as fast as a hand loom.",
    "Osterland": "Osterland (Country). Osterland is a small country between the Kettle range and the northern sea. "
    "Its capital is Kessport, a port on a wide bay. "
    "Most of its people lived on farms and kept sheep on the high pastures. "
    "The country has a cold climate and long winters.",
    "Weavers' revolt": "Weavers' revolt (Uprising). The weavers' revolt was an uprising of hand weavers in 1794. "
    "When the Kessel loom spread across Osterland, thousands of hand weavers in Osterland lost their living. "
    "The weavers broke looms in the mills and marched on Kessport. "
    "The revolt ended when the army arrested its leaders.",
    "Harlburg mills": "Harlburg mills (Textile mills). The Harlburg mills were the cloth mills of the river town of Harlburg. "
    "The Kessel loom made Harlburg the richest town of Osterland within twenty years. "
    "Farm families of Osterland left the pastures to work in the mills for wages. "
    "The mills sold wool cloth to every port of the northern sea.",
    "Water wheel": "Water wheel (Machine). A water wheel turns the flow of a river into the motion of a shaft. "
    "Mills placed on fast rivers used the wheel to drive their machines. "
    "The wheel's paddles dip into the current and the shaft turns gears and belts.",
    "Kettle range": "Kettle range (Mountains). The Kettle range is a chain of granite peaks in the north of Osterland. "
    "Glaciers carved its valleys during the last ice age, leaving steep walls. "
    "Shepherds drive their flocks to the high pastures of the range in early summer.",
    "Kessport": "Kessport (City). Kessport is the capital and chief port of Osterland. "
    "Its harbour ships wool, timber and fish, and the city is the seat of the parliament. "
    "The old town stands on a hill above the bay.",
}
QUESTION = "How did the Kessel loom change Osterland?"
LOOM, LAND = _subject("Kessel loom"), _subject("Osterland")


def _members(section: dict) -> list[tuple[str, int]]:
    return [(t, pos) for t, pos in section["aspect"]["members"]]


def _text(title: str, pos: int) -> str:
    from deepresearch.research.aspects import sentences_of

    return next(s.text for s in sentences_of([(title, ENTRIES[title])]) if s.pos == pos)


def test_a_relation_question_is_planned_as_the_relations_aspects_not_a_section_per_thing():
    plan = concept_plan(rules_reading(QUESTION, [LOOM, LAND]), [LOOM, LAND], 4, Library(ENTRIES), sim())
    sections = plan["sections"]
    assert len(sections) >= 3, [s["title"] for s in sections]
    assert all(s.get("aspect") for s in sections)  # aspects, not "Kessel loom" and "Osterland"
    assert not {s["title"] for s in sections} & set(ENTRIES)
    seen: set[tuple[str, int]] = set()
    for s in sections:
        assert len({t for t, _pos in _members(s)}) >= 2, s  # every section from two sources or more
        assert not seen & set(_members(s)), s["title"]  # no sentence in two sections
        seen |= set(_members(s))


def test_the_sentences_that_link_the_two_things_make_the_first_sections_and_each_thing_has_its_side():
    sections = relation_outline(QUESTION, [LOOM, LAND], Library(ENTRIES), set(), 4, sim())
    parts = [s["aspect"]["part"] for s in sections]
    assert parts[0] == "link" and parts == sorted(parts, key=lambda p: p != "link"), parts  # the links lead
    links = [_text(t, pos) for s in sections if s["aspect"]["part"] == "link" for t, pos in _members(s)]
    # every sentence that names both the loom and the country is the relation's
    both = [_text(t, pos) for s in sections for t, pos in _members(s)]
    both = [x for x in both if "Kessel loom" in x and "Osterland" in x]
    assert len(both) >= 2 and set(both) <= set(links), (both, links)
    # each thing's side has its own sections: the loom's workings, the country's land
    sides = {s["aspect"]["part"]: {t for t, _pos in _members(s)} for s in sections if s["aspect"]["part"] != "link"}
    assert "Kessel loom" in sides.get("Kessel loom", set()), sides
    assert "Osterland" in sides.get("Osterland", set()), sides
