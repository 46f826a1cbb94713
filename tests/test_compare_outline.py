"""A deep comparison's sections as aspects the compared things share, on invented entries: each
section compares the things on one aspect (a sentence of each thing's article in it, so at least two
sources), never one section per thing citing only its own article; an aspect lacking a thing takes
that thing's closest sentence from an aspect that can spare one; the written sections cite two
sources or more, no sentence in two of them. Meaning by the embedded model, as the product reads it."""

from __future__ import annotations

import re

import numpy as np

from deepresearch.research.aspect_report import compose
from deepresearch.research.aspects import Aspect, Sentence
from deepresearch.research.compare_outline import comparison_outline, each_thing, of_things
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_aspects import Library, sim

ISLANDS = {
    "Brannoy": "Brannoy (Island in the Grey Sea). Brannoy is a rocky island in the Grey Sea, north of the Osterland coast. "
    "Its cliffs rise steeply from the water, and a single mountain covers the middle of the island. "
    "About 3,000 people live on Brannoy, most of them in the harbour town of Velt. "
    "Fishing for cod and herring is the main work of the islanders, and wool from their sheep is sold abroad. "
    "Monks founded a monastery on the island in the ninth century, and raiders burned it two hundred years later. "
    "A ferry links Velt with the mainland twice a day in summer.",
    "Corrish": "Corrish (Island in the Grey Sea). Corrish is a flat sandy island in the Grey Sea, west of Brannoy. "
    "Dunes and salt marshes cover most of its low ground, and the sea floods its southern shore in storms. "
    "The island has a population of 800, living in three villages along the eastern shore. "
    "The islanders grow barley and potatoes, and many of them work in the summer hotels for visitors. "
    "Traders from the south built a fort on Corrish in the twelfth century to guard the sea road. "
    "An airstrip on the dunes takes small planes from the mainland.",
    "Grey Sea": "Grey Sea (Sea). The Grey Sea is a cold shallow sea between Osterland and the northern isles. "
    "Its fishing grounds are rich in cod and herring, and fleets from every port of the coast work them. "
    "Storms from the west raise high waves on its open water in winter.",
    "Velt": "Velt (Town). Velt is the harbour town of Brannoy and its only town. "
    "Its quay shelters the island's fishing boats and the ferry from the mainland. "
    "The town grew around the ruins of the old monastery.",
}
QUESTION = "How do Brannoy and Corrish differ?"
THINGS = ["Brannoy", "Corrish"]


def _thing(name: str) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


def _source(i: int, title: str) -> dict:
    return {"id": i, "key": f"k{i}", "title": title, "url": f"https://example.org/{i}", "text": ISLANDS[title]}


def _sources(section: dict) -> set[str]:
    return {t for t, _pos in section["aspect"]["members"]}


def test_each_section_of_a_comparison_compares_the_things_on_one_aspect():
    sections = comparison_outline(QUESTION, [_thing(t) for t in THINGS], Library(ISLANDS), set(), 3, sim())
    assert len(sections) >= 2, sections
    for s in sections:
        assert s["title"] not in ISLANDS, s["title"]  # an aspect, not an article
        assert set(THINGS) <= _sources(s), (s["title"], s["aspect"]["members"])  # both things' sentences
        assert {c["title"] for c in s["concepts"]} >= set(THINGS)  # it searches for both
    members = [tuple(m) for s in sections for m in s["aspect"]["members"]]
    assert len(members) == len(set(members))  # no sentence in two sections


def test_the_planner_plans_a_comparison_as_aspects_not_a_section_per_thing():
    from deepresearch.nodes.planner import concept_plan

    things = [_thing(t) for t in THINGS]
    analysis = rules_reading(QUESTION, things)
    assert analysis.comparison
    plan = concept_plan(analysis, things, 3, Library(ISLANDS), sim())
    titles = [s["title"] for s in plan["sections"]]
    assert len(titles) >= 2 and not set(titles) & set(ISLANDS), titles
    assert all(set(THINGS) <= _sources(s) for s in plan["sections"])


