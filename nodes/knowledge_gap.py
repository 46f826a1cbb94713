"""`knowledge_gap`: is the research complete, and what is still missing?

The model's judgement is combined with a check the pipeline makes itself: a concept of the
question (state `concepts`, widened by `follow_leads`) that no retrieved source covers is an
outstanding gap, and the loop goes on while iterations and budget remain, whatever the model says.
The model's own gaps count only when they are about the question. `stopped_by` is "complete" only
when every concept is covered. The embedded tiny model is not asked at all: its judgement of
completeness is noise beside the coverage check, and reading ten sources' text took it most of a
run's time.

Also where the loop's budgets are checked: when a budget is spent or the iteration limit
is reached, this node sets `stopped_by` and the route goes to the writer.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from deepresearch.brief import brief_of
from deepresearch.config import Context, get_context, tiny_model
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.evidence import DATA_RULE, evidence_blocks, notes_text
from deepresearch.research.coverage import content_overlap, coverage
from deepresearch.state.iterative import IterativeState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.understanding.reader import analysis_of


class KnowledgeGapOutput(BaseModel):
    research_complete: bool = Field(description="True only if the sources fully answer the question.")
    outstanding_gaps: list[str] = Field(
        default_factory=list, max_length=3, description="What is still unknown, each as a short phrase (at most three)."
    )


PROMPT = """Question: {question}

Sources found so far:
{evidence}

Notes so far:
{notes}

Decide whether the sources above fully answer the question. If not, list up to three
specific gaps that further searching should fill."""


def _stop(reason: str, budget: Budget, extra: IterativeState) -> IterativeState:
    if reason in ("max_tokens", "max_seconds", "max_iterations", "max_cost"):
        emit("budget", reason=reason, usage=budget.close())
    return {"stopped_by": reason, "usage": budget.close(), **extra}


def relevant_gaps(gaps: list[str], question: str, concepts: list[dict[str, Any]]) -> list[str]:
    """The model's gaps that are about the question (share a content word with it or with a
    concept). (Searches already made are skipped by tool_selector, per tool.)"""
    about = question + " " + " ".join(c["name"] for c in concepts)
    return [g for g in gaps if content_overlap(g, about)]


@reads_texts_once
def knowledge_gap(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    if state.get("iteration", 0) == 0:  # nothing searched yet: the question itself, as read (typos corrected)
        return {"gaps": [analysis_of(state).read], "usage": budget.close()}
    concepts = state.get("concepts") or []
    covered, missing = coverage(concepts, state.get("evidence", []), full_text)
    names: IterativeState = {"covered": [c["name"] for c in covered]}
    if reason := budget.exhausted():
        return _stop(reason, budget, names)
    emit("judging", iteration=state["iteration"], covered=names["covered"], missing=[c["name"] for c in missing])
    if tiny_model(ctx):  # coverage decides: the tiny model's opinion is not asked for what the pipeline checks
        if not missing:
            return _stop("complete", budget, {"gaps": [], **names})
        gaps = [c["name"] for c in missing]
        emit("looping", iteration=state["iteration"], gaps=gaps, uncovered=gaps, model_complete=None)
        return {"gaps": gaps, "usage": budget.close(), **names}
    prompt = PROMPT.format(
        question=brief_of(state),
        evidence=evidence_blocks(state.get("evidence", [])[-10:], max_chars=3000, per_source=300, full=False),
        notes=notes_text(state),
    )
    try:
        out = structured(
            ctx,
            budget,
            [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
            KnowledgeGapOutput,
            node="knowledge_gap",
            max_output=250,
        )
    except BudgetExhausted as e:
        return _stop(e.reason, budget, names)
    except ModelCallError as e:
        if reason := budget.exhausted():  # the call ran into the end of the budget: a budget stop
            return _stop(reason, budget, names)
        emit("error", node="knowledge_gap", cause=e.cause)
        errors = state.get("errors", []) + [{"node": "knowledge_gap", "cause": e.cause}]
        if not missing:
            return _stop("error", budget, {"errors": errors, **names})
        out, names["errors"] = None, errors  # the coverage check still knows what to search for
    model_gaps = [g.strip()[:200] for g in (out.outstanding_gaps if out else []) if g.strip()]
    model_gaps = relevant_gaps(model_gaps, brief_of(state), concepts)
    if missing:  # an uncovered concept is a gap whatever the model says
        gaps = [c["name"] for c in missing] + model_gaps
    elif out is not None and not out.research_complete and model_gaps:
        gaps = model_gaps
    else:  # every concept covered, and the model agrees or names nothing about the question
        return _stop("complete", budget, {"gaps": [], **names})
    emit(
        "looping",
        iteration=state["iteration"],
        gaps=gaps,
        uncovered=[c["name"] for c in missing],
        model_complete=bool(out and out.research_complete),
    )
    return {"gaps": gaps, "usage": budget.close(), **names}


class GapRoute(TypedDict, total=False):
    """What `route_after_gap` reads: LangGraph hands a conditional edge only its annotated
    keys, not a copy of the whole state."""

    stopped_by: str


def route_after_gap(state: GapRoute) -> Literal["writer", "tool_selector"]:
    """The loop's conditional edge: write when stopped (done, budget, limit), else search more."""
    return "writer" if state.get("stopped_by") else "tool_selector"
