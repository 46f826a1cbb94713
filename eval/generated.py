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
sections    deep: `##` sections besides the answer, comparison, introduction, conclusion and sources;
            empty ones hold no sentence
"""

from __future__ import annotations

import re
import statistics

import answers as answer_eval
from generate import KINDS

FRAME = {"answer", "sources", "comparison", "introduction", "conclusion"}
SHORT = ("fact", "bridge", "described", "compare")


def sections(report: str) -> list[str]:
    """The bodies of the report's own sections (the frame around them aside)."""
    body = answer_eval.report_body(report)
    parts = re.split(r"^## (.+)$", body, flags=re.M)
    return [text for head, text in zip(parts[1::2], parts[2::2]) if head.strip().lower() not in FRAME]


def empty(section: str) -> bool:
    """A section with no sentence of its own: fewer than five words once citations and the
    report's notes ("> Nothing new here", "> **Gap:**") are set aside ("Venus (Planet) [2]."),
    or the writer's "No sources were found". Numbers are words ("a population of 800,871")."""
    text = "\n".join(line for line in section.split("\n") if not line.lstrip().startswith(">"))
    text = re.sub(r"\[\d+\]", "", text)
    return len(re.findall(r"[^\W_]+", text)) < 5 or "No sources were found" in text


def score(result: dict, item: dict, search) -> dict:
    report = result.get("report", "")
    body = answer_eval.report_body(report)
    cited = {s.get("title") for s in result.get("sources", [])}
    row = {
        "sources": len(cited),
        "words": answer_eval.words(body),
        "not_found": "Not found" in body,
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
    secs = sections(report)
    row["sections"], row["empty_sections"] = len(secs), sum(empty(s) for s in secs)
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
        s["not_found_n"] = sum(1 for r in rs if r.get("not_found"))
        for key in ("sources", "words", "sections", "empty_sections", "llm_calls"):
            s[f"median_{key}"] = statistics.median(r.get(key, 0) for r in rs)
        s["empty_sections_n"] = sum(r.get("empty_sections", 0) for r in rs)
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
