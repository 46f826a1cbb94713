"""`section_research`: one section of a deep report, researched by the iterative graph.

The graph module hands the compiled iterative graph in (`make_section_research(subgraph)`),
so nodes never import graphs. Each section runs with its own share of the budgets; its
progress events are forwarded to the parent stream tagged with the section's index. A
section whose model or search calls fail for good is recorded as failed with the reason:
the other sections go on, and the report notes the gap.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.events import emit
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
    last, reason = run_section(subgraph, section_input(task), section_context(ctx, task), task["index"])
    result = section_result(task, last, reason, time.monotonic() - started)
    complete(result)
    return {"section_results": [result]}
