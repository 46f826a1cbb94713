"""`tool_selector`: turn the outstanding gaps into search tasks."""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.llm import ModelCallError, structured
from deepresearch.state.budget import Budget, BudgetExhausted

MAX_TASKS = 3


class AgentTask(BaseModel):
    gap: str = Field(description="The gap this search addresses.")
    tool: str = Field(description="The search tool to use.")
    query: str = Field(description="A short search query (a few keywords).")


class AgentSelectionPlan(BaseModel):
    tasks: list[AgentTask] = Field(max_length=MAX_TASKS, description="One to three searches.")


PROMPT = """Question: {question}

Gaps still open:
{gaps}

Searches already done (do not repeat them): {done}

Available tool: "{tool}" ({tool_help}).
Plan one to three searches, each a short keyword query for one gap."""

TOOL_HELP = {
    "wiki": "an encyclopedia of article summaries; query with topic names",
    "docs": "the user's own documents",
    "tavily": "web search",
}


def _tool_name(spec: str) -> str:
    return spec.split(":", 1)[0]


def _fresh(tasks: list[dict], done: list[str]) -> list[dict]:
    seen = {q.lower().strip() for q in done}
    out = []
    for t in tasks:
        q = " ".join(t["query"].split())[:200]
        if q and q.lower() not in seen:
            seen.add(q.lower())
            out.append({**t, "query": q})
    return out[:MAX_TASKS]


def tool_selector(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    tool = _tool_name(ctx.search)
    question = state["question"]
    gaps = state.get("gaps") or [question]
    done = state.get("queries_done", [])
    fallback = [{"gap": g, "tool": tool, "query": g[:120]} for g in gaps]
    if state.get("iteration", 0) == 0:  # the first search is the question itself
        return {"tasks": _fresh([{"gap": question, "tool": tool, "query": question[:300]}], done), "usage": budget.close()}
    prompt = PROMPT.format(
        question=question, gaps="\n".join(f"- {g}" for g in gaps), done="; ".join(done[-12:]) or "none",
        tool=tool, tool_help=TOOL_HELP.get(tool, "search"),
    )
    errors = state.get("errors", [])
    try:
        plan = structured(ctx, budget, [SystemMessage(content="You plan searches for a research assistant."),
                                        HumanMessage(content=prompt)],
                          AgentSelectionPlan, node="tool_selector", max_output=250)
        tasks = [{"gap": t.gap, "tool": tool, "query": t.query} for t in plan.tasks]
    except BudgetExhausted:
        tasks = []  # the gap queries below still run: searching costs no tokens
    except ModelCallError as e:
        emit("error", node="tool_selector", cause=e.cause)
        errors = errors + [{"node": "tool_selector", "cause": e.cause}]
        tasks = []
    tasks = _fresh(tasks, done) or _fresh(fallback, done)
    return {"tasks": tasks, "usage": budget.close(), "errors": errors}
