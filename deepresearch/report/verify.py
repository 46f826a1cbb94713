"""Verifying a draft into the checked report: citations of unknown sources removed, links
defused, every citation scored against the cited source's retrieved text (offline overlap, or a
model judgement with `verify_with_model`), sources renumbered and listed under `## Sources`.

Node `source_tracer` runs it on a finished draft; an edit of a stored report runs it again.
"""

from __future__ import annotations

import re
from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepresearch.language import translated_summary
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.documents import head, reference_markdown, shown_path
from deepresearch.report.evidence import DATA_RULE, source_block
from deepresearch.report.subjects import subject_change
from deepresearch.store import full_text
from deepresearch.text.citations import (
    CITE,
    SOURCES_HEADING,
    UNVERIFIED,
    cited_numbers,
    close_gaps,
    each_cited_sentence,
    normalize_citations,
    strip_sources_section,
    support,
    verdict,
)
from deepresearch.text.safe import defuse_body, inline_text, reference_kind, render_reference, title_line
from deepresearch.text.urls import normalize_url
from deepresearch.tools.base import identifiers_text


class SupportJudgement(BaseModel):
    verdict: Literal["supported", "partial", "unsupported"]
    span: str = Field(default="", description="The source's words that support the claim.")


JUDGE_PROMPT = """Claim: {sentence}

{block}

Does the source support the claim? Answer supported, partial or unsupported, and quote the
source's supporting words (empty if none)."""


JUDGE_SCORE = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}


