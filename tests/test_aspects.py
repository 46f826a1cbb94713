"""Deep reports organised by aspects, on invented entries: the outline's sections group the
sentences of the subject's and related articles by meaning (never one article a section), are named
by the words their sentences share, are written from every source that speaks to them (two or more,
no sentence in two sections, each source's sentences in its order), close with what the sources
agree on, and leave out what the sections found that is not about the question. Sentences are
compared by the embedded model, as the product compares them."""

from __future__ import annotations

import re

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.aspect_report import compose, frame_notes
from deepresearch.research.aspects import Sentence, aspects, name_groups, sentences_of
from deepresearch.research.explore import aspect_outline
from deepresearch.tools.base import SearchResult
from deepresearch.understanding.embedded.reader import rules_reading

ENTRIES = {
    "Tarsk fever": "Tarsk fever (Disease of the Harl Valley). Tarsk fever is an infectious disease of the Harl Valley. "
    "The disease spreads through the bite of the Vell mosquito, which carries the parasite in its saliva. "
    "Patients suffer a high fever, a red rash on the arms and a severe headache. "
    "The drug dravine cures most patients within a week when it is given early. "
    "Oskar Brenn first described the disease in 1891.",
    "Vell mosquito": "Vell mosquito (Insect of the Harl Valley). The Vell mosquito is an insect of the river marshes. "
    "Its bite passes the Tarsk parasite from one person to the next. "
    "Females lay their eggs in still water after the spring floods. "
    "Draining the marshes in 1920 cut the number of infections by half.",
    "Dravine": "Dravine (Drug). Dravine is a bitter drug made from the bark of the dravi tree. "
    "Doctors give dravine by mouth to treat Tarsk fever, and the fever falls within days. "
    "A daily dose of the drug also protects travellers from infection. "
    "Oskar Brenn tested dravine on his own patients in 1895.",
    "Oskar Brenn": "Oskar Brenn (Physician (1850–1921)). Oskar Brenn was a physician of the Harl Valley. "
    "In 1891 he described patients with a high fever and a red rash who lived near the marshes. "
    "He showed in 1893 that mosquito bites spread the illness between villages. "
    "His treatment of the sick with dravine made him famous.",
    "Harl Valley": "Harl Valley (Region). The Harl Valley is a region of river marshes and farms. "
    "Fever outbreaks struck its villages every summer when mosquitoes bred in the marshes. "
    "The valley's hospital treats feverish patients with dravine and rest. "
    "The first records of the region's fever date from 1891.",
}
QUESTION = "How does Tarsk fever affect people?"
SUBJECT = {
    "name": "Tarsk fever",
    "query": "Tarsk fever",
    "title": "Tarsk fever",
    "phrase": "tarsk fever",
    "origin": "question",
}


class Library:
    """A backend of invented entries with titles (what a linker reads): a title finds its entry
    first, then the entries sharing most of the query's words."""

    def __init__(self, entries: dict[str, str]):
        self.entries = entries

    def titles(self) -> list[str]:
        return list(self.entries)

    def link_texts(self) -> list[str]:
        return [f"{t} {x}" for t, x in self.entries.items()]

    def describe(self, title: str) -> str:
        return self.entries.get(title, "")

    def description(self, title: str) -> str:
        return ""

    def search(self, query: str, k: int) -> list[SearchResult]:
        words = set(re.findall(r"\w+", query.lower()))
        ranked = sorted(
            self.entries,
            key=lambda t: (t.lower() != query.lower(), -len(words & set(re.findall(r"\w+", self.entries[t].lower())))),
        )
        return [
            SearchResult(title=t, url=f"https://example.org/{i}", backend="library", text=self.entries[t])
            for i, t in enumerate(ranked[:k])
        ]


def sim():
    return similarity_for(embedder_for("local"))


def _source(i: int, title: str, text: str) -> dict:
    return {"id": i, "key": f"k{i}", "title": title, "url": f"https://example.org/{i}", "text": text}


def _text(s: dict) -> str:
    return s["text"]


def test_the_outline_of_a_one_subject_question_is_aspects_not_articles():
    sections = aspect_outline(QUESTION, SUBJECT, Library(ENTRIES), set(), 3, sim())
    assert len(sections) >= 2
    for s in sections:
        assert s["title"] not in ENTRIES  # no section is an article
        sources = {t for t, _pos in s["aspect"]["members"]}
        assert len(sources) >= 2, s  # an aspect gathers several sources' sentences
        assert {c["title"] for c in s["concepts"]} >= sources & set(c["title"] for c in s["concepts"])
        assert "Tarsk fever" in s["key_question"]  # a section searches for the subject with its aspect's words
    # every article is some section's to search
    assert {c["title"] for s in sections for c in s["concepts"]} == set(ENTRIES)


