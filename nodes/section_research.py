"""`section_research`: one section of a deep report, researched by the iterative graph.

The graph module hands the compiled iterative graph in (`make_section_research(subgraph)`),
so nodes never import graphs. Each section runs with its own share of the budgets; its
progress events are forwarded to the parent stream tagged with the section's index. A
section whose model or search calls fail for good is recorded as failed with the reason:
the other sections go on, and the report notes the gap.
"""

from __future__ import annotations

import threading
import time
import weakref
from contextlib import nullcontext
from dataclasses import replace

from langgraph.config import get_config, get_stream_writer
from langgraph.errors import GraphBubbleUp

from deepresearch.brief import section_brief
from deepresearch.config import get_context
from deepresearch.events import emit, redact
from deepresearch.llm import describe
from deepresearch.state.budget import add_usage

# The loop runs one node at a time, but LangGraph's sync stream needs a second worker to
# wait on it: never inherit a parent's max_concurrency of 1.
SUBGRAPH_CONFIG = {"max_concurrency": 4}


# One gate per run (thread) and limit, alive while a section of the run holds or waits on it:
# a server that executes run after run keeps none of the finished ones.
_gates: weakref.WeakValueDictionary[tuple, threading.BoundedSemaphore] = weakref.WeakValueDictionary()
_gates_lock = threading.Lock()


def _gate(limit: int | None):
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


def section_input(task: dict) -> dict:
    """The section loop's input for a `SectionTask`."""
    question = f"{task['key_question']} (in: {task['report_title']})"
    return {"question": question, "section": task["title"], "concepts": task.get("concepts") or [],
            "brief": section_brief(question, task.get("brief")), "language": task.get("language")}


def make_section_research(subgraph):
    def section_research(task: dict, runtime=None) -> dict:
        ctx = get_context(runtime)
        with _gate(ctx.section_concurrency):
            return _research(subgraph, task, ctx)

    return section_research


def _research(subgraph, task: dict, ctx) -> dict:
    share = task["budget"]
    sec_ctx = replace(ctx, max_tokens=share["max_tokens"], max_seconds=share["max_seconds"], mode="iterative")
    index, title = task["index"], task["title"]
    try:
        writer = get_stream_writer()
    except Exception:  # noqa: BLE001 - not streaming
        writer = None
    emit("section_started", index=index, title=title, budget=share)
    started = time.monotonic()
    last: dict = {}
    reason = None
    try:
        inp = section_input(task)
        for mode, chunk in subgraph.stream(inp, SUBGRAPH_CONFIG,
                                           context=sec_ctx, stream_mode=["custom", "values"]):
            if mode == "custom":
                if writer is not None:
                    writer({**chunk, "section": index})
            else:
                last = chunk
    except GraphBubbleUp:
        raise
    except Exception as e:  # noqa: BLE001 - one section's failure must not sink the others
        reason = describe(e)
    if reason is None and last.get("stopped_by") == "error":
        failed_nodes = {x["node"] for x in last.get("errors", [])}
        if "writer" in failed_nodes or not last.get("draft"):  # no draft the model wrote: a gap
            reason = "; ".join(f"{x['node']}: {x['cause']}" for x in last.get("errors", [])) or "model call failed"
    usage = add_usage(last.get("usage"), None)
    usage["seconds"] = round(time.monotonic() - started, 3)
    result = {
        "index": index,
        "title": title,
        "key_question": task["key_question"],
        "status": "failed" if reason else "done",
        "reason": redact(reason) if reason else None,
        "stopped_by": "error" if reason else last.get("stopped_by", "complete"),
        "draft": "" if reason else last.get("draft", ""),
        "evidence": last.get("evidence", []),
        "usage": usage,
        "errors": last.get("errors", []),
    }
    emit("section_complete", index=index, title=title, status=result["status"],
         stopped_by=result["stopped_by"], reason=result["reason"], usage=usage)
    return {"section_results": [result]}
