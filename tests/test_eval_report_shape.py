"""The report-shape measures of the evaluation (eval/report_shape.py), on invented reports.

No model runs here: each measure reads a fixed invented report, and the run's bookkeeping is fed a
fixed result in place of the research (subject_check.research, the evaluation's own boundary).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import report_shape  # noqa: E402
import run as eval_run  # noqa: E402 - at collection: its runs log to the sys.stderr of their import
import subject_check  # noqa: E402

QUESTION = "Give a broad account of the Quillon moss."
SOURCES = [
    {"id": 1, "title": "Quillon moss"},
    {"id": 2, "title": "Harrow lantern (ship)"},
    {"id": 3, "title": "Tidewater"},
    {"id": 4, "title": "Brine kelp"},
]
REPORT = """# Give a broad account of the Quillon moss.

## Overview

Quillon moss grows on the damp walls of the old harbour [1].

> **What this report covers:** the moss, the lantern and the tides.

## Quillon moss

Quillon moss grows on the damp walls of the old harbour [1]. It turns copper in the dry months [1][3].

## Harrow lantern

The Harrow lantern carried salt between the islands [2]. Its crew kept moss on the deck [2].

## Tidewater

Tides reach the harbour walls twice a day [3]. Its crew kept moss on the deck [4].

## How the moss spreads

Spores ride the spray from wall to wall [1].

> **Gap:** the sources say nothing of its seeds [2][4].

## Brine kelp and Tidewater

Brine kelp [4].

## Conclusion

> **Where the sources agree:** on the moss (Quillon moss and Tidewater).

## Sources

[1] Quillon moss — https://en.wikipedia.org/wiki/Quillon_moss
[2] Harrow lantern (ship) — https://en.wikipedia.org/wiki/Harrow_lantern_(ship)
[3] Tidewater — https://en.wikipedia.org/wiki/Tidewater
[4] Brine kelp — https://en.wikipedia.org/wiki/Brine_kelp

