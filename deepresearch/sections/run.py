"""Running one section of a deep report: its budget share as the section's context, its loop
streamed with its events tagged by the section's index, at most `section_concurrency`
sections of a run at once, and the section's result as `collect_drafts` reads it. A section
whose model or search calls fail for good is recorded as failed with the reason: the other
sections go on."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.errors import GraphBubbleUp

from deepresearch.brief import section_brief
from deepresearch.events import emit, forwarded_to, redact
from deepresearch.llm.budget import add_usage
from deepresearch.llm.retries import describe
from deepresearch.text.safe import md_text

# The loop runs one node at a time, in the section's thread; its pool (checkpoint writes, a
# step of several tasks) is its own: never inherit a parent's max_concurrency of 1.
SUBGRAPH_CONFIG = {"max_concurrency": 4}


# One gate per run (thread) and limit, alive while a section of the run holds or waits on it:
# a server that executes run after run keeps none of the finished ones.
_gates: weakref.WeakValueDictionary[tuple, threading.BoundedSemaphore] = weakref.WeakValueDictionary()


_gates_lock = threading.Lock()


def section_gate(limit: int | None):
    """At most `limit` sections of one run at once. (LangGraph's `max_concurrency` cannot
    do this alone: with a sync stream its waiting task takes a slot of the same pool, so a
    limit of 1 deadlocks and N lets N-1 or N sections run.)"""
    if not limit:
        return nullcontext()
    thread = (get_config().get("configurable") or {}).get("thread_id")
    with _gates_lock:
        gate = _gates.get((thread, limit))
        if gate is None:
            gate = _gates[(thread, limit)] = threading.BoundedSemaphore(limit)
        return gate


def section_input(task: Mapping[str, Any]) -> dict[str, Any]:
    """The section loop's input for a `SectionTask`."""
    question = f"{task['key_question']} (in: {task['report_title']})"
    return {
        "question": question,
        "section": task["title"],
        "concepts": task.get("concepts") or [],
        "brief": section_brief(question, task.get("brief")),
        "language": task.get("language"),
    }


def section_context(ctx, task: Mapping[str, Any]):
    share = task["budget"]
    return replace(
        ctx,
        max_tokens=share["max_tokens"],
        max_seconds=share["max_seconds"],
        mode="iterative",
        **({"max_cost": share["max_cost"] or 1e-9} if share.get("max_cost") is not None else {}),
    )


def run_section(graph, inp: dict, ctx, index: int, on_writing=None) -> tuple[dict, str | None]:
    """Stream one section's graph, forwarding its events tagged with the section's index:
    (its final state, why it failed or None)."""
    try:
        writer = get_stream_writer()
    except Exception:  # noqa: BLE001 - not streaming
        writer = None
    last: dict = {}

    def forward(event: dict) -> None:
        if event.get("type") == "writing" and on_writing:
            on_writing(event)
        if writer is not None:
            writer({**event, "section": index})

    try:
        # The events reach the parent's stream as they are emitted, not through the loop's own
        # custom stream: streaming that would run every step in another thread of a pool made
        # for this call, with a second thread waiting on the stream (bench/README.md, "Sections'
        # events are forwarded, not streamed").
        # The loop saves no checkpoint while it runs (durability "exit": a checkpoint after each
        # of its steps was about a fifth of the section phase's CPU, and under one GIL that work
        # queues the sections' calls); a section cut short by a crash is researched again.
        with forwarded_to(forward):
            for chunk in graph.stream(inp, SUBGRAPH_CONFIG, context=ctx, stream_mode="values", durability="exit"):
                last = chunk
        save_final_state(graph, last)
    except GraphBubbleUp:
        raise
    except Exception as e:  # noqa: BLE001 - one section's failure must not sink the others
        return last, describe(e)
    return last, None


def save_final_state(graph, values: dict) -> None:
    """Save the finished section's state as its loop's checkpoint, before the section reports
    done: the parent saves the section's result a moment later, in the background, and a run
    killed in between resumes this loop at its end instead of researching it again."""
    if not values:
        return
    try:
        graph.update_state(get_config(), values, as_node="writer")  # writer -> END: nothing left to run
    except ValueError as e:  # a run without a checkpointer keeps nothing (LangGraph: "No checkpointer set")
        if "checkpointer" not in str(e).lower():
            raise


def section_result(task: Mapping[str, Any], last: Mapping[str, Any], reason: str | None, seconds: float) -> dict:
    """The section's entry of `section_results`, as a parallel section's (collect_drafts reads it)."""
    if reason is None and last.get("stopped_by") == "error":
        failed_nodes = {x["node"] for x in last.get("errors", [])}
        if "writer" in failed_nodes or not last.get("draft"):  # no draft the model wrote: a gap
            reason = "; ".join(f"{x['node']}: {x['cause']}" for x in last.get("errors", [])) or "model call failed"
    draft = "" if reason else last.get("draft", "")
    if draft and task.get("failed_deps"):  # it went on without them: say so
        names = ", ".join(f"'{md_text(t, 100)}'" for t in task["failed_deps"])
        draft = draft.rstrip() + (
            f"\n\n> **Note:** this section builds on {names}, whose research failed; it goes on with what was found."
        )
    usage = add_usage(last.get("usage"), None)
    usage["seconds"] = round(seconds, 3)
    return {
        "index": task["index"],
        "title": task["title"],
        "key_question": task["key_question"],
        "status": "failed" if reason else "done",
        "reason": redact(reason) if reason else None,
        "stopped_by": "error" if reason else last.get("stopped_by", "complete"),
        "draft": draft,
        "evidence": last.get("evidence", []),
        "usage": usage,
        "errors": last.get("errors", []),
    }


def complete(result: dict) -> None:
    emit(
        "section_complete",
        index=result["index"],
        title=result["title"],
        status=result["status"],
        stopped_by=result["stopped_by"],
        reason=result["reason"],
        usage=result["usage"],
    )
