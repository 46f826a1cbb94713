"""`collect_drafts`: the fan-in. Orders the sections as the outline does, merges their
sources into one registry (the same URL gets one number), and rewrites each draft's
citations into the global numbers."""

from __future__ import annotations

import re
import time
from typing import Any

from langgraph.runtime import Runtime

from deepresearch.config import Context
from deepresearch.llm.budget import add_usage
from deepresearch.research.compose import without_partial_note
from deepresearch.state.deep import DeepState
from deepresearch.text.citations import CITE, cited_numbers, strip_sources_section


def collect_drafts(state: DeepState, runtime: Runtime[Context] | None = None) -> DeepState:
    latest: dict[int, dict[str, Any]] = {}
    for r in state.get("section_results", []):
        latest[r["index"]] = r  # a re-run section replaces its earlier result
    results = [latest[i] for i in sorted(latest)]

    evidence: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    drafts: list[dict[str, Any]] = []
    removed = list(state.get("removed", []))
    usage = add_usage(state.get("usage"), None)
    section_seconds = 0.0
    for r in results:
        local: dict[int, int] = {}
        for s in r["evidence"]:
            if s["key"] not in by_key:
                by_key[s["key"]] = {**s, "id": len(evidence) + 1}
                evidence.append(by_key[s["key"]])
            if s.get("section"):  # the sections that retrieved it (a source handed on keeps its finder)
                found = by_key[s["key"]].setdefault("found_by", [])
                if s["section"] not in found:
                    found.append(s["section"])
            local[int(s["id"])] = by_key[s["key"]]["id"]

        def renumber(m: re.Match[str], local: dict[int, int] = local, title: str = r["title"]) -> str:
            out = []
            for n in (int(x) for x in re.split(r"[,;]", m.group(1))):
                if n in local:
                    out.append(f"[{local[n]}]")
                else:
                    removed.append(
                        {"kind": "citation", "value": f"[{n}]", "reason": f"section '{title}' cited no source {n}"}
                    )
            return "".join(out)

        # the writer's partial-report note goes: the synthesizer says it once, for the report
        text = without_partial_note(CITE.sub(renumber, strip_sources_section(r["draft"] or "")))
        cited = set(cited_numbers(text))
        drafts.append(
            {
                "index": r["index"],
                "title": r["title"],
                "status": r["status"],
                "reason": r["reason"],
                "stopped_by": r["stopped_by"],
                "text": text,
                "source_keys": [s["key"] for s in evidence if s["id"] in cited],
            }
        )
        section_usage = r["usage"]
        usage = add_usage(usage, {k: v for k, v in section_usage.items() if k != "seconds"})
        section_seconds += section_usage.get("seconds", 0.0)
    # sections ran in parallel: the phase took its wall time (bounded by the sum, for resumed runs)
    wall = time.time() - state.get("fanout_at", time.time())
    usage["seconds"] = round(usage["seconds"] + max(0.0, min(wall, section_seconds)), 3)

    reasons = [d["stopped_by"] for d in drafts if d["status"] == "done" and d["stopped_by"] != "complete"]
    planned = (
        state.get("stopped_by")
        if state.get("stopped_by") in ("max_seconds", "max_tokens", "max_cost", "stopped")
        else None
    )
    if planned == "stopped":  # the person stopped the run (the page's Stop): the sections done are written
        stopped_by = planned
    elif all(d["status"] == "failed" for d in drafts):
        stopped_by = "error"
    else:  # a budget that cut the planner's call stopped the run too
        stopped_by = reasons[0] if reasons else planned or "complete"
    errors = list(state.get("errors", []))
    for r in results:
        errors += [{**e, "section": r["index"]} for e in r.get("errors", [])]
    return {
        "evidence": evidence,
        "drafts": drafts,
        "usage": usage,
        "stopped_by": stopped_by,
        "removed": removed,
        "errors": errors,
    }
