"""The deep research graph.

    START -> clarify --(route_after_clarify)--> clarify (ask) | END (finish) | analyse
          -> analyse -> planner -> outline_review --(route_after_review)--> planner         (revise)
                            ^    |                          \\--> outline_review  (ask again)
                            +----+                           \\-> Send(section_research) x N
    section_research (the iterative graph, one per section, in parallel) -> collect_drafts
    -> synthesizer -> proofreader -> source_tracer -> charts -> infer -> END
                                                    (edit_after_report: -> report_feedback <-> itself -> END)

The dependent style (context `outline_style`) goes from outline_review to the scheduler:

    next_layer --(route_layers)--> Send(layer_research) for each section whose dependencies
        ^                          are researched, Send(layer_write) for each section
        |                          researched for others, or collect_drafts when all are done
        +---- layer_research, layer_write
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer

from deepresearch.config import Context
from deepresearch.graphs import iterative
from deepresearch.node_threads import own_threads
from deepresearch.nodes.analyse import analyse_outline
from deepresearch.nodes.charts import charts
from deepresearch.nodes.clarify import clarify, route_after_clarify
from deepresearch.nodes.collect_drafts import collect_drafts
from deepresearch.nodes.infer import infer
from deepresearch.nodes.layer_research import make_layer_research
from deepresearch.nodes.layer_write import make_layer_write
from deepresearch.nodes.next_layer import next_layer, route_layers
from deepresearch.nodes.outline_review import outline_review, route_after_review
from deepresearch.nodes.planner import planner
from deepresearch.nodes.proofreader import proofreader
from deepresearch.nodes.report_feedback import report_feedback, route_after_feedback, route_after_trace
from deepresearch.nodes.section_research import make_section_research
from deepresearch.nodes.source_tracer import source_tracer_deep
from deepresearch.nodes.synthesizer import synthesizer
from deepresearch.state.deep import DeepInput, DeepOutput, DeepState


def build(
    checkpointer: Checkpointer = None, store: BaseStore | None = None
) -> CompiledStateGraph[DeepState, Context, DeepInput, DeepOutput]:
    g = StateGraph(DeepState, context_schema=Context, input_schema=DeepInput, output_schema=DeepOutput)
    g.add_node("clarify", clarify)
    g.add_node("analyse", analyse_outline)
    g.add_node("planner", planner)
    g.add_node("outline_review", outline_review)
    g.add_node("section_research", make_section_research(iterative.build(section=True)))
    g.add_node("next_layer", next_layer)
    g.add_node(
        "layer_research", make_layer_research(iterative.build(section=True, write=False), iterative.build(section=True))
    )
    g.add_node("layer_write", make_layer_write(iterative.build_writer()))
    g.add_node("collect_drafts", collect_drafts, defer=True)
    g.add_node("synthesizer", synthesizer)
    g.add_node("proofreader", proofreader)
    g.add_node("source_tracer", source_tracer_deep)
    g.add_node("charts", charts)
    g.add_node("infer", infer)
    g.add_node("report_feedback", report_feedback)
    g.add_edge(START, "clarify")
    g.add_conditional_edges("clarify", route_after_clarify, {"ask": "clarify", "go": "analyse", "finish": END})
    g.add_edge("analyse", "planner")
    g.add_edge("planner", "outline_review")
    g.add_conditional_edges(
        "outline_review", route_after_review, ["planner", "outline_review", "section_research", "next_layer"]
    )
    g.add_edge("section_research", "collect_drafts")
    g.add_conditional_edges("next_layer", route_layers, ["layer_research", "layer_write", "collect_drafts"])
    g.add_edge("layer_research", "next_layer")
    g.add_edge("layer_write", "next_layer")
    g.add_edge("collect_drafts", "synthesizer")
    g.add_edge("synthesizer", "proofreader")
    g.add_edge("proofreader", "source_tracer")
    g.add_edge("source_tracer", "charts")
    g.add_edge("charts", "infer")
    g.add_conditional_edges("infer", route_after_trace, ["report_feedback", END])
    g.add_conditional_edges("report_feedback", route_after_feedback, ["report_feedback", END])
    return own_threads(g).compile(checkpointer=checkpointer, store=store, name="deep")


graph = build()
