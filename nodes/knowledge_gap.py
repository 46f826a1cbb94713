"""`knowledge_gap`: is the research complete, and what is still missing?

Also where the loop's budgets are checked: when a budget is spent or the iteration limit
is reached, this node sets `stopped_by` and the route goes to the writer.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.evidence import DATA_RULE, evidence_blocks
from deepresearch.llm import ModelCallError, structured
from deepresearch.state.budget import Budget, BudgetExhausted


class KnowledgeGapOutput(BaseModel):
    research_complete: bool = Field(description="True only if the sources fully answer the question.")
    outstanding_gaps: list[str] = Field(
        default_factory=list, max_length=3,
        description="What is still unknown, each as a short phrase (at most three).",
    )


PROMPT = """Question: {question}

Sources found so far:
{evidence}

Notes so far:
{notes}

Decide whether the sources above fully answer the question. If not, list up to three
specific gaps that further searching should fill."""


def _stop(reason: str, budget: Budget, **extra) -> dict:
    if reason in ("max_tokens", "max_seconds", "max_iterations"):
        emit("budget", reason=reason, usage=budget.close())
    return {"stopped_by": reason, "usage": budget.close(), **extra}


def knowledge_gap(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    question = state["question"]
    if state.get("iteration", 0) == 0:
        return {"gaps": [question], "usage": budget.close()}
    if reason := budget.exhausted():
        return _stop(reason, budget)
    emit("judging", iteration=state["iteration"])
    prompt = PROMPT.format(
        question=question,
        evidence=evidence_blocks(state.get("evidence", [])[-10:], max_chars=3000, per_source=300, full=False),
        notes="\n".join(state.get("observations", [])) or "(none)",
    )
    try:
        out = structured(ctx, budget, [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
                         KnowledgeGapOutput, node="knowledge_gap", max_output=250)
    except BudgetExhausted as e:
        return _stop(e.reason, budget)
    except ModelCallError as e:
        emit("error", node="knowledge_gap", cause=e.cause)
        return _stop("error", budget, errors=state.get("errors", []) + [{"node": "knowledge_gap", "cause": e.cause}])
    if out.research_complete:
        return _stop("complete", budget, gaps=[])
    gaps = [g.strip() for g in out.outstanding_gaps if g.strip()] or [question]
    emit("looping", iteration=state["iteration"], gaps=gaps)
    return {"gaps": gaps, "usage": budget.close()}


def route_after_gap(state: dict) -> Literal["writer", "tool_selector"]:
    """The loop's conditional edge: write when stopped (done, budget, limit), else search more."""
    return "writer" if state.get("stopped_by") else "tool_selector"
