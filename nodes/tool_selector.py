"""`tool_selector`: turn the outstanding gaps into search tasks."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.llm import ModelCallError, structured
from deepresearch.state.budget import Budget, BudgetExhausted
from deepresearch.tools.registry import assign, done_key, primary, rotation, run_tools, tools_prompt

MAX_TASKS = 3


class AgentTask(BaseModel):
    gap: str = Field(description="The gap this search addresses.")
    tool: str = Field(description="The name of one of the available tools.")
    query: str = Field(description="A short search query (a few keywords).")


class AgentSelectionPlan(BaseModel):
    tasks: list[AgentTask] = Field(max_length=MAX_TASKS, description="One to three searches.")


PROMPT = """Question: {question}

Gaps still open:
{gaps}

Searches already done (do not repeat them): {done}

Available tools:
{tools}
Plan one to three searches, each a short keyword query for one gap, with the tool that fits that gap best."""


def _fresh(tasks: list[dict], done: list[str], first: str) -> list[dict]:
    seen = {q.lower().strip() for q in done}
    out = []
    for t in tasks:
        q = " ".join(t["query"].split())[:200]
        key = done_key(t["tool"], q, first).lower()
        if q and key not in seen:
            seen.add(key)
            out.append({**t, "query": q})
    return out[:MAX_TASKS]


def tool_selector(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    tools, first = run_tools(ctx), primary(ctx)
    question = state["question"]
    gaps = state.get("gaps") or [question]
    done = state.get("queries_done", [])
    fallback = rotation(gaps, tools, state.get("iteration", 0))
    if state.get("iteration", 0) == 0:  # the first search is the question itself, in each search backend
        first_tasks = [{"gap": question, "tool": t.name, "query": question[:300]} for t in tools if t.spec]
        return {"tasks": _fresh(first_tasks, done, first), "usage": budget.close()}
    prompt = PROMPT.format(
        question=question, gaps="\n".join(f"- {g}" for g in gaps), done="; ".join(done[-12:]) or "none",
        tools=tools_prompt(tools),
    )
    errors = state.get("errors", [])
    try:
        plan = structured(ctx, budget, [SystemMessage(content="You plan searches for a research assistant."),
                                        HumanMessage(content=prompt)],
                          AgentSelectionPlan, node="tool_selector", max_output=250)
        tasks = [{"gap": t.gap, "tool": assign(t.tool, tools), "query": t.query} for t in plan.tasks]
    except BudgetExhausted:
        tasks = []  # the gap queries below still run: searching costs no tokens
    except ModelCallError as e:
        emit("error", node="tool_selector", cause=e.cause)
        errors = errors + [{"node": "tool_selector", "cause": e.cause}]
        tasks = []
    tasks = _fresh(tasks, done, first) or _fresh(fallback, done, first)
    return {"tasks": tasks, "usage": budget.close(), "errors": errors}