def test_the_planner_plans_aspects_from_the_material():
    from deepresearch.nodes.planner import concept_plan

    analysis = rules_reading(QUESTION, [SUBJECT])
    plan = concept_plan(analysis, [SUBJECT], 3, Library(ENTRIES), sim())
    titles = [s["title"] for s in plan["sections"]]
    assert titles and not set(titles) & set(ENTRIES), titles
    assert all(s.get("aspect") for s in plan["sections"])


def test_sentences_are_grouped_by_what_they_say_not_by_whose_they_are():
    found, sentences = aspects(QUESTION, "Tarsk fever", list(ENTRIES.items()), sim(), 3)
    assert len(found) == 3
    for a in found:  # every group mixes articles
        assert len({sentences[i].source for i in a.members}) >= 2
    # the sentences on the drug's treatment, from three articles, mostly fall together
    treat = [
        i for i, x in enumerate(sentences) if "dravine" in x.text.lower() and ("cure" in x.text or "treat" in x.text)
    ]
    homes = [next(k for k, a in enumerate(found) if i in a.members) for i in treat]
    assert max(homes.count(h) for h in homes) >= 2, [sentences[i].text for i in treat]


def test_an_aspect_is_named_by_its_sentences_shared_words_and_never_by_a_title_alone():
    sentences = [
        Sentence("Kessel Ward stands by the river and has a hospital garden.", "Kessel Ward", 0),
        Sentence("Many visit Kessel Ward each spring for its hospital.", "Brenn", 0),
        Sentence("Kessel Ward was built of red stone.", "Harl", 0),
    ]
    group = [[0, 1, 2]]
    named = name_groups(group, sentences, "How are the sick cared for?", "Tarsk fever", ["Kessel Ward", "Brenn"])
    assert named[0].name.lower() != "kessel ward" and len(named[0].terms) >= 2, named[0].name
    # the question names the ward: it may name the aspect alone
    asked = name_groups(group, sentences, "What is Kessel Ward?", "Tarsk fever", ["Kessel Ward", "Brenn"])
    assert "kessel ward" in asked[0].name.lower(), asked[0].name


def test_a_group_of_one_sentence_is_named_by_its_own_words():
    sentences = [
        Sentence("Kessel Ward stands by the river and has a hospital garden.", "Kessel Ward", 0),
        Sentence("Many visit Kessel Ward each spring for its hospital.", "Brenn", 0),
        Sentence("Saltmarsh ferries carried the wool to Osterby.", "Harl", 0),
    ]
    named = name_groups([[0, 1], [2]], sentences, "How are the sick cared for?", "Tarsk fever", [])
    assert not named[1].name.lower().startswith("part"), named[1].name
    assert set(named[1].name.lower().replace(" and ", " ").split()) <= set(
        re.findall(r"\w+", sentences[2].text.lower())
    )


def _plan(sections: list[tuple[str, list[tuple[str, int]]]]) -> dict:
    return {
        "title": QUESTION,
        "sections": [
            {
                "title": t,
                "key_question": f"{t}?",
                "aspect": {"terms": [t], "subject": "Tarsk fever", "members": [list(m) for m in ms]},
            }
            for t, ms in sections
        ],
    }


def _evidence(titles) -> list[dict]:
    return [_source(i, t, ENTRIES[t]) for i, t in enumerate(titles, 1)]


def test_each_aspect_is_written_from_two_sources_and_no_sentence_twice():
    evidence = _evidence(ENTRIES)
    # the spread aspect was planned from one article's sentences alone
    plan = _plan(
        [
            ("Spread and bites", [("Vell mosquito", 0), ("Vell mosquito", 2)]),
            ("Drug and cure", [("Dravine", 1), ("Tarsk fever", 2)]),
        ]
    )
    written, _ = compose(plan, evidence, _text, sim())
    assert all(written)
    cited = [set(re.findall(r"\[(\d+)\]", w.text)) for w in written if w]
    assert all(len(c) >= 2 for c in cited), [w.text for w in written if w]
    sents = [x for w in written if w for x in re.split(r"(?<=\.)\s+", re.sub(r" \[\d+\]", "", w.text))]
    assert len(sents) == len(set(sents))


def test_a_sections_sentences_keep_their_sources_order():
    evidence = _evidence(ENTRIES)
    plan = _plan(
        [("Fever and rash", [("Oskar Brenn", 1), ("Tarsk fever", 1)]), ("Drug", [("Dravine", 0), ("Dravine", 1)])]
    )
    written, _ = compose(plan, evidence, _text, sim())
    for w in written:
        assert w is not None
        for s in evidence:  # a source's sentences appear in the order its text has them
            mine = [x for x in re.split(r"(?<=\.)\s+", w.text) if f"[{s['id']}]" in x]
            at = [
                s["text"].find(re.sub(r" \[\d+\]", "", x).rstrip(".")[-30:]) for x in mine
            ]  # an opening pronoun is named
            assert -1 not in at
            assert at == sorted(at), mine


