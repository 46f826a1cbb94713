"""The measures of generated questions (eval/generate.py), per kind, seed and graph.

answered    every expected string in the report's body (fact, bridge, described; compare: one fact of each)
in answer   the same inside the report's `## Answer` paragraph
box 3 / 5   the same in a search box: the first three sentences of the top 3 / top 5 articles of the
            encyclopedia's own search (BM25 and meaning fused)
            of the raw question (eval/answers.py)
cited all   compare: every compared thing's article among the cited sources
related     broad: the share of the related articles (the entries the subject's text names) cited,
            beside the share among the top 5 / top 10 articles of that search for the raw question
not found   broad: reports that say "Not found"
iterations  the iterations a run used, their mean (eval/answers.py's `loop`)
stopped unanswered  runs that stopped with an asked thing unanswered (the result's `unanswered`)
sections    `##` sections besides the answer (or overview), comparison, introduction, conclusion and
            sources; empty ones hold no sentence
report shape  broad questions and the deep graph's rows: eval/report_shape.py's measures (sections
            named after one article, sentences in two sections, sections with fewer than two sources,
            reports with "Not found" or an empty section) in a table of their own
"""

from __future__ import annotations

import statistics

import answers as answer_eval
import report_shape
from generate import KINDS

SHORT = ("fact", "bridge", "described", "compare")


def score(result: dict, item: dict, search) -> dict:
    cited = {s.get("title") for s in result.get("sources", [])}
    row = {
        **report_shape.shape(result, item["q"]),
        "llm_calls": result.get("usage", {}).get("llm_calls", 0),
        **answer_eval.loop(result),
    }
    if item.get("answers"):
        row.update(answer_eval.score(result, item, search))
    if item.get("compare"):
        row["cited_all"] = all(t in cited for t in item["compare"])
    if item.get("related"):
        top = [r.title for r in search.search(item["q"], 10)]
        related = item["related"]
        row["related"] = sum(t in cited for t in related) / len(related)
        row["related_box5"] = sum(t in top[:5] for t in related) / len(related)
        row["related_box10"] = sum(t in top for t in related) / len(related)
    return row


def _share(rows: list[dict], key: str) -> float | None:
    rs = [r for r in rows if key in r]
    return sum(float(r[key]) for r in rs) / len(rs) if rs else None


def summarize(rows: list[dict]) -> dict:
    """Per kind (and `short`: fact, bridge, described and compare's facts together)."""
    out = {}
    groups = {k: [r for r in rows if r["kind"] == k] for k in KINDS}
    groups["short"] = [r for r in rows if r["kind"] in SHORT and "answered" in r]
    for kind, rs in groups.items():
        if not rs:
            continue
        s = {
            "questions": len(rs),
            "median_s": statistics.median(r["seconds"] for r in rs),
            "errors": sum(1 for r in rs if r.get("error")),
        }
        for key in (
            "answered",
            "in_answer",
            "box3",
            "box5",
            "cited_all",
            "related",
            "related_box5",
            "related_box10",
            "not_found",
        ):
            if kind == "short" and key == "cited_all":
                continue  # the short answers' group: answers only
            if (v := _share(rs, key)) is not None:
                s[key] = v
        s.update({k: v for k, v in report_shape.summarize(rs).items() if k != "questions"})
        s["median_llm_calls"] = statistics.median(r.get("llm_calls", 0) for r in rs)
        s["facts_asked"] = sum(1 for r in rs if "answered" in r)
        s.update(answer_eval.loop_summary(rs))
        out[kind] = s
    return out


def _f(s: dict, key: str, fmt: str = "{:.2f}") -> str:
    return fmt.format(s[key]) if key in s else "-"


def table(summaries: dict[str, dict]) -> str:
    """One row per (label, kind): label is "graph, seed N"."""
    lines = [
        "| run | kind | questions | answered | in `## Answer` | search box top 3 / 5 | compared all cited "
        "| related cited (box 5 / 10) | Not found | median sources / words | median sections (empty) "
        "| iterations (mean) | stopped unanswered | median s (model calls) |",
        "|" + "---|" * 14,
    ]
    for label, by_kind in summaries.items():
        for kind, s in by_kind.items():
            box = f"{_f(s, 'box3')} / {_f(s, 'box5')}" if "box3" in s else "-"
            rel = f"{_f(s, 'related')} ({_f(s, 'related_box5')} / {_f(s, 'related_box10')})" if "related" in s else "-"
            answered = f"{_f(s, 'answered')}" + (
                f" (of {s['facts_asked']})" if kind == "compare" and "answered" in s else ""
            )
            lines.append(
                f"| {label} | {kind} | {s['questions']} | {answered} | {_f(s, 'in_answer')} | {box} | "
                f"{_f(s, 'cited_all')} | {rel} | {s['not_found_n']} | {s['median_sources']:.0f} / {s['median_words']:.0f} | "
                f"{s['median_sections']:.0f} ({s['empty_sections_n']}) | {answer_eval.loop_cells(s)} "
                f"| {s['median_s']:.1f} ({s['median_llm_calls']:.0f}) |"
            )
    return "\n".join(lines)


def shape_table(summaries: dict[str, dict]) -> str:
    """report_shape's table for the broad questions and the deep graph's rows (its short answers aside)."""
    rows = [
        (label, kind, s)
        for label, by_kind in summaries.items()
        for kind, s in by_kind.items()
        if kind == "broad" or (label.startswith("deep") and kind != "short")
    ]
    return report_shape.table(rows) if rows else ""
