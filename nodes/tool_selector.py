"""`tool_selector`: turn the outstanding gaps into search tasks.

The first round searches the question in each of the run's tools (its `--search` sources and
its MCP search tools, at most MAX_FIRST_TOOLS of them: see `first_round_tools`) and each of its
concepts. Later, a gap that is an uncovered concept becomes a targeted query for that concept
(its linked title, then the question's own words for it); other gaps (a capable model's) are
planned by the model, which may choose any of the run's tools."""

from __future__ import annotations

import time
from itertools import zip_longest
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from deepresearch.brief import brief_of, language_of
from deepresearch.config import Context, get_context
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.state.iterative import IterativeState
from deepresearch.text.sentences import STOP
from deepresearch.text.words import tokens
from deepresearch.tools.base import search_deadline
from deepresearch.tools.registry import Tool, assign, done_key, primary, rotation, run_tools, tools_prompt
from deepresearch.understanding.reader import analysis_of

MAX_TASKS = 3
MAX_FIRST = 8  # the question and its concepts
MAX_FIRST_TOOLS = 4  # the tools the first round sends the question to
MAX_PAGES = 2  # later pages of an open asked thing's search, once every way of saying it was searched


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


def _fresh(tasks: list[dict[str, Any]], done: list[str], first: str, limit: int = MAX_TASKS) -> list[dict[str, Any]]:
    seen = {q.lower().strip() for q in done}
    out = []
    for t in tasks:
        q = " ".join(t["query"].split())[:200]
        key = done_key(t["tool"], q, first, t.get("page", 0)).lower()
        if q and key not in seen:
            seen.add(key)
            out.append({**t, "query": q})
    return out[:limit]


def first_round_tools(tools: list[Tool]) -> list[Tool]:
    """The tools the first round sends the question to, at most MAX_FIRST_TOOLS: taken in
    turn from the `--search` sources (in the order given) and the MCP servers (each server's
    first search tool, in the config's order); the servers' other search tools fill what is
    left. The others stay choices of the selector in later rounds."""
    sources = [t for t in tools if t.spec]
    mcp = [t for t in tools if not t.spec]
    servers: dict[str, list[Tool]] = {}
    for t in mcp:
        servers.setdefault(t.name.split("/", 1)[0], []).append(t)
    firsts = [group[0] for group in servers.values()]
    turns = [t for pair in zip_longest(sources, firsts) for t in pair if t is not None]
    rest = [t for t in mcp if t not in firsts]
    return (turns + rest)[:MAX_FIRST_TOOLS]


def concept_task(concept: dict[str, Any], done: list[str], tool: str) -> dict[str, Any] | None:
    """The next untried query for an uncovered concept."""
    seen = {q.lower().strip() for q in done}
    for q in dict.fromkeys([concept["query"], concept.get("phrase") or "", concept["name"]]):
        q = " ".join(q.split())[:200]
        if q and q.lower() not in seen:
            return {"gap": concept["name"], "tool": tool, "query": q, "concept": concept["name"]}
    return None


def concept_tasks(concept: dict[str, Any], done: list[str], first: str, tools: list[str]) -> list[dict[str, Any]]:
    """A concept's next searches: in the run's first source when it names one of its documents (a
    linked title); else in each of the tools the question goes to, where the user's own material
    (a docs folder, an MCP server's notes) may be what holds it ("Project Heron")."""
    where = [first] if concept.get("title") else list(dict.fromkeys([first, *tools]))
    return [t for name in where if (t := concept_task(concept, done, name))]


