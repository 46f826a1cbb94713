"""`thinking`: short observations on what the research has found so far (not with the tiny local
model, whose notes would feed only its own judgement; nor before the first search, when nothing is
found yet). The question itself was read by `analyse`."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from deepresearch.brief import brief_of
from deepresearch.config import Context, get_context, tiny_model
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import chat
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.evidence import DATA_RULE, evidence_blocks, notes_text
from deepresearch.state.iterative import IterativeState

PROMPT = """You are a careful research assistant. Question: {question}

Sources found so far:
{evidence}

Your earlier notes:
{notes}

In two to four sentences: what do the sources establish, and what is still unknown?"""

KEEP_NOTES = 3  # older notes are dropped so prompts do not grow with every iteration


def thinking(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    if state.get("iteration", 0) == 0 or budget.exhausted():
        return {"usage": budget.close()}  # nothing found yet; or knowledge_gap names the budget and stops
    if tiny_model(ctx):  # its notes would only feed its own judgement: coverage decides instead
        return {"usage": budget.close()}
    evidence = state.get("evidence", [])[-8:]
    prompt = PROMPT.format(
        question=brief_of(state),
        evidence=evidence_blocks(evidence, max_chars=3000, per_source=400, full=False),
        notes=notes_text(state),
    )
    try:
        note = chat(
            ctx,
            budget,
            [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
            node="thinking",
            max_output=200,
        )
    except BudgetExhausted:
        return {"usage": budget.close()}
    except ModelCallError as e:
        emit("error", node="thinking", cause=e.cause)
        return {"usage": budget.close(), "errors": state.get("errors", []) + [{"node": "thinking", "cause": e.cause}]}
    notes = (state.get("observations", []) + [note[:1200]])[-KEEP_NOTES:]
    return {"observations": notes, "usage": budget.close()}
