"""`layer_research`: one section of a dependent outline, started once the sections it depends
on have finished their research.

The section gets its dependencies' findings (`deepresearch.sections.dependencies.seed`): their best sources,
numbered as its own first sources so it can cite them, and a short cited text of what they
found, which its prompts show with its notes. A section that others depend on is only
researched here: its writing runs in the next layer's step (`layer_write`), next to the
research of the sections that need it, which need its findings, not its prose. A section
nothing depends on is researched and written here at once. Each keeps to the budget share
fixed before the fan-out; a failure is contained as for parallel sections.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.events import emit, redact
from deepresearch.report.grounding import extract_sentences
from deepresearch.research.compose import pick_sources, rank_sources
from deepresearch.sections.dependencies import FINDINGS_SENTENCES, FINDINGS_SOURCES
from deepresearch.sections.run import (
    complete,
    run_section,
    section_context,
    section_gate,
    section_input,
    section_result,
)
from deepresearch.sections.tasks import TaskNode
from deepresearch.state.deep import DeepState, LayerTask
from deepresearch.state.iterative import IterativeState
from deepresearch.store import full_text

RESEARCH_KEYS = (
    "question",
    "section",
    "concepts",
    "covered",
    "evidence",
    "observations",
    "queries_done",
    "iteration",
    "usage",
    "stopped_by",
    "errors",
    "asked",
    "prior",
)


def summarize(research: dict[str, Any]) -> dict[str, Any]:
    """What a researched section passes on: its best sources (the best of each of its
    concepts, else the most relevant), the sentences of each that best answer its question,
    and its latest note."""
    question = research.get("question", "")
    picked = pick_sources(research, rank_sources(question, research.get("evidence") or []))
    items = []
    for s, focus in picked[:FINDINGS_SOURCES]:
        sentences = extract_sentences(
            full_text(s), f"{question} {focus}", limit=FINDINGS_SENTENCES, skip_title=s["title"]
        )
        items.append(
            {
                "source": {k: s[k] for k in ("key", "title", "url", "backend", "snippet", "text_ns") if k in s},
                "sentences": sentences,
            }
        )
    notes = research.get("observations") or []
    return {"items": items, "note": notes[-1][:400] if notes else ""}


def make_layer_research(
    research_graph: CompiledStateGraph[IterativeState, Context, Any, Any],
    section_graph: CompiledStateGraph[IterativeState, Context, Any, Any],
) -> TaskNode[LayerTask]:
    """`research_graph` ends before the writer; `section_graph` researches and writes."""

    def layer_research(state: LayerTask, runtime: Runtime[Context] | None = None) -> DeepState:
        ctx = get_context(runtime)
        with section_gate(ctx.section_concurrency):
            return _research(research_graph if state.get("dependents") else section_graph, state, ctx)

    return layer_research


def _research(graph: CompiledStateGraph[IterativeState, Context, Any, Any], task: LayerTask, ctx: Context) -> DeepState:
    index, title = task["index"], task["title"]
    split = bool(task.get("dependents"))
    emit(
        "section_started",
        index=index,
        title=title,
        budget=task["budget"],
        layer=task.get("layer", 0),
        depends_on=task.get("depends_on", []),
    )
    started = time.monotonic()
    inp = {**section_input(task), "evidence": task.get("evidence") or [], "prior": task.get("prior") or ""}

    def researched(writing: dict[str, Any]) -> None:  # a section written here: its research ends as its writing starts
        emit("section_researched", index=index, title=title, sources=writing.get("sources"), status="done")

    last, reason = run_section(graph, inp, section_context(ctx, task), index, on_writing=researched)
    seconds = time.monotonic() - started
    if not split or reason:  # written here (or failed): the section is finished
        result = section_result(task, last, reason, seconds)
        complete(result)
        update: DeepState = {"section_results": [result]}
        if split:  # its dependents go on without it, and say so
            update["section_findings"] = [{"index": index, "status": "failed", "reason": result["reason"]}]
        return update
    sources = len(last.get("evidence") or [])
    broken = last.get("stopped_by") == "error"  # a model call failed for good: its sources are passed on
    why = "; ".join(f"{x['node']}: {x['cause']}" for x in last.get("errors", [])) or "model call failed"
    emit("section_researched", index=index, title=title, sources=sources, status="failed" if broken else "done")
    return {
        "section_findings": [
            {
                "index": index,
                "status": "failed" if broken else "done",
                "reason": redact(why)[:300] if broken else None,
                "seconds": round(seconds, 3),
                "summary": summarize(last),
                "failed_deps": task.get("failed_deps") or [],
                "research": {k: last[k] for k in RESEARCH_KEYS if k in last},
            }
        ]
    }