def test_a_source_the_sections_found_off_the_question_is_left_out():
    # its one sentence on the drug is close to the aspect; the source is not about the question
    off = (
        "Copper kettle (Kitchen tool). A copper kettle boils water on a stove. Its handle is made of wood. "
        "Copper kettles were once used to brew the drug dravine that cures the fever."
    )
    evidence = _evidence(["Tarsk fever", "Dravine"]) + [_source(3, "Copper kettle", off)]
    plan = _plan([("Drug and cure", [("Dravine", 1), ("Tarsk fever", 2)])])
    written, _ = compose(plan, evidence, _text, sim())
    assert written[0] is not None and "[3]" not in written[0].text


def test_the_report_says_what_it_covers_and_where_the_sources_agree():
    evidence = _evidence(ENTRIES)
    plan = _plan(
        [
            ("Spread and bites", [("Vell mosquito", 0), ("Oskar Brenn", 1)]),
            ("Drug and cure", [("Dravine", 1), ("Tarsk fever", 2)]),
        ]
    )
    written, notes = compose(plan, evidence, _text, sim())
    intro, conclusion = frame_notes(plan, QUESTION, written, notes, evidence)
    assert intro.startswith("> ") and "Spread and bites" in intro and "Drug and cure" in intro
    assert "agree" in conclusion and conclusion.startswith("> ")
    assert not re.search(r"\[\d+\]", intro + conclusion)  # notes cite nothing: they state no fact
    # what no sentence speaks of is among what is asked, not the words a request opens with
    _, unsaid = frame_notes(plan, "Give me an overview of Tarsk fever and its folklore", written, notes, evidence)
    assert "folklore" in unsaid and "give" not in unsaid and "overview" not in unsaid, unsaid


def test_sentences_of_skip_the_title_line():
    found = sentences_of([("Dravine", ENTRIES["Dravine"])])
    assert found[0].text.startswith("Dravine is a bitter drug")


def test_a_sentence_that_opens_with_the_title_and_ends_on_a_bracket_is_no_title_line():
    text = (
        "Ombra Flats (Salt plain (of the Dessel basin)). Ombra Flats is a salt plain in the Dessel basin. "
        "Ombra Flats has an area of 8,400 km2 (3,200 sq mi). Its crust is white in summer."
    )
    found = [x.text for x in sentences_of([("Ombra Flats", text)])]
    assert found[0].startswith("Ombra Flats is a salt plain"), found  # the title line, life dates and all, is out
    assert "Ombra Flats has an area of 8,400 km2 (3,200 sq mi)." in found, found


def test_a_sentence_whose_pronoun_the_report_cannot_name_follows_only_the_sentence_it_continues():
    from deepresearch.research.aspect_report import _write

    ridge = (
        "Quorn ridge (Landform). A quorn ridge is a long low hill of gravel left by melting ice. "
        "They are the cold-country cousins of river sandbars, seen across the northern plains."
    )
    lake = "Melt lake (Lake). A melt lake fills a hollow that retreating ice scraped out of the rock."
    by_title = {"Quorn ridge": _source(1, "Quorn ridge", ridge), "Melt lake": _source(2, "Melt lake", lake)}
    own, cousins = sentences_of([("Quorn ridge", ridge)])
    (hollow,) = sentences_of([("Melt lake", lake)])
    sentences = [own, cousins, hollow]
    # after the other source's sentence "They" would be the lakes: the sentence is left out
    apart = _write([2, 1], sentences, by_title, _text).text
    assert "cousins" not in apart and "melt lake fills" in apart
    # right after the sentence it continues, it reads as its source wrote it
    together = _write([0, 1, 2], sentences, by_title, _text).text
    assert "left by melting ice [1]. They are the cold-country" in together
    # a pronoun as the subject of the first clause is the same: "In 1890, she ..." after another source
    keeper = "Ilse Varn (Lighthouse keeper). Ilse Varn kept the Osterby light. In 1890, she rowed out to a wreck."
    by_title["Ilse Varn"] = _source(3, "Ilse Varn", keeper)
    kept, rowed = sentences_of([("Ilse Varn", keeper)])
    sentences += [kept, rowed]
    assert "rowed out" not in _write([2, 4], sentences, by_title, _text).text
    assert "rowed out" in _write([3, 4], sentences, by_title, _text).text


def test_an_aspect_whose_every_sentence_continues_one_left_out_is_not_written_empty():
    ridge = (
        "Quorn ridge (Landform). A quorn ridge is a long low hill of gravel left by melting ice. "
        "They are the cold-country cousins of river sandbars, seen across the northern plains."
    )
    lake = "Melt lake (Lake). A melt lake fills a hollow that retreating ice scraped out of the rock."
    evidence = [_source(1, "Melt lake", lake), _source(2, "Quorn ridge", ridge)]
    plan = _plan([("Hollows", [("Melt lake", 0)]), ("Cousins", [("Quorn ridge", 1)])])
    plan["sections"][1]["aspect"]["subject"] = "Quorn ridge"
    written, _ = compose(plan, evidence, _text, sim())
    assert all(w is None or w.text.strip() for w in written), [w.text if w else None for w in written]
