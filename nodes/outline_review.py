"""`outline_review`: a person accepts, revises or replaces the outline (LangGraph interrupt).

The interrupt value is
    {"type": "outline_review", "outline": {...}, "round": k, "max_rounds": m[, "error": "..."]}
and the resume value one of
    {"action": "accept"}
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

import math
import os
import time
from typing import Literal

from langgraph.config import get_config
from langgraph.types import Send, interrupt
from pydantic import ValidationError

from deepresearch.brief import clarified_brief
from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.layers import dependencies_checked, rounds, validate
from deepresearch.state.budget import add_usage
from deepresearch.state.deep import ReviewedPlan, outline_view

SYNTHESIS_TOKEN_SHARE = 0.25  # kept back for synthesis, proofreading and citation checks
SYNTHESIS_SECONDS_SHARE = 0.2


def section_budget(ctx, usage: dict, sections: int, pool: int | None, layers: list[list[int]] | None = None,
                   depends: list[list[int]] | None = None) -> dict:
    """Each section's share, fixed before the fan-out, so the sum can never pass the limit.

    Time is shared by waves: with at most c sections at once (the context's
    `section_concurrency`, or LangGraph's thread pool), n sections run in ceil(n / c) waves.
    Layers of a dependent outline run one after the other: their waves add up
    (`deepresearch.layers.rounds`). Tokens do not depend on when sections run: n shares.
    """
    used = add_usage(usage, None)
    pool = pool or min(32, (os.cpu_count() or 1) + 4)  # LangGraph's default thread pool
    if layers:
        waves = rounds(layers, depends, ctx.section_concurrency, pool)
    else:
        at_once = min(ctx.section_concurrency or sections, pool, sections)
        waves = math.ceil(sections / at_once)
    tokens = (ctx.max_tokens - used["total_tokens"] - int(ctx.max_tokens * SYNTHESIS_TOKEN_SHARE)) // sections
    seconds = (ctx.max_seconds - used["seconds"] - ctx.max_seconds * SYNTHESIS_SECONDS_SHARE) / waves
    return {"max_tokens": max(1, tokens), "max_seconds": max(0.01, round(seconds, 3)), "waves": waves}


def _parse(answer) -> tuple[str, dict | str | None, str | None]:
    """(action, payload, error)."""
    if not isinstance(answer, dict):
        return "", None, f"expected an object like {{\"action\": \"accept\"}}, got {type(answer).__name__}"
    action = answer.get("action")
    if action == "accept":
        return action, None, None
    if action == "revise":
        comment = answer.get("comment")
        if not isinstance(comment, str) or not comment.strip():
            return "", None, "revise needs a non-empty \"comment\""
        return action, comment.strip()[:2000], None
    if action == "replace":
        try:
            plan = ReviewedPlan.model_validate({"background": "", **(answer.get("outline") or {})})
        except (ValidationError, TypeError) as e:
            first = e.errors()[0] if isinstance(e, ValidationError) else {"loc": (), "msg": str(e)}
            where = ".".join(str(p) for p in first["loc"])
            return "", None, f"replace needs an outline with a title and sections: {where} {first['msg']}".strip()
        return action, plan.model_dump(), None
    return "", None, f"unknown action {action!r}; use accept, revise or replace"


parse_answer = _parse  # the CLI checks a `resume --answer` with it before resuming


def outline_review(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    plan = state["plan"]
    rnd = state.get("review_round", 0)
    dependent = ctx.outline_style == "dependent"
    if ctx.outline_review and rnd < ctx.max_review_rounds:
        request = {"type": "outline_review", "outline": outline_view(plan), "round": rnd + 1,
                   "max_rounds": ctx.max_review_rounds}
        if dependent:
            request["layers"] = validate(plan)[1]
        if state.get("review_error"):
            request["error"] = state["review_error"]
        answer = interrupt(request)
        action, payload, error = _parse(answer)
        if error:
            emit("error", node="outline_review", cause=error)
            return {"review_round": rnd + 1, "review_action": "ask", "review_error": error}
        if action == "revise":
            return {"review_round": rnd + 1, "review_action": "revise", "review_comment": payload,
                    "review_error": None}
        if action == "replace":
            extra = {}
            if dependent:
                payload, extra["layers"] = dependencies_checked(payload)
            else:
                payload = {**payload, "sections": [{k: v for k, v in s.items() if k != "depends_on"}
                                                   for s in payload["sections"]]}
            emit("outline", outline=outline_view(payload), note="replaced by the reviewer", **extra)
            return {"review_round": rnd + 1, "review_action": "ask", "plan": payload,
                    "outline": outline_view(payload), "review_error": None}
    elif ctx.outline_review:
        emit("outline", outline=outline_view(plan),
             note=f"review rounds used up ({ctx.max_review_rounds}); going ahead with this outline",
             **({"layers": validate(plan)[1]} if dependent else {}))
    plan = {**plan, "sections": plan["sections"][: ctx.max_sections]}
    layers, depends = [], []
    if dependent:  # a cut outline may lose a dependency: checked again
        plan, layers = dependencies_checked(plan)
        depends = [s["depends_on"] for s in plan["sections"]]
    budget = section_budget(ctx, state.get("usage"), len(plan["sections"]), get_config().get("max_concurrency"),
                            layers, depends)
    return {"review_action": "go", "review_error": None, "section_budget": budget, "fanout_at": time.time(),
            "plan": plan, "outline": outline_view(plan), "layers": layers, "depends": depends,
            "section_findings": None}


def route_after_review(state: dict) -> list[Send] | Literal["planner", "outline_review", "next_layer"]:
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


def section_task(state: dict, i: int) -> dict:
    """What section i's branch needs (a `SectionTask`), in either outline style."""
    plan = state["plan"]
    s = plan["sections"][i]
    return {"index": i, "title": s["title"], "key_question": s["key_question"], "report_title": plan["title"],
            "budget": state["section_budget"], "concepts": s.get("concepts") or [],
            "brief": clarified_brief(state), "language": state.get("language")}
