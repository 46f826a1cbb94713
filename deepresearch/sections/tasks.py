"""A deep run's sections as tasks: each section's budget share, fixed before the fan-out; the
task a section's branch gets (`SectionTask`); and the check of an outline-review answer (the
review node uses it, and the CLI checks `resume --answer` with it before resuming)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from langgraph.runtime import Runtime
from pydantic import ValidationError

from deepresearch.brief import clarified_brief
from deepresearch.config import Context
from deepresearch.llm.budget import add_usage
from deepresearch.sections.dependencies import rounds
from deepresearch.state.deep import DeepState, ReviewedPlan, SectionTask

Task = TypeVar("Task", contravariant=True)


class TaskNode(Protocol[Task]):
    """A node a `Send` runs with a section's task (`SectionTask`, or a `LayerTask` in the dependent
    style): what `make_section_research`, `make_layer_research` and `make_layer_write` return."""

    def __call__(self, state: Task, runtime: Runtime[Context] | None = None) -> DeepState: ...


SYNTHESIS_TOKEN_SHARE = 0.25  # kept back for synthesis, proofreading and citation checks


SYNTHESIS_SECONDS_SHARE = 0.2


def section_budget(
    ctx,
    usage: dict | None,
    sections: int,
    pool: int | None,
    layers: list[list[int]] | None = None,
    depends: list[list[int]] | None = None,
) -> dict:
    """Each section's share, fixed before the fan-out, so the sum can never pass the limit.

    Time is shared by waves: with at most c sections at once (the context's
    `section_concurrency`, or LangGraph's thread pool), n sections run in ceil(n / c) waves.
    Layers of a dependent outline run one after the other: their waves add up
    (`deepresearch.sections.dependencies.rounds`). Tokens do not depend on when sections run: n shares.
    """
    used = add_usage(usage, None)
    pool = pool or min(32, (os.cpu_count() or 1) + 4)  # LangGraph's default thread pool
    if layers and depends is not None:  # a dependent outline: given with its dependencies
        waves = rounds(layers, depends, ctx.section_concurrency, pool)
    else:
        at_once = min(ctx.section_concurrency or sections, pool, sections)
        waves = math.ceil(sections / at_once)
    tokens = (ctx.max_tokens - used["total_tokens"] - int(ctx.max_tokens * SYNTHESIS_TOKEN_SHARE)) // sections
    seconds = (ctx.max_seconds - used["seconds"] - ctx.max_seconds * SYNTHESIS_SECONDS_SHARE) / waves
    share = {"max_tokens": max(1, tokens), "max_seconds": max(0.01, round(seconds, 3)), "waves": waves}
    if getattr(ctx, "max_cost", None) is not None:  # dollars are shared like tokens
        share["max_cost"] = max(
            0.0, (ctx.max_cost - used["cost_usd"] - ctx.max_cost * SYNTHESIS_TOKEN_SHARE) / sections
        )
    return share


def parse_review_answer(answer) -> tuple[str, dict | str | None, str | None]:
    """(action, payload, error)."""
    if not isinstance(answer, dict):
        return "", None, f'expected an object like {{"action": "accept"}}, got {type(answer).__name__}'
    action = answer.get("action")
    if action == "accept" and answer.get("outline") is None:
        return action, None, None
    if action == "revise":
        comment = answer.get("comment")
        if not isinstance(comment, str) or not comment.strip():
            return "", None, 'revise needs a non-empty "comment"'
        return action, comment.strip()[:2000], None
    if action in ("replace", "accept"):  # accept with an outline: the person's edits, researched as they are
        try:
            plan = ReviewedPlan.model_validate({"background": "", **(answer.get("outline") or {})})
        except (ValidationError, TypeError) as e:
            first = e.errors()[0] if isinstance(e, ValidationError) else {"loc": (), "msg": str(e)}
            where = ".".join(str(p) for p in first["loc"])
            return "", None, f"{action} needs an outline with a title and sections: {where} {first['msg']}".strip()
        return action, plan.model_dump(), None
    return "", None, f"unknown action {action!r}; use accept, revise or replace"


def section_task(state: Mapping[str, Any], i: int) -> SectionTask:
    """What section i's branch needs (a `SectionTask`), in either outline style."""
    plan = state["plan"]
    s = plan["sections"][i]
    return {
        "index": i,
        "title": s["title"],
        "key_question": s["key_question"],
        "report_title": plan["title"],
        "budget": state["section_budget"],
        "concepts": s.get("concepts") or [],
        "brief": clarified_brief(state),
        "language": state.get("language"),
    }
