"""The public set's measures (eval/public.py): the agent beside two baselines.

For each question, as the dataset wrote it and with two typos, per half (development, held out):
  answer in report     one of the answer strings in the report's body (whole words; case, accents ignored)
  in answer paragraph  the same inside the `## Answer` section (eval/answers.py), or the body's first
                       paragraph when the report has no such section
  gold cited           one of the gold articles (the entries holding the answer) among the cited sources
  BM25 top 3 / top 5   one BM25 query of the raw question: the answer in the first three sentences of the
                       top 3 / top 5 articles (eval/answers.py's search box), and a gold article among them
  hybrid top 3         the same with the search HYBRID names: any backend with .search(query, k)
  iterations           the iterations the run used (mean), and the runs that stopped with an asked thing
  stopped unanswered   unanswered (eval/answers.py's `loop`)

Rows are grouped per half and spelling, and (as asked) per half and dataset and per half and kind: "one
hop" (the entry the question names holds the answer) or "two hops" (an entry that entry names holds it).
The multi-hop set (eval/multihop_build.py) is measured the same way; all its questions are two hops.

Answers are matched as whole words, not as eval/answers.py's substrings: the public answers are short
("Euro", "IV", "span") and a substring would find them inside other words. Held-out questions are
never printed: their rows carry an id, so nobody tunes the research to them.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import answers as answer_eval
import public
from subject_check import row_fields

# The "hybrid top 3" baseline's search, named for the table: the encyclopedia ranked by words and
# meaning (the Context's default embeddings), where the BM25 rows rank by words alone.
HYBRID: tuple[str, Callable[[], Any]] = ("hybrid", lambda: _wiki("auto"))


def _wiki(embeddings: str = "none"):
    from deepresearch.tools import get_search

    return get_search("wiki", embeddings=embeddings)


def holds(text: str, aliases: list[str]) -> bool:
    """Whether the text states one of the answer strings as whole words."""
    low = public.fold(text)
    return any(re.search(r"(?<!\w)" + re.escape(public.fold(a)) + r"(?!\w)", low) for a in aliases)


def answer_part(report: str) -> str:
    """The report's answer: its `## Answer` section, else the body's first paragraph (headings and
    notes aside)."""
    if part := answer_eval.answer_paragraph(report):
        return part
    for para in re.split(r"\n\s*\n", answer_eval.report_body(report)):
        lines = [s for s in para.strip().split("\n") if s.strip() and not s.lstrip().startswith(("#", ">"))]
        if lines:
            return "\n".join(lines)
    return ""


def score(result: dict, item: dict) -> dict:
    report = result.get("report", "")
    body = answer_eval.report_body(report)
    cited = {s.get("title") for s in result.get("sources", [])}
    return {
        "answered": holds(body, item["answers"]),
        "in_answer": holds(answer_part(report), item["answers"]),
        "gold_cited": any(g in cited for g in item["gold"]),
        "words": answer_eval.words(body),
        **answer_eval.loop(result),
    }


def box(backend, item: dict, k: int) -> dict:
    """One query of the raw question: the answer in the top k's first sentences, a gold article in the top k."""
    titles = [r.title for r in backend.search(item["q"], k)]
    return {
        "answer": holds(answer_eval.search_box(backend, item["q"], k), item["answers"]),
        "gold": any(g in titles for g in item["gold"]),
    }


def baselines(item: dict, bm25, hybrid) -> dict:
    b3, b5, h3 = box(bm25, item, 3), box(bm25, item, 5), box(hybrid, item, 3)
    return {
        "bm25_3": b3["answer"],
        "bm25_5": b5["answer"],
        "bm25_gold_3": b3["gold"],
        "bm25_gold_5": b5["gold"],
        "hybrid_3": h3["answer"],
        "hybrid_gold_3": h3["gold"],
    }