def asked_tasks(asked: dict[str, Any], done: list[str], tool: str) -> list[dict[str, Any]]:
    """Searches for an asked thing no retrieved sentence answers, said other ways: its subject's name
    with what is asked of it ("Mount Zorn height"), or the thing a role starts from with the role
    ("Zorn Cantata conductor"); then what is asked alone; once all were searched, the next page of the
    first one's results (up to MAX_PAGES pages more)."""
    stop = STOP | {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
    asked_words = " ".join(w for w in tokens(asked.get("words") or "") if w not in stop)
    if asked.get("role"):
        queries = [f"{asked['via']} {asked['role']}", f"{asked['role']} {asked['via']} {asked_words}"]
    else:
        subject = asked.get("subject") or ""
        queries = [f"{subject} {asked_words}", asked_words if subject else asked.get("text", "")]
    seen = {q.lower().strip() for q in done}
    out = []
    tried = []
    for q in queries:
        q = " ".join(q.split())[:200]
        if q and len(q.split()) > 1:
            tried.append(q)
            if q.lower() not in seen:
                seen.add(q.lower())
                out.append({"gap": asked["gap"], "tool": tool, "query": q})
    if out or not tried:
        return out
    # every way of saying it was searched and the gap is still open: the next results of the first
    for page in range(1, MAX_PAGES + 1):
        if done_key(tool, tried[0], tool, page).lower() not in seen:
            return [{"gap": asked["gap"], "tool": tool, "query": tried[0], "page": page}]
    return []


def tool_selector(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    # listing the MCP tools (once per process) may spend half of the loop's time left: the
    # searches of the other tools get the rest
    with search_deadline(time.monotonic() + budget.loop_seconds_left() / 2):
        tools = run_tools(ctx)
    first = primary(ctx)
    question = state["question"]
    done = state.get("queries_done", [])
    concepts = {c["name"]: c for c in state.get("concepts") or []}
    firsts = [t.name for t in first_round_tools(tools)]
    if (
        state.get("iteration", 0) == 0
    ):  # the question as read (slips corrected) in each tool (up to a cap), then each concept
        read = analysis_of(state).read
        first_tasks = [{"gap": question, "tool": name, "query": read[:300]} for name in firsts]
        first_tasks += [t for c in concepts.values() for t in concept_tasks(c, done, first, firsts)]
        return {"tasks": _fresh(first_tasks, done, first, limit=MAX_FIRST), "usage": budget.close()}
    gaps = state.get("gaps") or [question]
    targeted = [t for g in gaps if g in concepts for t in concept_tasks(concepts[g], done, first, firsts)]
    unanswered = {a["gap"]: a for a in state.get("unanswered") or []}
    targeted += [t for g in gaps if g in unanswered for t in asked_tasks(unanswered[g], done, first)]
    gaps = [g for g in gaps if g not in concepts and g not in unanswered]
    if not gaps:
        return {"tasks": _fresh(targeted, done, first, limit=MAX_FIRST), "usage": budget.close()}
    fallback = rotation(gaps, tools, state.get("iteration", 0))
    prompt = PROMPT.format(
        question=brief_of(state),
        gaps="\n".join(f"- {g}" for g in gaps),
        done="; ".join(done[-12:]) or "none",
        tools=tools_prompt(tools),
    )
    if "wiki" in str(ctx.search) and language_of(state, ctx) != "en":  # searches keep the backend's language
        prompt += "\nThe encyclopedia is in English: write the queries in English."
    errors = state.get("errors", [])
    try:
        plan = structured(
            ctx,
            budget,
            [SystemMessage(content="You plan searches for a research assistant."), HumanMessage(content=prompt)],
            AgentSelectionPlan,
            node="tool_selector",
            max_output=250,
        )
        tasks = [{"gap": t.gap, "tool": assign(t.tool, tools), "query": t.query} for t in plan.tasks]
    except BudgetExhausted:
        tasks = []  # the gap queries below still run: searching costs no tokens
    except ModelCallError as e:
        emit("error", node="tool_selector", cause=e.cause)
        errors = errors + [{"node": "tool_selector", "cause": e.cause}]
        tasks = []
    tasks = _fresh(tasks, done, first) or _fresh(fallback, done, first)
    return {"tasks": _fresh(targeted + tasks, done, first, limit=MAX_FIRST), "usage": budget.close(), "errors": errors}
