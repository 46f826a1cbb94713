"""Answer accuracy: does the report say the answer?

Each question of `questions.json`'s `answers` set has the short strings (a year, a name, a
place) that its answer states; a report answers when it contains every one of them (case and
accents ignored). Beside it, a search box: the first three sentences of the top 3 and top 5
articles of one query of the raw question in the encyclopedia's own search (BM25 and meaning
fused), and how many words that is.

Every set also reports how the research loop ran (`loop`): the iterations a run used (the result's
`usage`) and whether it stopped with an asked thing unanswered (the result's `unanswered`: the
asked things the sources retrieved did not answer).
"""

from __future__ import annotations

import re
import statistics

from deepresearch.report.grounding import source_sentences
from deepresearch.text.words import fold

KINDS = ("fact", "bridge", "paraphrase", "compare")


def contains(text: str, answers: list[str]) -> bool:
    low = fold(" ".join(text.split()))
    return all(fold(a) in low for a in answers)


def report_body(report: str) -> str:
    """The report without its Sources list and verification line (what a reader reads as the answer)."""
    return report.split("\n## Sources")[0]


def answer_paragraph(report: str) -> str:
    """The text under `## Answer`, up to the next `##` heading (empty when the report has none)."""
    m = re.search(r"^## Answer\s*$(.*?)(?=^## |\Z)", report, re.M | re.S)
    return m.group(1) if m else ""


def words(text: str) -> int:
    return len(re.findall(r"[^\W_]+", text))


def search_box(search, question: str, k: int) -> str:
    """The first three sentences of each of the top `k` articles of one query of the question."""
    parts = []
    for r in search.search(question, k):
        sents = source_sentences(r.text, 10_000) or [r.text]
        parts.append(" ".join(sents[:3]))
    return "\n".join(parts)


def loop(result: dict) -> dict:
    """How the run's loop went: the iterations it used (None when the run failed) and how many asked
    things it left unanswered."""
    return {
        "iterations": (result.get("usage") or {}).get("iterations"),
        "unanswered": len(result.get("unanswered") or []),
    }


def loop_summary(rows: list[dict]) -> dict:
    """The rows' mean iterations and how many runs stopped with an asked thing unanswered."""
    used = [r["iterations"] for r in rows if r.get("iterations") is not None]
    return {
        "iterations": statistics.mean(used) if used else None,
        "stopped_unanswered": sum(1 for r in rows if r.get("unanswered")),
    }


def loop_cells(s: dict) -> str:
    """The two table cells of loop_summary: mean iterations, runs stopped with an asked thing unanswered."""
    it = s.get("iterations")
    return f"{'-' if it is None else f'{it:.1f}'} | {s.get('stopped_unanswered', 0)}"


def score(result: dict, item: dict, search) -> dict:
    body = report_body(result.get("report", ""))
    top3, top5 = search_box(search, item["q"], 3), search_box(search, item["q"], 5)
    return {
        "answered": contains(body, item["answers"]),
        "in_answer": contains(answer_paragraph(result.get("report", "")), item["answers"]),
        "box3": contains(top3, item["answers"]),
        "box5": contains(top5, item["answers"]),
        "words": words(body),
        "box3_words": words(top3),
        "box5_words": words(top5),
        **loop(result),
    }


def summarize(rows: list[dict]) -> dict:
    def share(rs, key):
        return sum(bool(r[key]) for r in rs) / len(rs) if rs else 0.0

    out = {}
    for kind in KINDS + ("all",):
        rs = rows if kind == "all" else [r for r in rows if r["kind"] == kind]
        if not rs:
            continue
        out[kind] = {
            "questions": len(rs),
            "answered": share(rs, "answered"),
            "in_answer": share(rs, "in_answer"),
            "box3": share(rs, "box3"),
            "box5": share(rs, "box5"),
            "median_words": statistics.median(r["words"] for r in rs),
            "box3_words": statistics.median(r["box3_words"] for r in rs),
            "box5_words": statistics.median(r["box5_words"] for r in rs),
            "median_s": statistics.median(r["seconds"] for r in rs),
            **loop_summary(rs),
        }
    return out


def table(summaries: dict[str, dict]) -> str:
    lines = [
        "| graph | kind | questions | answered | in `## Answer` | search box top 3 / top 5 "
        "| median words (report; box 3 / 5) | iterations (mean) | stopped unanswered | median s |",
        "|" + "---|" * 10,
    ]
    for graph, by_kind in summaries.items():
        for kind, s in by_kind.items():
            lines.append(
                f"| {graph} | {kind} | {s['questions']} | {s['answered']:.2f} | {s['in_answer']:.2f} | {s['box3']:.2f} / "
                f"{s['box5']:.2f} | {s['median_words']:.0f} ({s['box3_words']:.0f} / {s['box5_words']:.0f}) "
                f"| {loop_cells(s)} | {s['median_s']:.1f} |"
            )
    return "\n".join(lines)
