"""A question that offers a choice by time between two named things ("Who was born first, X or Y?")
is answered by the year each thing's own source gives for what is asked, the sentences quoted after
the verdict; without a year for each, no verdict. Invented entries throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.choice import choice_paragraph
from deepresearch.research.compose import UNANSWERED_NOTE, with_unanswered
from deepresearch.understanding.embedded.reader import rules_reading


def sim():
    return similarity_for(embedder_for("local"))


def text(s):
    return s["snippet"]


def thing(name):
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


ADA = {
    "id": 1,
    "key": "a",
    "title": "Ada Brannock",
    "snippet": "Ada Brannock (Osterland novelist (1870–1941)). Ada Brannock was a novelist of the northern coast.",
}
PELL = {
    "id": 2,
    "key": "p",
    "title": "Pell Varo",
    "snippet": "Pell Varo (Osterland glassblower (1861–1952)). Pell Varo was a glassblower of Vellmark.",
}
MILL = {
    "id": 3,
    "key": "m",
    "title": "Gull Harbour Mill",
    "snippet": "Gull Harbour Mill is a wool mill on the Tarn, rebuilt in 1921 after a fire. "
    "It was founded in 1788 by the Quill family.",
}
HALL = {
    "id": 4,
    "key": "h",
    "title": "Tern Vale Hall",
    "snippet": "Tern Vale Hall is a guild hall in Osterby. It was founded in 1803 by the weavers' guild.",
}


def _answer(question, names, evidence):
    concepts = [thing(n) for n in names]
    return choice_paragraph(rules_reading(question, concepts), evidence, text, sim())


def test_the_year_each_source_gives_chooses_between_two_things():
    paragraph, picks = _answer(
        "Who was born first, Ada Brannock or Pell Varo?", ["Ada Brannock", "Pell Varo"], [ADA, PELL]
    )
    assert "> **Pell Varo**, by the years each source gives (Ada Brannock: 1870; Pell Varo: 1861)." in paragraph
    assert [p.source["key"] for p in picks] == ["a", "p"] and "[1]" in paragraph and "[2]" in paragraph
    paragraph, _ = _answer("Who died later, Ada Brannock or Pell Varo?", ["Ada Brannock", "Pell Varo"], [ADA, PELL])
    assert "> **Pell Varo**" in paragraph and "Ada Brannock: 1941; Pell Varo: 1952" in paragraph
    # a year from the sentence that says what is asked, not the first year the text gives
    names = ["Gull Harbour Mill", "Tern Vale Hall"]
    paragraph, _ = _answer("Which was founded earlier, Gull Harbour Mill or Tern Vale Hall?", names, [MILL, HALL])
    assert "> **Gull Harbour Mill**" in paragraph and "Gull Harbour Mill: 1788; Tern Vale Hall: 1803" in paragraph


def test_a_choice_typed_without_its_comma_is_a_choice():
    names = ["Gull Harbour Mill", "Tern Vale Hall"]
    found = _answer("which was founded earlier gull harbour mill or tern vale hall", names, [MILL, HALL])
    assert found is not None and "> **Gull Harbour Mill**" in found[0]
    # a question opening with its verb offers no choice of this kind
    from deepresearch.understanding.embedded.forms import choice

    assert choice("is the mill older than the hall or the bridge") is None


def test_no_verdict_without_a_year_for_each_or_without_a_choice_by_time():
    undated = {**HALL, "snippet": "Tern Vale Hall is a guild hall in Osterby, built by the weavers' guild."}
    names = ["Gull Harbour Mill", "Tern Vale Hall"]
    assert _answer("Which was founded earlier, Gull Harbour Mill or Tern Vale Hall?", names, [MILL, undated]) is None
    assert _answer("Which is bigger, Gull Harbour Mill or Tern Vale Hall?", names, [MILL, HALL]) is None


def test_two_things_left_open_in_the_same_words_are_said_once():
    asked = {"text": "Which is older, Gull Harbour Mill or Tern Vale Hall"}
    out = with_unanswered("## Answer\n\nSome text.", [asked, dict(asked)])
    note = next(line for line in out.splitlines() if line.startswith(UNANSWERED_NOTE))
    assert note.count("Which is older") == 1


def test_the_report_opening_gives_the_verdict(tmp_path):
    """The writer and the synthesizer open their reports with `answer_first`: the verdict leads it."""
    from deepresearch.config import Context
    from deepresearch.research.compose import answer_first

    question = "Who was born first, Ada Brannock or Pell Varo?"
    evidence = [{**s, "url": f"https://example.org/{s['key']}", "text": s["snippet"]} for s in (ADA, PELL)]
    state = {"question": question, "concepts": [thing("Ada Brannock"), thing("Pell Varo")], "evidence": evidence}
    opening, _, _ = answer_first(state, Context(search=f"docs:{tmp_path}"))
    assert opening[0].split("## Answer", 1)[1].lstrip().startswith("> **Pell Varo**")
