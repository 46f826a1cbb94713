"""`thinking`: the question's concepts (before the first search), then short observations on
what the research has found so far (not with the tiny local model, whose notes would feed
only its own judgement).

The concepts (deepresearch.research.concepts) come from the question's own words linked to the search
backend's titles, plus, with a capable model, what the model proposes; they decide coverage in
`knowledge_gap`. A deep section arrives with its concepts already set by the planner."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from deepresearch.research import concepts as concept_lib
from deepresearch.research.analysis import PROMPT as ANALYSIS_PROMPT, ConceptProposal, merged_concepts
from deepresearch.research.linking import linking_backend
from deepresearch.brief import brief_of, carry_over, language_of
from deepresearch.config import get_context, tiny_model, validate_question
from deepresearch.events import emit
from deepresearch.report.evidence import DATA_RULE, evidence_blocks, notes_text
from deepresearch.llm.calls import ModelCallError, chat, structured
from deepresearch.llm.budget import Budget, BudgetExhausted, empty_usage

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
        # a new question on a finished thread: start afresh (keeping what `clarify` set for it)
        state = {"question": state["question"], **carry_over(state)}
        fresh = {
            "iteration": 0, "observations": [], "gaps": [], "tasks": [], "queries_done": [], "evidence": None,
            "report": "", "draft": "", "sources": [], "citations": [], "removed": [],
            "errors": state.get("errors", []), "stopped_by": "", "usage": empty_usage(), "concepts": [],
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
        emit("started", question=state["question"][:300], section=state.get("section"),
             language=language_of(state, ctx))
        found, errors = question_concepts(ctx, budget, state)
        emit("concepts", concepts=[c["name"] for c in found],
             linked=[c["title"] for c in found if c.get("title")], section=state.get("section"))
        out = fresh | {"observations": [], "usage": budget.close(), "asked": state["question"], "concepts": found}
        if errors:
            out["errors"] = state.get("errors", []) + errors
        return out
    if budget.exhausted():
        return fresh | {"usage": budget.close()}  # knowledge_gap names the budget and stops
    if tiny_model(ctx):  # its notes would only feed its own judgement: coverage decides instead
        return {"usage": budget.close()}
    evidence = state.get("evidence", [])[-8:]
    prompt = PROMPT.format(
        question=brief_of(state),
        evidence=evidence_blocks(evidence, max_chars=3000, per_source=400, full=False),
        notes=notes_text(state),
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


def question_concepts(ctx, budget: Budget, state: dict) -> tuple[list[dict], list[dict]]:
    """(concepts, errors): given ones (a deep section); else, with the tiny model, the question's
    own words read by the rules; with a capable model, its analysis checked against the backend
    (deepresearch.research.analysis)."""
    if state.get("concepts"):
        return list(state["concepts"]), []
    question = state["question"]
    backend = linking_backend(ctx)
    if tiny_model(ctx):
        return concept_lib.extract(question, backend), []
    proposal, errors = None, []
    try:
        proposal = structured(ctx, budget, [HumanMessage(content=ANALYSIS_PROMPT.format(question=brief_of(state)))],
                              ConceptProposal, node="thinking", max_output=300)
    except BudgetExhausted:
        pass
    except ModelCallError as e:
        emit("error", node="thinking", cause=e.cause)
        errors = [{"node": "thinking", "cause": e.cause}]
    return merged_concepts(proposal, question, backend), errors
