"""Yes or no, for a question that asks it of two things: told by what each thing's source says it
is, on invented entries outside every evaluation set."""

from __future__ import annotations

from deepresearch.research.polar import verdict
from deepresearch.understanding.embedded.forms import polar
from deepresearch.understanding.embedded.parts import compared


def _src(i: int, title: str, text: str) -> dict:
    return {"id": i, "key": f"k{i}", "title": title, "text": text, "url": f"https://example.org/{i}"}


def _thing(name: str) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


def _text(s: dict) -> str:
    return s["text"]


EVIDENCE = [
    _src(
        1,
        "Orla Vesk",
        "Orla Vesk (Danish painter (1821–1890)). Orla Vesk was a Danish painter of the sea, born in Aarhus.",
    ),
    _src(
        2,
        "Brede Lunn",
        "Brede Lunn (Danish sculptor (1830–1899)). Brede Lunn was a Danish sculptor best known for lions.",
    ),
    _src(3, "Tam Quill", "Tam Quill (Scottish painter). Tam Quill was a Scottish painter of the sea and its harbours."),
    _src(4, "Cortha", "Cortha (City in Valdor). Cortha is the largest port of Valdor, on the river Dune."),
    _src(5, "Pellam", "Pellam (Town in Valdor). Pellam is a market town of Valdor."),
    _src(6, "Dune", "Dune (River in Valdor). The Dune is a river of Valdor that flows past Cortha."),
]


def _verdict(question: str, *names: str):
    return verdict(question, [_thing(n) for n in names], EVIDENCE, _text)


def test_a_yes_or_no_question_about_two_things_is_read_as_what_it_asks():
    assert polar("Were Orla Vesk and Tam Quill of the same nationality?") == ("same", "nationality")
    assert polar("Are Orla Vesk and Tam Quill both painters?") == ("both", "painters")
    assert polar("Were Orla Vesk and Tam Quill both born in Aarhus?") is None  # a fact of each, not a kind
    assert polar("Who were Orla Vesk and Tam Quill?") is None
    things = [_thing("Orla Vesk"), _thing("Tam Quill")]
    assert [c["name"] for c in compared("Were Orla Vesk and Tam Quill of the same nationality?", things)] == [
        "Orla Vesk",
        "Tam Quill",
    ]


def test_both_is_told_by_the_kind_each_source_says_its_thing_is():
    note, picks = _verdict("Are Orla Vesk and Tam Quill both painters?", "Orla Vesk", "Tam Quill")
    assert note.startswith("> **Yes**"), note
    assert [p.source["title"] for p in picks] == ["Orla Vesk", "Tam Quill"]
    note, _ = _verdict("Were Orla Vesk and Brede Lunn both painters?", "Orla Vesk", "Brede Lunn")
    assert note.startswith("> **No**") and "sculptor" in note, note
    note, _ = _verdict("Are Cortha and Dune both rivers?", "Cortha", "Dune")
    assert note.startswith("> **No**"), note  # "the river Dune" in Cortha's sentence makes it no river
    # a name one source does not give may still be true of it: no verdict rather than a wrong no
    assert _verdict("Were Orla Vesk and Tam Quill both Danish?", "Orla Vesk", "Tam Quill") is None
    assert _verdict("Were Orla Vesk and Brede Lunn both Danish?", "Orla Vesk", "Brede Lunn")[0].startswith("> **Yes**")


def test_the_same_is_told_by_the_names_each_source_says_its_thing_is_of():
    note, _ = _verdict("Were Orla Vesk and Brede Lunn of the same nationality?", "Orla Vesk", "Brede Lunn")
    assert note.startswith("> **Yes**") and "Danish" in note, note
    note, _ = _verdict("Were Orla Vesk and Tam Quill of the same nationality?", "Orla Vesk", "Tam Quill")
    assert note.startswith("> **No**") and "Scottish" in note, note
    note, _ = _verdict("Are Cortha and Pellam in the same country?", "Cortha", "Pellam")
    assert note.startswith("> **Yes**") and "Valdor" in note, note


def test_no_verdict_without_each_things_source():
    assert _verdict("Were Orla Vesk and Ivo Sarn of the same nationality?", "Orla Vesk", "Ivo Sarn") is None


def test_a_report_answers_a_yes_or_no_question_first_with_the_sentences_it_rests_on():
    from deepresearch.config import Context
    from tests.helpers import run_iterative

    final, _ = run_iterative(Context(model="local", search="wiki"), "Are the Danube and the Volga both rivers?")
    answer = final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert answer.strip().startswith("> **Yes**"), answer
    assert "Danube" in answer and "Volga" in answer and "[1]" in answer and "[2]" in answer, answer


def test_a_name_with_initials_is_one_of_the_things_compared():
    things = [_thing("Orla Vesk"), _thing("T. B. Quill") | {"phrase": "t. b. quill"}]
    found = compared("Were Orla Vesk and T. B. Quill of the same nationality?", things)
    assert [c["name"] for c in found] == ["Orla Vesk", "T. B. Quill"]


def test_both_before_the_things_asks_what_follows_them():
    assert polar("Are both Orla Vesk and Tam Quill painters?") == ("both", "")
    note, _ = _verdict("Are both Orla Vesk and Tam Quill painters?", "Orla Vesk", "Tam Quill")
    assert note.startswith("> **Yes**"), note
    note, _ = _verdict("Were both Orla Vesk and Brede Lunn painters?", "Orla Vesk", "Brede Lunn")
    assert note.startswith("> **No**"), note
    assert _verdict("Were both Orla Vesk and Tam Quill Danish?", "Orla Vesk", "Tam Quill") is None
