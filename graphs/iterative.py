"""The iterative research graph.

    START -> clarify (asks the person when the context's `clarify` is on; finish -> END)
          -> thinking -> knowledge_gap -> (route_after_gap)
        done, budget spent or iteration limit -> writer -> source_tracer -> charts -> infer -> END
                                                   (edit_after_report: -> report_feedback <-> itself -> END)
    charts (context `charts`) and infer (context `infer`) do nothing when off.
        otherwise                              -> tool_selector -> execute_tools -> thinking
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from deepresearch.config import Context
from deepresearch.node_threads import own_threads
from deepresearch.nodes.charts import charts
from deepresearch.nodes.clarify import clarify, route_after_clarify
from deepresearch.nodes.execute_tools import execute_tools
from deepresearch.nodes.infer import infer
from deepresearch.nodes.knowledge_gap import knowledge_gap, route_after_gap
from deepresearch.nodes.report_feedback import report_feedback, route_after_feedback, route_after_trace
from deepresearch.nodes.source_tracer import source_tracer
from deepresearch.nodes.thinking import thinking
from deepresearch.nodes.tool_selector import tool_selector
from deepresearch.nodes.writer import writer
from deepresearch.state.iterative import IterativeInput, IterativeOutput, IterativeState



def build(checkpointer=None, store=None, *, trace: bool = True, write: bool = True):
    """The compiled graph (`store`: where retrieved texts are kept, see state/sources.py).
    `trace=False` ends at the writer's draft (deep-graph sections);
    `write=False` ends before the writer (a section others depend on: written later; the writer
    node stays, unreached)."""
    g = StateGraph(IterativeState, context_schema=Context, input_schema=IterativeInput if trace else IterativeState,
                   output_schema=IterativeOutput if trace else IterativeState)
    g.add_node("thinking", thinking)
    g.add_node("knowledge_gap", knowledge_gap)
    g.add_node("tool_selector", tool_selector)
    g.add_node("execute_tools", execute_tools)
    g.add_node("writer", writer)
    if trace:  # a whole run (a deep section is handed its brief and language instead)
        g.add_node("clarify", clarify)
        g.add_edge(START, "clarify")
        g.add_conditional_edges("clarify", route_after_clarify, {"ask": "clarify", "go": "thinking", "finish": END})
    else:
        g.add_edge(START, "thinking")
    g.add_edge("thinking", "knowledge_gap")
    g.add_conditional_edges("knowledge_gap", route_after_gap,
                            {"writer": "writer" if write else END, "tool_selector": "tool_selector"})
    g.add_edge("tool_selector", "execute_tools")
    g.add_edge("execute_tools", "thinking")
    if trace:
        g.add_node("source_tracer", source_tracer)
        g.add_node("report_feedback", report_feedback)
        g.add_node("charts", charts)
        g.add_node("infer", infer)
        g.add_edge("writer", "source_tracer")
        g.add_edge("source_tracer", "charts")
        g.add_edge("charts", "infer")
        g.add_conditional_edges("infer", route_after_trace, ["report_feedback", END])
        g.add_conditional_edges("report_feedback", route_after_feedback, ["report_feedback", END])
    else:
        g.add_edge("writer", END)
    return own_threads(g).compile(checkpointer=checkpointer, store=store,
                                  name="iterative" if trace else "section" if write else "section_research_only")


def build_writer():
    """The writer alone, on a section's finished research state."""
    g = StateGraph(IterativeState, context_schema=Context)
    g.add_node("writer", writer)
    g.add_edge(START, "writer")
    g.add_edge("writer", END)
    return g.compile(name="section_writer")


graph = build()