def run(
    items: list[dict],
    context: dict | None,
    *,
    bm25=None,
    hybrid=None,
    research=None,
    log=sys.stderr,
    sink=None,
    label: str = "public",
) -> list[dict]:
    """Each item through the baselines and, with a context, the agent (the iterative graph); `label`
    names the set in the progress lines."""
    bm25 = bm25 or _wiki()
    hybrid = hybrid or HYBRID[1]()
    if research is None and context is not None:
        from subject_check import research  # the report's subjects checked too (eval/subject_check.py)
    rows = []
    for i, item in enumerate(items, 1):
        row = {
            "id": item["id"],
            "dataset": item["dataset"],
            "half": item["half"],
            "spelling": item["spelling"],
            "hop": item["hop"],
            **baselines(item, bm25, hybrid),
        }
        if item["half"] == "dev":
            row["q"] = item["q"]
        if context is not None:
            started = time.monotonic()
            try:
                result, error = research(item["q"], context, mode="iterative"), None
            except Exception as e:  # noqa: BLE001 - a failed question counts as not answered, and is shown
                result, error = {}, type(e).__name__ if item["half"] != "dev" else f"{type(e).__name__}: {e}"
            row.update(score(result, item), seconds=round(time.monotonic() - started, 1), error=error)
            row.update(row_fields(result, hidden=item["half"] != "dev"))
        rows.append(row)
        if sink:
            sink(row)
        shown = item["q"][:70] if item["half"] == "dev" else f"(held out {item['id']})"
        verdict = ("ANSWERED" if row["answered"] else "missed  ") + f" {row['seconds']:5.1f}s" if context else ""
        print(
            f"[{label} {item['half']} {item['spelling']} {i}/{len(items)}] {verdict} bm25@5 "
            f"{'yes' if row['bm25_5'] else 'no '} {shown}" + (f"  ERROR {row['error']}" if row.get("error") else ""),
            file=log,
        )
    return rows


def run_all(
    data: dict,
    context: dict | None,
    *,
    halves=public.HALVES,
    typos: bool = True,
    limit: int | None = None,
    log=sys.stderr,
    sink=None,
    **kw,
) -> list[dict]:
    """Every half, as asked and (with `typos`) typo'd; `limit`: questions at most per half."""
    rows = []
    for half in halves:
        for typo in (False, True) if typos else (False,):
            rows += run(public.items(data, half, typos=typo)[:limit], context, log=log, sink=sink, **kw)
    return rows


KEYS = (
    "answered",
    "in_answer",
    "gold_cited",
    "bm25_3",
    "bm25_5",
    "bm25_gold_3",
    "bm25_gold_5",
    "hybrid_3",
    "hybrid_gold_3",
)


def kind(row: dict) -> str:
    """The kind of a public question: how many hops the encyclopedia needs for it."""
    return "two hops" if row.get("hop") else "one hop"


def summarize(rows: list[dict]) -> dict[str, dict]:
    """Per half and spelling, and (as asked) per half and dataset and per half and kind: the share of
    each measure, and how the loop ran."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(f"{r['half']}, {r['spelling']}", []).append(r)
        if r["spelling"] == "as asked":
            groups.setdefault(f"{r['half']}, {r['dataset']}", []).append(r)
            groups.setdefault(f"{r['half']}, {kind(r)}", []).append(r)
    out = {}
    for label, rs in groups.items():
        s: dict = {"questions": len(rs)}
        for key in KEYS:
            if all(key in r for r in rs):
                s[key] = sum(bool(r[key]) for r in rs) / len(rs)
        if all("seconds" in r for r in rs):
            s["median_s"] = statistics.median(r["seconds"] for r in rs)
            s["errors"] = sum(1 for r in rs if r.get("error"))
            s.update(answer_eval.loop_summary(rs))
        out[label] = s
    return out


def _f(s: dict, key: str) -> str:
    return f"{s[key]:.2f}" if key in s else "-"


def table(summaries: dict[str, dict], hybrid_label: str = HYBRID[0], name: str = "public set") -> str:
    lines = [
        f"| {name} | questions | answer in report | in answer paragraph | gold cited "
        f"| BM25 top 3 / 5: answer | BM25 top 3 / 5: gold | hybrid top 3 ({hybrid_label}): answer / gold "
        f"| iterations (mean) | stopped unanswered | median s |",
        "|" + "---|" * 11,
    ]
    for label, s in summaries.items():
        seconds = f"{s['median_s']:.1f}" if "median_s" in s else "-"
        loop = answer_eval.loop_cells(s) if "median_s" in s else "- | -"
        lines.append(
            f"| {label} | {s['questions']} | {_f(s, 'answered')} | {_f(s, 'in_answer')} | {_f(s, 'gold_cited')} "
            f"| {_f(s, 'bm25_3')} / {_f(s, 'bm25_5')} | {_f(s, 'bm25_gold_3')} / {_f(s, 'bm25_gold_5')} "
            f"| {_f(s, 'hybrid_3')} / {_f(s, 'hybrid_gold_3')} | {loop} | {seconds} |"
        )
    return "\n".join(lines)
