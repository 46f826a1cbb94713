"""`outline_review`: a person accepts, revises or replaces the outline (LangGraph interrupt).

The interrupt value is
    {"type": "outline_review", "outline": {...}, "round": k, "max_rounds": m[, "error": "..."]}
and the resume value one of
    {"action": "accept"}
    {"action": "accept", "outline": {...}}              the person's edited outline, researched at once
    {"action": "revise", "comment": "..."}             the planner rewrites, then review again
    {"action": "replace", "outline": {"title", "sections": [{"title", "key_question"}]}}
An invalid answer asks again with an error; after `max_review_rounds` answers the current
outline goes ahead. The node re-runs from the top on resume: everything before
`interrupt()` is idempotent. When review is off it only sets up the section budgets.

In the dependent style (context `outline_style`) each section of the outline carries
`depends_on` (indices) and the request has `"layers": [[0, 1], [2], [3]]`; a replacement's
sections may carry `depends_on` (indices or titles), validated as the planner's are.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from deepresearch.config import Context, get_context
from deepresearch.events import emit
from deepresearch.sections.dependencies import dependencies_checked, validate
from deepresearch.sections.tasks import parse_review_answer, section_budget, section_task
from deepresearch.state.deep import DeepState, outline_view


def outline_review(state: DeepState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    # dict, not DeepState: going ahead resets `section_findings` with None, a value no state type has
    ctx = get_context(runtime)
    plan = state["plan"]
    rnd = state.get("review_round", 0)
    dependent = ctx.outline_style == "dependent"
    if ctx.outline_review and rnd < ctx.max_review_rounds:
        request = {
            "type": "outline_review",
            "outline": outline_view(plan),
            "round": rnd + 1,
            "max_rounds": ctx.max_review_rounds,
        }
        if dependent:
            request["layers"] = validate(plan)[1]
        if state.get("review_error"):
            request["error"] = state["review_error"]
        answer = interrupt(request)
        action, payload, error = parse_review_answer(answer)
        if error:
            emit("error", node="outline_review", cause=error)
            return {"review_round": rnd + 1, "review_action": "ask", "review_error": error}
        if action == "revise":
            return {"review_round": rnd + 1, "review_action": "revise", "review_comment": payload, "review_error": None}
        if action in ("replace", "accept") and isinstance(payload, dict):  # the outline: a dict when given
            extra: dict[str, list[list[int]]] = {}
            if dependent:
                payload, extra["layers"] = dependencies_checked(payload)
            else:
                payload = {
                    **payload,
                    "sections": [{k: v for k, v in s.items() if k != "depends_on"} for s in payload["sections"]],
                }
            emit("outline", outline=outline_view(payload), note="replaced by the reviewer", **extra)
            if action == "replace":  # shown again for review
                return {
                    "review_round": rnd + 1,
                    "review_action": "ask",
                    "plan": payload,
                    "outline": outline_view(payload),
                    "review_error": None,
                }
            plan = payload  # accepted as edited: researched now
    elif ctx.outline_review:
        emit(
            "outline",
            outline=outline_view(plan),
            note=f"review rounds used up ({ctx.max_review_rounds}); going ahead with this outline",
            **({"layers": validate(plan)[1]} if dependent else {}),
        )
    plan = {**plan, "sections": plan["sections"][: ctx.max_sections]}
    layers: list[list[int]] = []
    depends: list[list[int]] = []
    if dependent:  # a cut outline may lose a dependency: checked again
        plan, layers = dependencies_checked(plan)
        depends = [s["depends_on"] for s in plan["sections"]]
    budget = section_budget(
        ctx, state.get("usage"), len(plan["sections"]), get_config().get("max_concurrency"), layers, depends
    )
    return {
        "review_action": "go",
        "review_error": None,
        "section_budget": budget,
        "fanout_at": time.time(),
        "plan": plan,
        "outline": outline_view(plan),
        "layers": layers,
        "depends": depends,
        "section_findings": None,
    }


def route_after_review(state: DeepState) -> list[Send] | Literal["planner", "outline_review", "next_layer"]:
    """Back to the planner, ask again, or fan out: one `Send` per section (or, for a dependent
    outline, the layers' scheduler)."""
    action = state.get("review_action")
    if action == "revise":
        return "planner"
    if action == "ask":
        return "outline_review"
    if state.get("layers"):
        return "next_layer"
    return [Send("section_research", section_task(state, i)) for i in range(len(state["plan"]["sections"]))]
