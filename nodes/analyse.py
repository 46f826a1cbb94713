"""`analyse`: the question read once, into state's `analysis` (deepresearch.understanding).

The first step after `clarify` in both graphs, and the first of every deep section's loop. What the
question asks (its subjects, the kind of answer, the relations to follow, what it compares, its
aspects, whether it wants an overview, its language) is worked out here and nowhere else: every
node after reads `analysis`. The question's concepts also start the run's `concepts`, which the
research widens (node `follow_leads`) and whose coverage decides the gaps (node `knowledge_gap`).

With the tiny local model the embedded rules read it; with a capable model the model reads it (its
kind, what it compares, its aspects, its concepts) and the rules check each concept against the
backend (one structured call). The deep graph's question is read by the rules: its outline is the
model's reading (node `planner`). A deep section arrives with its concepts set by the planner.

A new question on a thread whose last question was answered starts afresh here (keeping what
`clarify` set for it).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deepresearch.brief import brief_of, carry_over, language_of
from deepresearch.config import Context, get_context, validate_question
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, empty_usage
from deepresearch.state.deep import DeepState
from deepresearch.state.iterative import IterativeState
from deepresearch.understanding.reader import reader_for


def _fresh(state: IterativeState) -> tuple[IterativeState, dict[str, Any]]:
    """A new question on a finished thread (or another question than the last one's): the state it
    starts from, and the keys that reset the last question's research."""
    finished = bool(state.get("stopped_by") and state.get("report"))
    other_question = bool(state.get("asked")) and state.get("asked") != state.get("question")
    if not (finished or other_question):
        return state, {}
    kept: IterativeState = {"question": state["question"], **carry_over(state)}
    return kept, {
        "iteration": 0,
        "observations": [],
        "gaps": [],
        "tasks": [],
        "queries_done": [],
        "rounds": [],
        "unanswered": [],
        "evidence": None,
        "report": "",
        "draft": "",
        "sources": [],
        "citations": [],
        "removed": [],
        "errors": kept.get("errors", []),
        "stopped_by": "",
        "usage": empty_usage(),
        "concepts": [],
    }


def analyse(state: IterativeState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    """The node of the iterative graph (and of a deep section's loop)."""
    return _analyse(state, runtime, outline=False)


def analyse_outline(state: DeepState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    """The node of the deep graph (see the module's text)."""
    return _analyse(state, runtime, outline=True)


def _analyse(state: Any, runtime: Runtime[Context] | None, *, outline: bool) -> dict[str, Any]:
    ctx = get_context(runtime)
    state, fresh = (state, {}) if outline else _fresh(state)
    if not outline and state.get("iteration", 0) and state.get("analysis"):
        return {}  # the same question's research goes on (a run started again on its thread)
    question = state.get("question", "")
    try:
        validate_question(question)
    except ValueError as e:
        emit("error", node="analyse", cause=str(e))
        raise
    # the deep graph's question starts a fresh plan: from the clarifying call's usage, not an earlier
    # question's on the thread
    budget = Budget.of(ctx, {"usage": carry_over(state).get("usage") or {}} if outline else state)
    if not outline:
        emit("started", question=question[:300], section=state.get("section"), language=language_of(state, ctx))
    given = None if outline else state.get("concepts") or None
    analysis, errors = reader_for(ctx, budget, outline=outline).read(question, brief_of(state), given)
    # the planner's concepts stay as it gave them (a related topic says what it is related to)
    concepts = [dict(c) for c in given] if given else [c.data() for c in analysis.subjects]
    emit(
        "concepts",
        concepts=[c["name"] for c in concepts],
        linked=[c["title"] for c in concepts if c.get("title")],
        section=state.get("section"),
    )
    out = fresh | {"analysis": analysis.data(), "usage": budget.close(), "asked": question, "concepts": concepts}
    if not outline:
        out["observations"] = []
    if errors:
        out["errors"] = list(state.get("errors", [])) + errors
    return out
