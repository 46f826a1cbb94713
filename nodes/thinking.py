"""`thinking`: short observations on what the research has found so far."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from deepresearch.config import get_context, validate_question
from deepresearch.events import emit
from deepresearch.evidence import DATA_RULE, evidence_blocks
from deepresearch.llm import ModelCallError, chat
from deepresearch.state.budget import Budget, BudgetExhausted, empty_usage

PROMPT = """You are a careful research assistant. Question: {question}

Sources found so far:
{evidence}

Your earlier notes:
{notes}

In two to four sentences: what do the sources establish, and what is still unknown?"""

KEEP_NOTES = 3  # older notes are dropped so prompts do not grow with every iteration


def thinking(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    finished = bool(state.get("stopped_by") and state.get("report"))
    other_question = bool(state.get("asked")) and state.get("asked") != state.get("question")
    if finished or other_question:
        state = {"question": state["question"]}  # a new question on a finished thread: start afresh
        fresh = {
            "iteration": 0, "observations": [], "gaps": [], "tasks": [], "queries_done": [], "evidence": None,
            "report": "", "draft": "", "sources": [], "citations": [], "removed": [], "errors": [],
            "stopped_by": "", "usage": empty_usage(),
        }
    else:
        fresh = {}
    budget = Budget.of(ctx, state)
    iteration = state.get("iteration", 0)
    if iteration == 0:
        try:
            validate_question(state.get("question", ""))
        except ValueError as e:
            emit("error", node="thinking", cause=str(e))
            raise
        emit("started", question=state["question"][:300], section=state.get("section"))
        return fresh | {"observations": [], "usage": budget.close(), "asked": state["question"]}
    if budget.exhausted():
        return fresh | {"usage": budget.close()}  # knowledge_gap names the budget and stops
    evidence = state.get("evidence", [])[-8:]
    prompt = PROMPT.format(
        question=state["question"],
        evidence=evidence_blocks(evidence, max_chars=3000, per_source=400, full=False),
        notes="\n".join(state.get("observations", [])) or "(none)",
    )
    try:
        note = chat(ctx, budget, [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
                    node="thinking", max_output=200)
    except BudgetExhausted:
        return {"usage": budget.close()}
    except ModelCallError as e:
        emit("error", node="thinking", cause=e.cause)
        return {"usage": budget.close(), "errors": state.get("errors", []) + [{"node": "thinking", "cause": e.cause}]}
    notes = (state.get("observations", []) + [note[:1200]])[-KEEP_NOTES:]
    return {"observations": notes, "usage": budget.close()}
