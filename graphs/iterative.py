"""The iterative research graph.

    START -> clarify (asks the person when the context's `clarify` is on; finish -> END)
          -> analyse -> thinking -> follow_leads -> knowledge_gap -> (route_after_gap)
        done, budget spent or iteration limit -> writer -> source_tracer -> charts -> infer -> END
                                                   (edit_after_report: -> report_feedback <-> itself -> END)
        otherwise                              -> tool_selector -> execute_tools -> thinking
    charts (context `charts`) and infer (context `infer`) do nothing when off.

A deep report's section is the same loop from `analyse` to the writer's draft (`section=True`).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from deepresearch.config import Context
from deepresearch.node_threads import own_threads
from deepresearch.nodes.analyse import analyse
from deepresearch.nodes.charts import charts
from deepresearch.nodes.clarify import clarify, route_after_clarify
from deepresearch.nodes.execute_tools import execute_tools
from deepresearch.nodes.follow_leads import follow_leads
from deepresearch.nodes.infer import infer
from deepresearch.nodes.knowledge_gap import knowledge_gap, route_after_gap
from deepresearch.nodes.report_feedback import report_feedback, route_after_feedback, route_after_trace
from deepresearch.nodes.source_tracer import source_tracer
from deepresearch.nodes.thinking import thinking
from deepresearch.nodes.tool_selector import tool_selector
from deepresearch.nodes.writer import writer
from deepresearch.state.iterative import IterativeInput, IterativeOutput, IterativeState


def build(
    checkpointer: Checkpointer = None, store: BaseStore | None = None, *, section: bool = False, write: bool = True
) -> CompiledStateGraph[IterativeState, Context, Any, Any]:
    """The compiled graph (`store`: where retrieved texts are kept, see state/sources.py).
    `section=True`: a deep report's section, from its brief to the writer's draft (no clarify, no
    checks after the writer); `write=False`: a section others depend on, which ends before the
    writer (written later; the writer node stays, unreached)."""
    g = StateGraph(
        IterativeState,
        context_schema=Context,
        input_schema=IterativeState if section else IterativeInput,
        output_schema=IterativeState if section else IterativeOutput,
    )
    g.add_node("analyse", analyse)
    g.add_node("thinking", thinking)
    g.add_node("follow_leads", follow_leads)
    g.add_node("knowledge_gap", knowledge_gap)
    g.add_node("tool_selector", tool_selector)
    g.add_node("execute_tools", execute_tools)
    g.add_node("writer", writer)
    if section:
        g.add_edge(START, "analyse")
    else:
        g.add_node("clarify", clarify)
        g.add_edge(START, "clarify")
        g.add_conditional_edges("clarify", route_after_clarify, {"ask": "clarify", "go": "analyse", "finish": END})
    g.add_edge("analyse", "thinking")
    g.add_edge("thinking", "follow_leads")
    g.add_edge("follow_leads", "knowledge_gap")
    g.add_conditional_edges(
        "knowledge_gap", route_after_gap, {"writer": "writer" if write else END, "tool_selector": "tool_selector"}
    )
    g.add_edge("tool_selector", "execute_tools")
    g.add_edge("execute_tools", "thinking")
    if section:
        g.add_edge("writer", END)
    else:
        g.add_node("source_tracer", source_tracer)
        g.add_node("report_feedback", report_feedback)
        g.add_node("charts", charts)
        g.add_node("infer", infer)
        g.add_edge("writer", "source_tracer")
        g.add_edge("source_tracer", "charts")
        g.add_edge("charts", "infer")
        g.add_conditional_edges("infer", route_after_trace, ["report_feedback", END])
        g.add_conditional_edges("report_feedback", route_after_feedback, ["report_feedback", END])
    name = "section" if write else "section_research_only"
    return own_threads(g).compile(checkpointer=checkpointer, store=store, name=name if section else "iterative")


def build_writer() -> CompiledStateGraph[IterativeState, Context, IterativeState, IterativeState]:
    """The writer alone, on a section's finished research state."""
    g = StateGraph(IterativeState, context_schema=Context)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return g.compile(name="section_writer")


graph = build()