def test_an_aspect_lacking_a_compared_thing_takes_its_closest_sentence_from_one_that_can_spare_it():
    sentences = [
        Sentence("Brannoy has cliffs and a mountain.", "Brannoy", 0),
        Sentence("Brannoy has 3,000 people.", "Brannoy", 1),
        Sentence("Corrish has dunes and marshes.", "Corrish", 0),
        Sentence("Corrish has 800 people.", "Corrish", 1),
        Sentence("Corrish has a fort.", "Corrish", 2),
    ]
    # two directions of meaning: the land (0, 2) and the people (1, 3); 4 leans to the people
    v = np.array([[1, 0], [0, 1], [0.9, 0.1], [0.1, 0.9], [0.3, 0.7]], np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    land = Aspect("Land", ["land"], members=[0])
    people = Aspect("People", ["people"], members=[1, 2, 3, 4])  # holds every Corrish sentence
    each_thing([land, people], sentences, ["Brannoy", "Corrish"], v)
    assert land.members == [0, 2], land.members  # the Corrish sentence on its land, the closest to it
    assert people.members == [1, 3, 4]
    assert land.sources == ["Brannoy", "Corrish"]


def test_a_comparisons_sections_are_written_from_both_things_and_no_sentence_twice():
    sections = comparison_outline(QUESTION, [_thing(t) for t in THINGS], Library(ISLANDS), set(), 3, sim())
    plan = {"title": QUESTION, "question": QUESTION, "sections": sections}
    evidence = [_source(i, t) for i, t in enumerate(ISLANDS, 1)]
    written, _ = compose(plan, evidence, lambda s: s["text"], sim())
    texts = [w.text for w in written if w]
    assert len(texts) >= 2, texts
    for text in texts:
        assert {"1", "2"} <= set(re.findall(r"\[(\d+)\]", text)), text  # each thing's article cited
    sents = [x for t in texts for x in re.split(r"(?<=\.)\s+", re.sub(r" \[\d+\]", "", t))]
    assert len(sents) == len(set(sents))


def test_an_aspect_of_related_articles_only_is_no_part_of_the_comparison():
    sentences = [
        Sentence("Brannoy has 3,000 people.", "Brannoy", 0),
        Sentence("Corrish has 800 people.", "Corrish", 0),
        Sentence("The Grey Sea is cold and shallow.", "Grey Sea", 0),
        Sentence("Velt has a quay for boats.", "Velt", 0),
    ]
    people = Aspect("People", ["people"], members=[0, 1])
    sea = Aspect("Sea and quay", ["sea", "quay"], members=[2, 3])
    assert [a.name for a in of_things([people, sea], sentences, THINGS)] == ["People"]


# an island the sections' searches find beside the compared two, close to them in meaning, naming neither
OTHER = (
    "Kessholm (Island in the Grey Sea). Kessholm is a rocky island in the Grey Sea with steep cliffs. "
    "About 500 people live on Kessholm, and they fish for cod and herring and keep sheep for wool. "
    "A ferry from the mainland calls at its harbour in summer."
)


def test_a_comparisons_sections_leave_out_a_source_that_names_no_compared_thing():
    question = "How do the islands of the Grey Sea Brannoy and Corrish differ?"  # Kessholm is close to it
    sections = comparison_outline(question, [_thing(t) for t in THINGS], Library(ISLANDS), set(), 3, sim())
    plan = {"title": question, "question": question, "sections": sections}
    evidence = [_source(i, t) for i, t in enumerate(ISLANDS, 1)]
    evidence.append({**_source(0, "Brannoy"), "id": 9, "key": "k9", "title": "Kessholm", "text": OTHER})
    written, _ = compose(plan, evidence, lambda s: s["text"], sim())
    assert all("k9" not in w.keys for w in written if w), [w.text for w in written if w]
    # not a comparison (no things named): the same source, this close to the question, is drawn on
    for s in sections:
        s["aspect"].pop("things")
    written, _ = compose(plan, evidence, lambda s: s["text"], sim())
    assert any("k9" in w.keys for w in written if w), [w.text for w in written if w]


def _sentences(*specs: tuple[str, str, int]) -> list[Sentence]:
    return [Sentence(text, source, pos) for text, source, pos in specs]


def test_a_written_comparison_section_lacking_a_thing_takes_its_closest_sentence_that_reads_alone():
    from deepresearch.research.aspect_report import _each_thing

    sentences = _sentences(
        ("Brannoy has cliffs and a mountain.", "Brannoy", 0),
        ("Corrish has dunes and marshes.", "Corrish", 0),
        ("They flood in storms.", "Corrish", 1),  # reads only after the one before
        ("Corrish has 800 people.", "Corrish", 2),
        ("Corrish has a fort.", "Corrish", 3),
    )
    # closeness of each sentence to the two sections (land, people)
    scores = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.2], [0.5, 0.9], [0.4, 0.6]], np.float32)
    groups = [[0], [1, 2, 3, 4]]  # the land section lost its Corrish sentence (the answer's, say)
    _each_thing(groups, sentences, scores, {2}, ["Brannoy", "Corrish"])
    # not the dunes (the storms sentence leans on it), the closest of the rest
    assert groups == [[0, 3], [1, 2, 4]], groups


