"""eval/multihop_build.py reads a HotpotQA train sample in the {"split", "examples": [...]} form: the
gold sources are the two hops, the id is the dataset's index, and only a train split is read; and
ComplexWebQuestions' own rows (eval/multihop_cwq.py): composition questions, whose bridge is the second
hop. The rows here are invented (no evaluation question)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import multihop_build  # noqa: E402


def _source(title: str, gold: bool) -> dict:
    return {
        "title": title,
        "text": ["An invented sentence."],
        "is_gold": gold,
        "gold_sentence_indices": [0] if gold else [],
    }


def _sample(split: str = "train") -> dict:
    return {
        "split": split,
        "seed": 1,
        "num_examples": 2,
        "examples": [
            {
                "dataset_index": 314,
                "question": "Which river runs past the mill that Quillon Harte built?",
                "answer": "Vestry Brook",
                "gold_source_indices": [[2, 0], [0, 1]],
                "sources": [
                    _source("Harte Mill", True),
                    _source("Brass kettle", False),
                    _source("Quillon Harte", True),
                ],
            },
            {
                "dataset_index": 2718,
                "question": "In what year did the owl sanctuary of Pell Marsh open?",
                "answer": "1911",
                "gold_source_indices": [],
                "sources": [_source("Pell Marsh", True), _source("Owl", False), _source("Pell Marsh Sanctuary", True)],
            },
        ],
    }


def test_the_sample_form_gives_gold_sources_as_the_hops(tmp_path):
    path = tmp_path / "train.json"
    path.write_text(json.dumps(_sample()), encoding="utf-8")
    rows = multihop_build.read_titled(path, "hotpotqa")
    assert [r["id"] for r in rows] == ["hotpotqa:train:314", "hotpotqa:train:2718"]
    assert rows[0]["q"] == "Which river runs past the mill that Quillon Harte built?"
    assert rows[0]["answers"] == ["Vestry Brook"]
    # in the order the supporting facts name them; the distractor is not a hop
    assert rows[0]["titles"] == ["Quillon Harte", "Harte Mill"]
    # no supporting facts listed: the gold sources in their own order
    assert rows[1]["titles"] == ["Pell Marsh", "Pell Marsh Sanctuary"]


def test_a_sample_of_another_split_is_refused_with_a_line(tmp_path, capsys):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(_sample("validation")), encoding="utf-8")
    out = tmp_path / "out.json"
    assert multihop_build.main(["--hotpotqa", str(path), "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert "only train splits are read" in err and "Traceback" not in err


def test_kept_apart_questions_are_read_from_the_sample_form(tmp_path):
    path = tmp_path / "apart.json"
    path.write_text(json.dumps(_sample()), encoding="utf-8")
    apart = multihop_build.read_apart(path)
    assert multihop_build.key_of("In what year did the owl sanctuary of Pell Marsh open?") in apart
    assert len(apart) == 2


def _cwq_row(qid: str, question: str, bridge: str, answers: list[dict], kind: str = "composition") -> dict:
    return {
        "ID": qid,
        "question": question,
        "answers": answers,
        "composition_answer": bridge,
        "compositionality_type": kind,
        "machine_question": "an invented machine question",
        "sparql": "SELECT ?x WHERE { }",
    }


RIVERS = "the capital of peru lies in the valleys of which rivers"


def test_the_cwq_reader_takes_composition_questions_with_their_bridge(tmp_path):
    """ComplexWebQuestions' own form: composition questions only, each answer with its aliases, the
    composition answer as the bridge; a list question (more than three answers) is left out."""
    many = [{"answer": f"Invented river {i}", "aliases": []} for i in range(4)]
    rows = [
        _cwq_row("WebQTrn-1_a", RIVERS, "lima", [{"answer": "Rímac River", "aliases": ["Rímac", "Rimac"]}]),
        _cwq_row(
            "WebQTrn-2_b", "Which land borders Peru and holds Quillon Harte's mill?", "peru", many[:1], "conjunction"
        ),
        _cwq_row("WebQTrn-3_c", "Which rivers run past the mills Quillon Harte built?", "harte mill", many),
    ]
    path = tmp_path / "ComplexWebQuestions_train.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    got = multihop_build.read_cwq(path)
    assert [r["id"] for r in got] == ["cwq:train:WebQTrn-1_a"]
    assert got[0]["answers"] == ["Rímac River", "Rímac", "Rimac"] and got[0]["bridge"] == "lima"
    assert got[0]["q"] == RIVERS and got[0]["dataset"] == "cwq"
    # the Hugging Face copies: one object a line, the answers column-wise
    lines = tmp_path / "cwq_train.jsonl"
    column = {**rows[0], "answers": {"answer": ["Rímac River"], "aliases": [["Rímac"]], "answer_id": ["m.0x"]}}
    lines.write_text(json.dumps(column) + "\n", encoding="utf-8")
    assert multihop_build.read_cwq(lines)[0]["answers"] == ["Rímac River", "Rímac"]


def test_a_cwq_file_of_another_split_is_refused_with_a_line(tmp_path, capsys):
    path = tmp_path / "ComplexWebQuestions_dev.json"
    path.write_text(json.dumps([_cwq_row("WebQTest-1_a", RIVERS, "lima", [{"answer": "Rímac"}])]), encoding="utf-8")
    out = tmp_path / "out.json"
    assert multihop_build.main(["--cwq", str(path), "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert "only train splits are read" in err and "Traceback" not in err


def test_cwq_questions_take_their_two_hops_through_the_dataset_bridge(tmp_path):
    """The bridge's entry is the second hop when the question names an entry whose summary names it, and
    only it holds the answer; the build records the dataset, its licence and the bridge."""
    answers = [{"answer": "Rímac River", "aliases": ["Rímac"]}]
    rows = [
        _cwq_row("WebQTrn-1_a", RIVERS, "lima", answers),
        # no entry of the bridge's name; the bridge named by the question; the bridge's entry not named by
        # the summary of the entry the question names
        _cwq_row("WebQTrn-2_b", "the capital of peru lies by which river", "zorblat city", answers),
        _cwq_row("WebQTrn-3_c", "does lima in peru lie in the valleys of which rivers", "lima", answers),
        _cwq_row("WebQTrn-4_d", "what rivers cross the capital of the western neighbour of bolivia", "lima", answers),
    ]
    path = tmp_path / "cwq_train.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "multihop.json"
    assert multihop_build.main(["--cwq", str(path), "--commit", "cwq=" + "3" * 40, "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [x["id"] for x in data["questions"]] == ["cwq:train:WebQTrn-1_a"]
    x = data["questions"][0]
    assert x["via"] == ["Peru"] and x["gold"] == ["Lima"] and x["bridge"] == "lima" and x["hop"] == 1
    assert data["read"] == {"cwq": 4} and data["answerable"] == {"cwq": 1}
    meta = data["sources"]["cwq"]
    assert meta["commit"] == "3" * 40 and "GPL" in meta["licence"] and "train" in meta["name"]
