"""`next_layer`: the scheduler of a dependent outline, after every step of sections.

Every section sent in a step has finished when it runs (LangGraph's steps), so the state says
exactly what is done: `section_findings` holds the sections researched for others,
`section_results` the sections finished. Its conditional edge (`route_layers`) sends, at once:

    layer_write     for each section researched but not yet written,
    layer_research  for each section not started whose dependencies are all researched
                    (with their findings),

and goes on to collect_drafts when every section is finished. So the layers run in order,
and a layer's writing overlaps the next layer's research:

    step 1  research A, B
    step 2  write A, B        research C (A's and B's findings)
    step 3  write C           research and write D (C's findings)

A killed run resumes at its step: sections finished in it keep their results.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from deepresearch.config import Context
from deepresearch.sections.dependencies import dependents, seed
from deepresearch.sections.tasks import section_task
from deepresearch.state.deep import DeepState, LayerTask


def next_layer(state: DeepState, runtime: Runtime[Context] | None = None) -> DeepState:
    return {}


def _task(state: DeepState, i: int) -> LayerTask:
    return {**section_task(state, i), "depends_on": list(state["depends"][i])}


def route_layers(state: DeepState) -> list[Send] | Literal["collect_drafts"]:
    sections = state["plan"]["sections"]
    deps = state["depends"]
    layer_of = {i: k for k, layer in enumerate(state["layers"]) for i in layer}
    findings = {f["index"]: f for f in state.get("section_findings") or []}
    written = {r["index"] for r in state.get("section_results") or []}
    started = set(findings) | written
    needed = dependents(deps)
    sends = [
        Send(
            "layer_write",
            {
                **_task(state, i),
                "layer": layer_of[i],
                "research": findings[i]["research"],
                "research_seconds": findings[i].get("seconds", 0.0),
                "failed_deps": findings[i].get("failed_deps") or [],
            },
        )
        for i in sorted(set(findings) - written)
    ]
    for i in range(len(sections)):
        if i in started or not all(d in findings for d in deps[i]):
            continue
        evidence, prior, failed = seed(
            [
                {**findings[d], "title": sections[d]["title"], "key_question": sections[d]["key_question"]}
                for d in deps[i]
            ]
        )
        sends.append(
            Send(
                "layer_research",
                {
                    **_task(state, i),
                    "layer": layer_of[i],
                    "dependents": needed[i],
                    "evidence": evidence,
                    "prior": prior,
                    "failed_deps": failed,
                },
            )
        )
    if sends:
        return sends
    return "collect_drafts"
