"""`section_research`: one section of a deep report, researched by the iterative graph.

The graph module hands the compiled iterative graph in (`make_section_research(subgraph)`),
so nodes never import graphs. Each section runs with its own share of the budgets; its
progress events are forwarded to the parent stream tagged with the section's index. A
section whose model or search calls fail for good is recorded as failed with the reason:
the other sections go on, and the report notes the gap. With `section_execution: server`
the loop is a run on the LangGraph server instead of a thread of this process
(deepresearch/sections/remote.py).
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.events import emit
from deepresearch.llm.retries import describe
from deepresearch.sections.remote import (
    GRACE_SECONDS,
    RemoteSection,
    own_texts,
    section_headers,
    section_server,
    section_thread,
)
from deepresearch.sections.run import (
    complete,
    run_section,
    section_context,
    section_gate,
    section_input,
    section_result,
)
from deepresearch.sections.tasks import TaskNode
from deepresearch.state.deep import DeepState, SectionTask
from deepresearch.state.iterative import IterativeState


def make_section_research(subgraph: CompiledStateGraph[IterativeState, Context, Any, Any]) -> TaskNode[SectionTask]:
    def section_research(state: SectionTask, runtime: Runtime[Context] | None = None) -> DeepState:
        ctx = get_context(runtime)
        with section_gate(ctx.section_concurrency):
            return _research(subgraph, state, ctx)

    return section_research


def _research(
    subgraph: CompiledStateGraph[IterativeState, Context, Any, Any], task: SectionTask, ctx: Context
) -> DeepState:
    emit("section_started", index=task["index"], title=task["title"], budget=task["budget"])
    started = time.monotonic()
    if ctx.section_execution == "server":
        last, reason = _on_server(task, ctx)
    else:
        last, reason = run_section(subgraph, section_input(task), section_context(ctx, task), task["index"])
    result = section_result(task, last, reason, time.monotonic() - started)
    complete(result)
    return {"section_results": [result]}


def _on_server(task: SectionTask, ctx: Context) -> tuple[dict[str, Any], str | None]:
    """The section as a run on the server: (its final state, with its texts now the parent's;
    why it failed or None)."""
    from langgraph_sdk import get_sync_client

    try:
        writer = get_stream_writer()
    except Exception:  # noqa: BLE001 - not streaming
        writer = None

    def forward(event: dict[str, Any]) -> None:
        if writer is not None:
            writer({**event, "section": task["index"]})

    try:
        configurable = get_config().get("configurable") or {}
        inp = section_input(task)
        thread = section_thread(configurable, inp, task["index"])
        headers = section_headers(configurable, ctx.max_seconds + GRACE_SECONDS, thread)
        client = get_sync_client(url=section_server(), headers=headers)
        section = RemoteSection(client, thread, inp, section_context(ctx, task), forward)
        last, reason = section.run()
        return (own_texts(client, last) if reason is None else last), reason
    except Exception as e:  # noqa: BLE001 - one section's failure must not sink the others
        return {}, describe(e)
