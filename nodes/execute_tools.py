"""`execute_tools`: run the selected searches concurrently and record the evidence.

Each task goes to the backend of its own tool (a run may have several: wiki, pubmed, an
MCP tool…). Results are deduplicated by normalized URL, and by identifier (PMID, DOI, NCT
id, arXiv id) across backends, into the run's source registry: each new source gets the
next number and a stable key, and records the backend it came from; its full text goes
to the run's store (deepresearch.store) and only a snippet stays in state. A search that fails for good is
skipped with an `error` event. The searching itself is `deepresearch.tools.searching.run_searches`.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from deepresearch.config import Context, get_context
from deepresearch.llm.budget import Budget
from deepresearch.state.iterative import IterativeState
from deepresearch.tools.searching import run_searches


def execute_tools(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    new, errors, done = run_searches(
        ctx,
        budget,
        state.get("tasks", []),
        state.get("evidence", []),
        round_no=state.get("iteration", 0) + 1,
        section=state.get("section"),
        report_skipped=not state.get("queries_done"),
    )
    usage = budget.close()
    usage["iterations"] += 1
    return {
        "evidence": new,  # only the new sources: the channel appends them
        "queries_done": state.get("queries_done", []) + done,
        "iteration": state.get("iteration", 0) + 1,
        "errors": list(state.get("errors", [])) + errors,
        "usage": usage,
    }
