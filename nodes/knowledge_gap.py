"""`knowledge_gap`: is the research complete, and what is still missing?

After every round the pipeline checks two things itself (deepresearch.research.asked and .coverage):
every concept of the question (state `concepts`, widened by `follow_leads`) is covered by a retrieved
source, and every thing the question *asks* is answered by a retrieved sentence (of its subject's,
close in meaning to what is asked, holding an answer of the kind wanted). What fails either check is
a gap, and the loop goes on while iterations and budget remain. With a capable model, the model's
verdict and gaps lead, and the checks are its floor: no "complete" while a check fails. The embedded
tiny model is not asked at all: its judgement is noise beside the checks.

The run stops as "complete" when both checks pass; as "no_new_sources" when two rounds found no new
source while something is still open (what stays unanswered goes to state `unanswered`, which the
writer says plainly); and here too the loop's budgets are checked: when a budget is spent or the
iteration limit is reached, this node sets `stopped_by` and the route goes to the writer.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from deepresearch.brief import brief_of
from deepresearch.config import Context, get_context, tiny_model
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.evidence import DATA_RULE, evidence_blocks, notes_text
from deepresearch.research.asked import open_asked
from deepresearch.research.coverage import coverage
from deepresearch.state.iterative import IterativeState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.understanding.linking import linking_backend
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


def stalled(rounds: list[int]) -> bool:
    """Did the last two rounds add no new source? (`rounds`: the sources found by each check.)"""
    return len(rounds) >= 3 and rounds[-1] == rounds[-3]


@reads_texts_once
def knowledge_gap(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    if state.get("iteration", 0) == 0:  # nothing searched yet: the question itself, as read (typos corrected)
        return {"gaps": [analysis_of(state).read], "usage": budget.close()}
    concepts = state.get("concepts") or []
    evidence = state.get("evidence", [])
    covered, missing = coverage(concepts, evidence, full_text)
    sim = similarity_for(embedder_of(ctx))
    _, unanswered = open_asked(analysis_of(state), concepts, evidence, full_text, sim, linking_backend(ctx))
    rounds = [*state.get("rounds", []), len(evidence)]
    names: IterativeState = {
        "covered": [c["name"] for c in covered],
        "unanswered": [a.data() for a in unanswered],
        "rounds": rounds,
    }
    open_gaps = [c["name"] for c in missing] + [a.gap for a in unanswered]
    if not open_gaps and tiny_model(ctx):  # the checks pass: complete, even on the last round's budget
        return _stop("complete", budget, {"gaps": [], **names})
    if reason := budget.exhausted():
        return _stop(reason, budget, names)
    emit(
        "judging",
        iteration=state["iteration"],
        covered=names["covered"],
        missing=[c["name"] for c in missing],
        unanswered=[a.gap for a in unanswered],
    )
    if open_gaps and stalled(rounds):  # two rounds found nothing new: what is still open stays open
        return _stop("no_new_sources", budget, {"gaps": [], **names})
    if tiny_model(ctx):  # the checks decide: the tiny model's opinion is not asked for what the pipeline checks
        if not open_gaps:
            return _stop("complete", budget, {"gaps": [], **names})
        uncovered = [c["name"] for c in missing]
        emit("looping", iteration=state["iteration"], gaps=open_gaps, uncovered=uncovered, model_complete=None)
        return {"gaps": open_gaps, "usage": budget.close(), **names}
    prompt = PROMPT.format(
        question=brief_of(state),
        evidence=evidence_blocks(evidence[-10:], max_chars=3000, per_source=300, full=False),
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
        if not open_gaps:
            return _stop("error", budget, {"errors": errors, **names})
        out, names["errors"] = None, errors  # the checks still know what to search for
    # the model's verdict leads; the checks are its floor: no stop while a concept is uncovered or an
    # asked thing unanswered
    model_gaps = [g.strip()[:200] for g in (out.outstanding_gaps if out else []) if g.strip()]
    if open_gaps:
        gaps = open_gaps + [g for g in model_gaps if g not in open_gaps]
    elif out is not None and not out.research_complete and model_gaps:
        gaps = model_gaps
    else:  # everything checked is found, and the model agrees or names nothing to search
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
