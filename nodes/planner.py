"""`planner`: an outline for the report (a title, background, sections with key questions).

Re-run with the person's comment when the outline review asks for a revision.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from deepresearch.config import get_context, validate_question
from deepresearch.events import emit
from deepresearch.llm import ModelCallError, structured
from deepresearch.state.budget import Budget, BudgetExhausted
from deepresearch.state.deep import ReportPlan, outline_view

SYSTEM = "You plan research reports. Each section must answer one distinct, searchable question."

PROMPT = """Research question: {question}

Plan a report with at most {max_sections} sections. Give it a title, one or two sentences of
background, and for each section a short title and the key question it answers."""

REVISE = """

The current outline is:
{outline}

A reviewer asked for this change: {comment}
Rewrite the outline to address the comment."""


def fallback_plan(question: str) -> dict:
    return {"title": question[:150], "background": "",
            "sections": [{"title": "Overview", "key_question": question[:300]}]}


def planner(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    comment = state.get("review_comment")
    if not comment:  # a fresh plan: nothing of an earlier question on this thread carries over
        state = {"question": state.get("question", "")}
    budget = Budget.of(ctx, state)
    question = state.get("question", "")
    try:
        validate_question(question)
    except ValueError as e:
        emit("error", node="planner", cause=str(e))
        raise
    emit("planning", comment=comment or "")
    prompt = PROMPT.format(question=question, max_sections=ctx.max_sections)
    if comment and state.get("plan"):
        outline = outline_view(state["plan"])
        prompt += REVISE.format(
            outline="\n".join([f"Title: {outline['title']}"] + [f"- {s['title']}: {s['key_question']}"
                                                                 for s in outline["sections"]]),
            comment=comment,
        )
    errors = list(state.get("errors", []))
    try:
        plan = structured(ctx, budget, [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)], ReportPlan,
                          node="planner", max_output=600).model_dump()
        plan["title"] = plan["title"].strip()[:150]
        plan["sections"] = [{"title": s["title"].strip()[:100], "key_question": s["key_question"].strip()[:300]}
                            for s in plan["sections"][: ctx.max_sections]]
    except (BudgetExhausted, ModelCallError) as e:
        cause = e.cause if isinstance(e, ModelCallError) else str(e)
        emit("error", node="planner", cause=cause)
        errors.append({"node": "planner", "cause": cause})
        plan = state.get("plan") or fallback_plan(question)
    emit("outline", outline=outline_view(plan))
    update = {"plan": plan, "outline": outline_view(plan), "review_comment": None, "usage": budget.close(),
              "errors": errors}
    if not comment:  # a fresh plan: forget results of an earlier question on this thread
        update |= {"section_results": None, "review_round": 0, "report": "", "stopped_by": "", "removed": [],
                   "sources": [], "citations": [], "sections": []}
    return update
