"""Answer accuracy: does the report say the answer?

Each question of `questions.json`'s `answers` set has the short strings (a year, a name, a
place) that its answer states; a report answers when it contains every one of them (case and
accents ignored). Beside it, a search box: the first three sentences of the top 3 and top 5
articles of one query of the raw question in the encyclopedia's own search (BM25 and meaning
fused), and how many words that is.
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
        }
    return out


def table(summaries: dict[str, dict]) -> str:
    lines = [
        "| graph | kind | questions | answered | in `## Answer` | search box top 3 / top 5 "
        "| median words (report; box 3 / 5) | median s |",
        "|" + "---|" * 8,
    ]
    for graph, by_kind in summaries.items():
        for kind, s in by_kind.items():
            lines.append(
                f"| {graph} | {kind} | {s['questions']} | {s['answered']:.2f} | {s['in_answer']:.2f} | {s['box3']:.2f} / "
                f"{s['box5']:.2f} | {s['median_words']:.0f} ({s['box3_words']:.0f} / {s['box5_words']:.0f}) "
                f"| {s['median_s']:.1f} |"
            )
    return "\n".join(lines)
