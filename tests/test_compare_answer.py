"""A comparison's answer paragraph, on invented entries: for each compared thing, its sentence on what
the question asks of them (deepresearch.research.asked_words: closeness in meaning to the asked words
and their shared stems), not its opening; a runner-up as close goes with it; a question that asks
only how they differ keeps each thing's sentence closest to the question. The writer (iterative) and
the synthesizer (deep) both open their reports with `answer_first`. Meaning by the embedded model, as
the product reads it."""

from __future__ import annotations

from deepresearch.config import Context
from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.answer import answer_picks, best_sentence, lead_line
from deepresearch.research.asked_words import asked_words, closest_to_asked
from deepresearch.research.compose import answer_first
from deepresearch.understanding.embedded.reader import rules_reading

ISLANDS = {
    "Brannoy": "Brannoy (Island in the Grey Sea). Brannoy is a rocky island in the Grey Sea, north of the Osterland "
    "coast. About 3,000 people live on Brannoy, most of them in the harbour town of Velt. "
    "Fishing for cod and herring is the main work of the islanders. "
    "Brannoy has an area of 48 square kilometres (19 sq mi). "
    "A ferry links Velt with the mainland twice a day in summer.",
    "Corrish": "Corrish (Island in the Grey Sea). Corrish is a flat sandy island in the Grey Sea, west of Brannoy. "
    "The island has a population of 800, living in three villages along the eastern shore. "
    "Its dunes and marsh cover an area of 12 square kilometres, the smaller of the two islands. "
    "Traders from the south built a fort on Corrish in the twelfth century to guard the sea road.",
}
PAINTERS = {
    "Orla Vesk": "Orla Vesk (Danish painter (1821–1890)). Orla Vesk was a Danish painter of harbours and ships. "
    "He studied under the marine painter Jens Holm in Aarhus. "
    "Vesk won the gold medal of the Copenhagen Salon in 1851 for a harbour at dusk. "
    "Vesk won the silver medal of the Paris Salon in 1867 for a storm at sea. "
    "He spent his last years in a fishing village on the Skaw.",
    "Tam Quill": "Tam Quill (Scottish painter (1830–1899)). Tam Quill was a Scottish painter of lochs and hills. "
    "Quill won the bronze medal of the Glasgow Institute in 1875 for a loch in winter. "
    "He taught drawing at the Perth academy for twenty years.",
}


def sim():
    return similarity_for(embedder_for("local"))


def _thing(name: str) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


def _sources(entries: dict[str, str]) -> list[dict]:
    return [
        {"id": i, "key": f"k{i}", "title": t, "url": f"https://example.org/{i}", "text": x, "snippet": x}
        for i, (t, x) in enumerate(entries.items(), 1)
    ]


def _text(s: dict) -> str:
    return s["text"]


def _picks(question: str, entries: dict[str, str]) -> list[str]:
    things = [_thing(t) for t in entries]
    picks = answer_picks(rules_reading(question, things), things, _sources(entries), _text, sim())
    return [p.sentence for p in picks]


def test_a_comparisons_answer_quotes_each_things_sentence_on_what_is_asked():
    picks = _picks("Compare the areas of Brannoy and Corrish", ISLANDS)
    assert picks == [
        "Brannoy has an area of 48 square kilometres (19 sq mi).",
        "Its dunes and marsh cover an area of 12 square kilometres, the smaller of the two islands.",
    ], picks


def test_a_sentence_opening_with_the_title_and_ending_on_a_bracket_is_no_description_line():
    source = {"title": "Brannoy"}
    assert lead_line("Brannoy (Island in the Grey Sea).", source)
    assert lead_line("Brannoy (Danish painter (1821–1890)).", source)
    assert not lead_line("Brannoy has an area of 48 square kilometres (19 sq mi).", source)


def test_a_runner_up_as_close_to_what_is_asked_goes_with_it_in_its_sources_order():
    picks = _picks("Which medals did Orla Vesk and Tam Quill win?", PAINTERS)
    assert picks == [
        "Vesk won the gold medal of the Copenhagen Salon in 1851 for a harbour at dusk.",
        "Vesk won the silver medal of the Paris Salon in 1867 for a storm at sea.",
        "Quill won the bronze medal of the Glasgow Institute in 1875 for a loch in winter.",
    ], picks


def test_a_question_asking_only_how_they_differ_keeps_each_things_closest_sentence():
    question = "How do Brannoy and Corrish differ?"
    assert asked_words(question, ISLANDS) == []
    reading = rules_reading(question, [_thing(t) for t in ISLANDS])
    sources = _sources(ISLANDS)
    closest = [
        best_sentence([s], _text, question, reading.focus.kind, frozenset(reading.words), sim(), one=True)
        for s in sources
    ]
    assert _picks(question, ISLANDS) == [p.sentence for p in closest if p]
    assert not any("square kilometres" in x for x in _picks(question, ISLANDS))


def test_the_shared_scoring_weighs_the_asked_stems_and_takes_none_that_is_not_what_is_asked():
    sim_free = similarity_for(None)  # without an embedder: the shared stems alone
    texts = ["The tower is tall and grey.", "Its height is 40 metres.", "The height of its spire is 12 metres."]
    words = asked_words("Compare the heights of Skarn and Velden", ["Skarn", "Velden"])
    assert words == ["heights"]
    assert closest_to_asked(words, texts, sim_free) == [1]
    assert closest_to_asked(words, texts, sim_free, within=0.1) == [1, 2]
    assert closest_to_asked(words, texts[:1], sim_free) == []  # no stem shared, not close in meaning
    assert closest_to_asked([], texts, sim_free) == []


def test_the_report_opening_both_graphs_write_quotes_each_things_sentence_on_what_is_asked(tmp_path):
    """The writer (iterative) and the synthesizer (deep) open their reports with `answer_first`."""
    question = "Compare the areas of Brannoy and Corrish"
    things = [_thing(t) for t in ISLANDS]
    state = {"question": question, "concepts": things, "evidence": _sources(ISLANDS)}
    opening, _, quoted = answer_first(state, Context(search=f"docs:{tmp_path}"))
    answer = opening[0].split("## Answer", 1)[1]
    assert "48 square kilometres" in answer and "12 square kilometres" in answer, answer
    assert "rocky island" not in answer and "flat sandy island" not in answer, answer


def test_what_is_asked_is_looked_for_among_the_sentences_holding_the_kind_of_answer_asked():
    """A sentence sharing the asked word but holding no year does not answer "when"."""
    entries = {
        "Orla Vesk": PAINTERS["Orla Vesk"] + " Vesk married the weaver Ilse Brand, a cousin of his teacher. "
        "The two were married in the cathedral of Aarhus in 1849.",
        "Tam Quill": PAINTERS["Tam Quill"] + " Quill married the singer Ada Muir in Perth in 1861.",
    }
    picks = _picks("When did Orla Vesk and Tam Quill marry?", entries)
    assert picks[0] == "The two were married in the cathedral of Aarhus in 1849.", picks
    assert picks[-1] == "Quill married the singer Ada Muir in Perth in 1861.", picks
