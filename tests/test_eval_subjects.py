"""The evaluation checks every report it writes for sentences quoting a source under a subject
the source does not give them (eval/subject_check.py over deepresearch.report.subjects), and
says how many it found: "sentences with a changed subject: N"."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from langgraph.store.memory import InMemoryStore

from deepresearch.report.subjects import changed_subjects, subject_change
from deepresearch.store import TEXTS_NAMESPACE, run_namespace
from deepresearch.text.urls import source_key
from tests.fakes import researcher

EVAL = Path(__file__).resolve().parents[1] / "eval"
sys.path.insert(0, str(EVAL))
import subject_check  # noqa: E402

URL = "https://example.org/sources-of-the-format"
MANUAL = (
    "Sources of the Quillet format. This very large document contains the commented code of the "
    "format. It can be typeset from the file qsource.tex in the base directory of the distribution."
)
AS_IT_STANDS = "It can be typeset from the file qsource.tex in the base directory of the distribution [1]."
PLANTED = (
    "Quillet font selection can be typeset from the file qsource.tex in the base directory of the distribution [1]."
)


def stored(text: str) -> InMemoryStore:
    """A run's store holding the source's text where a run keeps it (deepresearch.store.put_text)."""
    store = InMemoryStore()
    store.put(run_namespace(TEXTS_NAMESPACE, "run-1"), source_key(URL), {"text": text}, index=False)
    return store


def result_with(sentence: str) -> dict:
    report = f"# Quillet\n\nThe format has a manual [1]. {sentence}\n\n## Sources\n\n1. [Sources]({URL})\n"
    return {"report": report, "sources": [{"id": 1, "title": "Sources of the Quillet format", "url": URL}]}


def test_the_check_counts_a_planted_changed_subject_and_not_a_faithful_quote():
    store = stored(MANUAL)
    texts = subject_check.texts_of(result_with(PLANTED), store)
    assert texts == {1: MANUAL}  # read from the run's store by the cited source's number
    planted = subject_check.changed(result_with(PLANTED), texts)
    assert [f["source_subject"] for f in planted] == ["it"] and planted[0]["sentence"].startswith("Quillet font")
    assert subject_check.changed(result_with(AS_IT_STANDS), texts) == []
    shown = subject_check.row_fields({"changed_subjects": planted})
    hidden = subject_check.row_fields({"changed_subjects": planted}, hidden=True)
    assert shown["changed_subjects"] == hidden["changed_subjects"] == 1
    assert "changed_subject_sentences" not in hidden  # a held-out row keeps the count only
    assert subject_check.total([[shown], [hidden, {"changed_subjects": 0}]]) == 2
    assert len(subject_check.shown([[shown], [hidden]])) == 1


def test_a_sentence_its_source_states_as_it_stands_is_no_change():
    """An encyclopedia summary reads "Sofia (Capital of Bulgaria). Sofia is the capital of
    Bulgaria. ...": each sentence is quoted as it stands, whichever of the two the report has."""
    text = (
        "Vellmar (Capital and largest town of Ostria). Vellmar is the capital and largest town of Ostria. It has parks."
    )
    assert subject_change("Vellmar is the capital and largest town of Ostria [1].", text) is None
    assert subject_change("Vellmar (Capital and largest town of Ostria) [1].", text) is None
    assert subject_change("Dorn is the capital and largest town of Ostria [1].", text) is not None


def test_the_evaluation_prints_and_stores_the_count(fake_model, capsys, tmp_path):
    spec_obj = importlib.util.spec_from_file_location("deepresearch_eval_subjects", EVAL / "run.py")
    ev = importlib.util.module_from_spec(spec_obj)
    spec_obj.loader.exec_module(ev)
    spec, _ = fake_model(researcher(complete_after=1))
    out = tmp_path / "eval.json"
    argv = ["--answers-limit", "1", "--model", spec, "--writer", "extractive", "--only", "answers", "--json", str(out)]
    assert ev.main(argv) == 0
    assert "sentences with a changed subject: 0" in capsys.readouterr().out.splitlines()
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["changed_subjects"] == 0
    assert all(r["changed_subjects"] == 0 for rows in data["answer_rows"].values() for r in rows)


def test_the_check_reads_the_texts_a_real_run_kept(fake_model):
    """The research the evaluation runs keeps its store: the cited sources' texts are read."""
    spec, _ = fake_model(researcher(complete_after=1))
    result = subject_check.research(
        "When was the Berlin Wall built?", {"model": spec, "search": "wiki", "writer": "extractive"}, mode="iterative"
    )
    assert result["sources"] and result["subject_texts"] == len(result["sources"])
    assert result["changed_subjects"] == []


def test_a_tables_cells_are_checked_one_by_one():
    """A comparison's table row: each cell's sentence is its own. "Guernica is exhibited ..."
    in one cell, after "... Bequest." in the cell before, is the source's "It is exhibited ..."
    with the name its preceding sentence opens with."""
    guernica = (
        "Guernica (Painting). Guernica is a large 1937 oil painting by Pablo Picasso. "
        "It is exhibited in the Museo Reina Sofia in Madrid."
    )
    row = "| Gallery | It was left to the gallery by the Bliss Bequest [2]. | Guernica is exhibited in the Museo Reina Sofia in Madrid [1]. |"
    report = f"# Two paintings\n\n| | A | B |\n|---|---|---|\n{row}\n"
    assert (
        changed_subjects(
            report, {1: guernica, 2: "The Starry Night hung in Paris. It was left to the gallery by the Bliss Bequest."}
        )
        == []
    )
    wrong = row.replace("Guernica is exhibited", "Picasso is exhibited")
    assert [f["source_id"] for f in changed_subjects(report.replace(row, wrong), {1: guernica})] == [1]