def test_a_section_of_one_source_takes_a_sentence_from_one_of_three_sources_and_an_empty_one_is_filled():
    from deepresearch.research.aspect_report import _two_sources

    sentences = _sentences(
        ("Brannoy has cliffs and a mountain.", "Brannoy", 0),
        ("Corrish has dunes and marshes.", "Corrish", 0),
        ("The Grey Sea is cold and shallow.", "Grey Sea", 0),
        ("Velt has a quay for boats.", "Velt", 0),
    )
    scores = np.array([[0.9, 0.1], [0.6, 0.5], [0.3, 0.8], [0.2, 0.7]], np.float32)
    groups = [[0], [1, 2, 3]]  # one sentence of each source: none has two to spare, yet three sources can
    _two_sources(groups, sentences, scores, set())
    assert groups == [[0, 1], [2, 3]], groups
    # a comparison's section left with no sentence takes two sources' sentences
    groups = [[], [0, 1, 2, 3]]
    _two_sources(groups, sentences, scores, set(), empty=True)
    assert sorted(groups[0]) == [0, 1] and groups[1] == [2, 3], groups
    groups = [[], [0, 1, 2, 3]]
    _two_sources(groups, sentences, scores, set())  # not a comparison: its own research stands
    assert groups == [[], [0, 1, 2, 3]]


def test_material_clustering_chains_into_one_group_still_gives_a_comparison_two_aspects():
    from deepresearch.research.aspects import group

    sentences = _sentences(*[(f"Sentence {i} of {s}.", s, i) for s in ("Brannoy", "Corrish") for i in range(3)])
    rng = np.random.default_rng(7)
    v = rng.normal(size=(6, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert len(group(sentences, v, 3)) == 1  # six groups asked of six sentences: every one alone, one kept
    two = group(sentences, v, 3, least=2)
    assert len(two) >= 2 and sorted(i for g in two for i in g) == list(range(6)), two


def test_each_compared_things_sentence_on_what_is_asked_is_chosen_by_its_words_too():
    from deepresearch.research.aspect_report import asked_sentences

    sentences = _sentences(
        ("Brannoy is a rocky island of steep cliffs in the Grey Sea.", "Brannoy", 0),
        ("Brannoy has an area of 48 square kilometres of moor and bog.", "Brannoy", 1),
        ("Corrish is a flat sandy island west of Brannoy.", "Corrish", 0),
        ("Corrish has an area of 12 square kilometres.", "Corrish", 1),
        # closer in meaning to the one word "areas" than the sentence that gives the figure
        ("The region around its bay is wide and empty.", "Corrish", 2),
    )
    chosen = asked_sentences("Compare the areas of Brannoy and Corrish", THINGS, sentences, sim(), set())
    assert chosen == {1, 3}, [sentences[i].text for i in chosen]
    # a question asking nothing of them but how they differ keeps none
    assert asked_sentences(QUESTION, THINGS, sentences, sim(), set()) == set()


# Corrish says much of its people and trade, and its size once: a section of both cuts Corrish's sentences
CORRISH_LONG = (
    "Corrish (Island in the Grey Sea). Corrish is a flat sandy island in the Grey Sea, west of Brannoy. "
    "The island has a population of 800, living in three villages along the eastern shore. "
    "The islanders grow barley and potatoes on the fields behind the dunes. "
    "Many of the islanders work in the summer hotels for visitors from the mainland. "
    "Fishing boats from the villages land cod and herring at the eastern quay. "
    "The village school teaches the island's children until the age of fourteen. "
    "A weekly market in the largest village sells fish, wool and barley bread. "
    "Corrish has an area of 12 square kilometres. "
    "Visitors from the mainland come for the beaches and the birds of the marshes."
)


def test_the_writer_keeps_each_things_sentence_on_what_is_asked_when_it_cuts_a_section():
    entries = {"Brannoy": ISLANDS["Brannoy"], "Corrish": CORRISH_LONG}
    question = "Compare the areas of Brannoy and Corrish"
    members = [[t, i] for t, n in (("Brannoy", 6), ("Corrish", 9)) for i in range(n)]
    plan = {
        "title": question,
        "question": question,
        "sections": [
            {
                "title": "Islands",
                "key_question": "Islands?",
                "aspect": {"terms": ["islands"], "subject": "Brannoy Corrish", "things": THINGS, "members": members},
            }
        ],
    }
    evidence = [
        {"id": i, "key": f"k{i}", "title": t, "url": f"https://example.org/{i}", "text": x}
        for i, (t, x) in enumerate(entries.items(), 1)
    ]
    written, _ = compose(plan, evidence, lambda s: s["text"], sim())
    assert written[0] is not None
    assert "Corrish has an area of 12 square kilometres" in written[0].text, written[0].text
