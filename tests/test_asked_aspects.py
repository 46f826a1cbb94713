"""The aspects a question names itself, on invented entries: each named aspect (words the question
joins by "and") is a section researched as its own question, holding the sentences closest to that
question and to no other named aspect's; the material's own aspects fill the other sections, so a
question naming two aspects still gets as many sections as the material holds. Meaning by the
embedded model, as the product reads it."""

from __future__ import annotations

from deepresearch.nodes.planner import concept_plan
from deepresearch.research.asked_aspects import named_aspects
from deepresearch.research.aspects import sentences_of
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_aspects import ENTRIES, SUBJECT, Library, sim

QUESTION = "What are the causes and cures of Tarsk fever?"


def _text(title: str, pos: int) -> str:
    return next(s.text for s in sentences_of([(title, ENTRIES[title])]) if s.pos == pos)


def test_the_words_a_question_joins_are_its_named_aspects_each_with_its_own_question():
    causes, cures = named_aspects(QUESTION, ["Tarsk fever"])
    assert (causes.word, causes.question) == ("causes", "What are the causes of Tarsk fever?")
    assert (cures.word, cures.question) == ("cures", "What are the cures of Tarsk fever?")
    verbs = named_aspects("How do sand dunes grow, drift and die?", ["Sand dune"])
    assert [a.question for a in verbs] == [
        "How do sand dunes grow?",
        "How do sand dunes drift?",
        "How do sand dunes die?",
    ]
    # a request that is no question keeps its form
    assert [a.question for a in named_aspects("The origins and legacy of Vormsee", ["Vormsee"])] == [
        "The origins of Vormsee",
        "The legacy of Vormsee",
    ]
    # things the question names are its subjects, not aspects of one; a function word is no aspect
    assert named_aspects("How did Vormsee and Kessport trade?", ["Vormsee", "Kessport"]) == []
    assert named_aspects("Where and when was Kessport founded?", ["Kessport"]) == []


def test_each_named_aspect_is_a_section_on_its_own_question_beside_the_materials_aspects():
    plan = concept_plan(rules_reading(QUESTION, [SUBJECT]), [SUBJECT], 4, Library(ENTRIES), sim())
    sections = plan["sections"]
    assert len(sections) == 4, [s["title"] for s in sections]  # two named, two from the material
    assert [s["key_question"] for s in sections[:2]] == [
        "What are the causes of Tarsk fever?",
        "What are the cures of Tarsk fever?",
    ]
    texts = [[_text(t, pos) for t, pos in s["aspect"]["members"]] for s in sections]
    # the bite that spreads the disease is a cause; the drug that cures it is a cure
    assert any("bite of the Vell mosquito" in x for x in texts[0]), texts[0]
    assert any("dravine cures" in x for x in texts[1]) and not any("dravine" in x for x in texts[0]), texts
    members = [(t, pos) for s in sections for t, pos in s["aspect"]["members"]]
    assert len(members) == len(set(members))  # no sentence in two sections
    for s in sections:
        assert len({t for t, _pos in s["aspect"]["members"]}) >= 2, s  # each from two sources or more
    assert not any({"causes", "cures"} & set(s["title"].lower().split()) for s in sections[2:])  # nor by their words