_Verification: 11 citations checked against the retrieved text: 11 supported, 0 partial, 0 unverified._
"""
OWN = ["Quillon moss", "Harrow lantern", "Tidewater", "How the moss spreads", "Brine kelp and Tidewater"]


def test_the_sections_are_the_reports_own_the_frame_aside():
    assert [h for h, _ in report_shape.sections(REPORT)] == OWN


def test_a_heading_that_is_one_cited_articles_title_counts_unless_the_question_names_it():
    titles = {s["title"] for s in SOURCES}
    # "Harrow lantern" (the title without its qualifier) and "Tidewater"; the question names Quillon moss;
    # "Brine kelp and Tidewater" is more than one title; "How the moss spreads" is none
    assert report_shape.article_sections(OWN, titles, QUESTION) == 2
    assert report_shape.article_sections(["tidewater."], titles, "Tell me of the sea.") == 1  # case, punctuation
    assert report_shape.article_sections(["Brine kelp"], titles - {"Brine kelp"}, QUESTION) == 0  # not cited
    assert report_shape.article_sections(["Tidewater"], titles, "What made the tidewater rise?") == 0
    assert not report_shape.names("Harrow lantern (ship)", "What did the harrower lantern-maker sell?")


def test_a_sentence_in_two_sections_counts_once_citations_aside():
    bodies = [b for _, b in report_shape.sections(REPORT)]
    assert report_shape.shared_sentences(bodies) == 1  # the crew's deck, cited [2] and [4]
    # twice in one section is not in two sections; the overview is not a section of the report's own
    assert report_shape.shared_sentences(["A ferry crossed the bay [1]. A ferry crossed the bay [2]."]) == 0
    three = ["The bell rang at noon [1].", "The bell rang at noon [2].", "The bell  rang at Noon [3]."]
    assert report_shape.shared_sentences(three) == 1


def test_a_section_citing_fewer_than_two_sources_is_thin_its_notes_aside():
    thin = {h: report_shape.thin(b) for h, b in report_shape.sections(REPORT)}
    assert thin == {
        "Quillon moss": False,  # [1] and [3]
        "Harrow lantern": True,  # [2] twice
        "Tidewater": False,
        "How the moss spreads": True,  # [2] and [4] only in the note
        "Brine kelp and Tidewater": True,
    }


def test_an_empty_section_has_no_sentence_of_its_own():
    assert report_shape.empty("\n\nVenus (Planet) [2].\n\n")
    assert report_shape.empty("\n\n> Nothing new here: what the sources say on this is stated above.\n\n")
    assert report_shape.empty("\n\nNo sources were found for this question.\n")
    assert not report_shape.empty(
        "\n\nWith a population of 800,871 and a territory of 38,394 square "
        "kilometres, Bhutan ranks 133rd in land area [1].\n\n"
    )


def test_one_reports_shape():
    row = report_shape.shape({"report": REPORT, "sources": SOURCES}, QUESTION)
    assert row == {
        "sources": 4,
        "words": report_shape.words(REPORT.split("\n## Sources")[0]),
        "not_found": False,
        "sections": 5,
        "empty_sections": 1,
        "article_sections": 2,
        "shared_sentences": 1,
        "thin_sections": 3,
    }
    assert report_shape.shape({}, QUESTION)["sections"] == 0  # a failed run
    missing = REPORT.replace("Brine kelp [4].", "Not found: the sources say nothing of the kelp.")
    assert report_shape.shape({"report": missing, "sources": SOURCES}, QUESTION)["not_found"] is True


def test_the_summary_gives_medians_and_counts_reports_not_sections():
    rows = [
        {"sections": 5, "words": 700, "sources": 9, "empty_sections": 2, "thin_sections": 1, "not_found": True},
        {"sections": 3, "words": 200, "sources": 2, "article_sections": 3, "shared_sentences": 1},
        {"sections": 4, "words": 400, "sources": 4, "empty_sections": 1, "thin_sections": 2},
    ]
    s = report_shape.summarize(rows)
    assert (s["median_sections"], s["median_words"], s["median_sources"]) == (4, 400, 4)
    assert s["empty_reports_n"] == 2 and s["empty_sections_n"] == 3  # reports with one, and the sections
    assert (s["article_sections_n"], s["shared_sentences_n"], s["thin_sections_n"]) == (3, 1, 3)
    assert s["not_found_n"] == 1 and s["sections_n"] == 12


def test_the_run_prints_and_writes_the_shape_of_broad_and_deep_reports(monkeypatch, tmp_path, capsys):
    def research(q, context, mode):  # every question gets the invented report
        return {"report": REPORT, "sources": SOURCES}

    monkeypatch.setattr(subject_check, "research", research)
    out = tmp_path / "eval.json"
    argv = ["--only", "generated", "--seed", "1001", "--generated-count", "14", "--generated-deep", "1"]
    assert eval_run.main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    table = printed.split("| sentences in two sections |")[1].split("\n\n")[0].splitlines()[2:]
    runs = {tuple(c.strip() for c in line.split("|")[1:3]) for line in table}
    # broad on both graphs and the deep comparison; not the iterative graph's other kinds
    assert runs == {("iterative, seed 1001", "broad"), ("deep, seed 1001", "broad"), ("deep, seed 1001", "compare")}
    data = json.loads(out.read_text(encoding="utf-8"))
    broad = data["generated"]["iterative, seed 1001"]["broad"]
    assert broad["median_sections"] == 5 and broad["thin_sections_n"] == 3 * broad["questions"]
    assert broad["empty_reports_n"] == broad["questions"]
    # the generated questions do not name the Quillon moss: its section counts too
    assert all(r["article_sections"] == 3 for rs in data["generated_rows"].values() for r in rs)


def test_the_run_prints_and_writes_the_shape_of_the_hand_written_deep_reports(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(subject_check, "research", lambda q, context, mode: {"report": REPORT, "sources": SOURCES})
    out = tmp_path / "eval.json"
    assert eval_run.main(["--only", "coverage", "--limit", "1", "--deep-limit", "2", "--json", str(out)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| deep | hand-written |"))
    words = report_shape.words(REPORT.split("\n## Sources")[0])
    assert [c.strip() for c in line.split("|")[3:10]] == ["2", f"5 / {words} / 4", "6", "2", "6 (10)", "0", "2"]
    shape = json.loads(out.read_text(encoding="utf-8"))["summary"]["deep"]["shape"]
    assert shape["thin_sections_n"] == 6 and shape["empty_reports_n"] == 2
