"""eval/multihop_build.py reads a HotpotQA train sample in the {"split", "examples": [...]} form: the
gold sources are the two hops, the id is the dataset's index, and only a train split is read. The
file here is invented (no evaluation question)."""

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