def judge(ctx, budget, sentence: str, source: dict) -> tuple[float, str, str] | None:
    prompt = JUDGE_PROMPT.format(sentence=sentence, block=source_block(source, full_text(source)[:3000]))
    try:
        j = structured(
            ctx,
            budget,
            [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
            SupportJudgement,
            node="source_tracer",
            max_output=200,
            for_writer=True,
        )
    except (BudgetExhausted, ModelCallError):
        return None
    return JUDGE_SCORE[j.verdict], j.verdict, j.span


def verify_draft(
    draft: str, evidence: list[dict], ctx, budget: Budget | None = None, language: str | None = None, keep_images=()
) -> dict:
    """The checked report and its citation records (pure apart from optional model judging).
    `keep_images`: the report's own charts (an edited report keeps them)."""
    by_id = {int(s["id"]): s for s in evidence}
    # only web sources can be linked to; files and MCP references are cited by number
    id_of_url = {normalize_url(s["url"]): int(s["id"]) for s in evidence if _kind(s) == "web"}
    report = strip_sources_section(draft).rstrip()
    report = SOURCES_HEADING.sub("", report)  # the one Sources heading is the tracer's own
    # no link, image, raw HTML or URL-like text in the body: a retrieved URL becomes a citation
    report, removed = defuse_body(report, id_of_url, normalize_url, keep_images)
    report, more = normalize_citations(report, id_of_url)
    removed += more
    report = re.sub(r"\n{3,}", "\n\n", report)

    # 1. citations of sources that do not exist
    def keep_known(m: re.Match) -> str:
        nums = [int(n) for n in re.split(r"[,;]", m.group(1))]
        good = [n for n in nums if n in by_id]
        for n in nums:
            if n not in by_id:
                removed.append({"kind": "citation", "value": f"[{n}]", "reason": f"no source {n} was retrieved"})
        return "".join(f"[{n}]" for n in good)

    report = close_gaps(CITE.sub(keep_known, report))

    # 3. renumber in order of first citation
    order: dict[int, int] = {}
    for n in cited_numbers(report):
        order.setdefault(n, len(order) + 1)
    report = CITE.sub(lambda m: "".join(f"[{order[int(n)]}]" for n in re.split(r"[,;]", m.group(1))), report)
    final = {new: by_id[old] for old, new in order.items()}

    # 4. score every citation, sentence by sentence (line by line: headings and list items stay put)
    citations: list[dict] = []

    def check(sent: str) -> str:
        for n in dict.fromkeys(cited_numbers(sent)):
            record = score_citation(ctx, budget, sent, n, final[n])
            citations.append(record)
            if record["verdict"] == "unsupported":
                sent = sent.replace(f"[{n}]", f"[{n}]{UNVERIFIED}")
        return sent

    report = each_cited_sentence(report, check)

    sources = [source_entry(n, s) for n, s in final.items()]
    report, summary = render_report(report, sources, citations, removed, language)
    return {
        "report": report,
        "sources": sources,
        "citations": citations,
        "removed": removed,
        "verification": summary,
        "key_ids": {s.get("key"): n for n, s in final.items()},
    }


def score_citation(ctx, budget: Budget | None, sent: str, n: int, source: dict) -> dict:
    """The citation record of `[n]` in `sent`: the offline overlap score against the source's
    retrieved text, or a model judgement when `verify_with_model` is set.
    A sentence quoting the source under a subject the source does not give it is unsupported
    whatever its words (report/subjects.py): "It can be ..." said of another thing."""
    text = full_text(source)
    changed = subject_change(sent, text)
    if changed:
        return {
            "sentence": CITE.sub("", sent).strip(),
            "source_id": n,
            "score": 0.0,
            "verdict": "unsupported",
            "span": changed["source_sentence"],
            "reason": f"the source does not say this of {changed['subject']!r}",
        }
    judged = judge(ctx, budget, sent, source) if ctx.verify_with_model and budget else None
    if judged:
        score, v, span = judged
    else:
        score, span = support(sent, text)
        v = verdict(score, ctx.support_threshold)
    return {"sentence": CITE.sub("", sent).strip(), "source_id": n, "score": score, "verdict": v, "span": span}


def source_entry(n: int, s: dict) -> dict:
    """A source of the report, numbered `n`, as the result lists it."""
    return {
        "id": n,
        "title": s["title"],
        "url": s["url"],
        "backend": s.get("backend"),
        # the path as the Sources list shows it (deepresearch.report.documents): one form
        **({"file": shown_path(s["url"])} if _kind(s) == "file" else {}),
        **({"ids": s["ids"]} if s.get("ids") else {}),
        **({"meta": s["meta"]} if s.get("meta") else {}),
    }


def render_report(
    body: str, sources: list[dict], citations: list[dict], removed: list[dict], language: str | None
) -> tuple[str, str]:
    """The report: `body`, the `## Sources` list and the verification line; and the line's
    English text."""
    counts = {v: sum(1 for c in citations if c["verdict"] == v) for v in ("supported", "partial", "unsupported")}
    summary = (
        f"Verification: {len(citations)} citations checked against the retrieved text: "
        f"{counts['supported']} supported, {counts['partial']} partial, {counts['unsupported']} unverified"
    )
    if removed:
        kinds = {k: sum(1 for r in removed if r["kind"] == k) for k in ("citation", "url", "image")}
        summary += (
            f"; removed {kinds['citation']} citation(s) of unknown sources and {kinds['url']} link(s) or URL(s)"
            + (f" and {kinds['image']} image(s)" if kinds["image"] else "")
        )
    summary += "."
    lines = [body, "", "## Sources", ""]
    lines += [_entry(s) for s in sources] or ["(no sources cited)"]
    if counts["unsupported"]:
        lines += ["", f"{UNVERIFIED}: the cited source does not clearly support that sentence."]
    lines += ["", f"_{translated_summary(language, len(citations), counts, removed) or summary}_"]
    return "\n".join(lines) + "\n", summary


def _kind(source: dict) -> str | None:
    return reference_kind(source.get("url", ""), source.get("backend"))


def _entry(s: dict) -> str:
    """One line of the Sources list: every field is data, escaped; only a web URL links. A
    document names its authors, year and title, then its file and page (documents.py)."""
    ids = f" ({inline_text(identifiers_text(s['ids']), 200)})" if s.get("ids") else ""
    if _kind(s) == "file":
        before = head(s)
        return f"[{s['id']}] " + (f"{inline_text(before, 200)} — " if before else "") + reference_markdown(s) + ids
    return f"[{s['id']}] {inline_text(title_line(s['title'], 200))} — {render_reference(s['url'], _kind(s))}{ids}"


def section_sources(drafts: list[dict], sources: list[dict], key_ids: dict) -> list[dict]:
    """Deep runs: each section with the report's sources it cites, in the report's numbers
    (`key_ids`: source key -> report number)."""
    by_id = {s["id"]: s for s in sources}
    return [
        {
            "title": d["title"],
            "status": d["status"],
            "stopped_by": d["stopped_by"],
            **({"reason": d["reason"]} if d.get("reason") else {}),
            "sources": [by_id[key_ids[k]] for k in d["source_keys"] if key_ids.get(k) in by_id],
        }
        for d in drafts
    ]
