"""`layer_write`: the writing of a section that others depend on (the dependent style).

It runs in the step after the section's research, next to the research of the sections that
need it (pipelining: they need its findings, not its prose). The writer continues the
section's research state, with the budget share the section was given: research and writing
together keep to it.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.sections.run import complete, run_section, section_context, section_result
from deepresearch.sections.tasks import TaskNode
from deepresearch.state.deep import DeepState, LayerTask
from deepresearch.state.iterative import IterativeState


def make_layer_write(writer_graph: CompiledStateGraph[IterativeState, Context, Any, Any]) -> TaskNode[LayerTask]:
    """`writer_graph` runs the writer on a section's research state."""

    def layer_write(state: LayerTask, runtime: Runtime[Context] | None = None) -> DeepState:
        """`state`: the `Send`'s task (a `LayerTask` with the section's `research`)."""
        ctx = get_context(runtime)
        research = state["research"]
        started = time.monotonic()
        last, reason = run_section(writer_graph, research, section_context(ctx, state), state["index"])
        seconds = state.get("research_seconds", 0.0) + time.monotonic() - started
        result = section_result(state, {**research, **last}, reason, seconds)
        complete(result)
        return {"section_results": [result]}

    return layer_write
