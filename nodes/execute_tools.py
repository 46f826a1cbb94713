"""`execute_tools`: run the selected searches concurrently and record the evidence.

Results are deduplicated by normalized URL into the run's source registry: each new source
gets the next number and a stable key; its full text goes to the text store and only a
snippet stays in state. A search that fails for good is skipped with an `error` event.
"""

from __future__ import annotations

from concurrent.futures import wait

from langchain_core.runnables.config import ContextThreadPoolExecutor

from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.llm import describe
from deepresearch.pacing import pacer
from deepresearch.state.budget import WRITER_SECONDS_SHARE, Budget
from deepresearch.state.sources import TEXTS, snippet, source_key
from deepresearch.tools import get_search


def execute_tools(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    tasks = state.get("tasks", [])
    errors = list(state.get("errors", []))
    try:
        backend = get_search(ctx.search, base_url=ctx.search_base_url, timeout=ctx.request_timeout,
                             max_retries=ctx.max_retries)
    except ValueError as e:  # a bad search spec from a context that skipped the CLI's checks
        emit("error", node="execute_tools", cause=str(e))
        usage = budget.close()
        usage["iterations"] += 1
        return {"iteration": state.get("iteration", 0) + 1, "usage": usage,
                "errors": errors + [{"node": "execute_tools", "cause": str(e)}]}
    if getattr(backend, "skipped", None) and not state.get("queries_done"):
        shown = "; ".join(backend.skipped[:5]) + (" …" if len(backend.skipped) > 5 else "")
        emit("error", node="execute_tools", cause=f"skipped {len(backend.skipped)} unreadable file(s): {shown}")
    gate = pacer("search", ctx.search, ctx.search_concurrency, ctx.search_rpm)

    def run(task: dict):
        emit("searching", query=task["query"], tool=backend.name)
        try:
            with gate.slot():
                results = backend.search(task["query"], ctx.results_per_query)
        except Exception as e:  # noqa: BLE001 - a failed search is skipped, never fatal
            emit("error", node="execute_tools", cause=describe(e), query=task["query"])
            return task, None, describe(e)
        emit("search_complete", query=task["query"], results=len(results))
        return task, results, None

    # searching spends the loop's time too: none when its share is gone, and no waiting past it
    window = budget.max_seconds * (1 - WRITER_SECONDS_SHARE) - budget.seconds_used()
    if tasks and window <= 0.2:
        emit("budget", reason="max_seconds", usage=budget.close())
        tasks = []
    outcomes = []
    if tasks:
        pool = ContextThreadPoolExecutor(max_workers=min(len(tasks), ctx.search_concurrency))
        futures = [pool.submit(run, t) for t in tasks]
        done, late = wait(futures, timeout=window)
        pool.shutdown(wait=False, cancel_futures=True)  # a search still running is left behind
        for t, f in zip(tasks, futures):
            if f in done:
                outcomes.append(f.result())
            else:
                cause = "search did not finish within the time budget"
                emit("error", node="execute_tools", cause=cause, query=t["query"])
                outcomes.append((t, None, cause))

    evidence = list(state.get("evidence", []))
    known = len(evidence)
    by_key = {s["key"]: s for s in evidence}
    for task, results, error in outcomes:
        if error:
            errors.append({"node": "execute_tools", "cause": error, "query": task["query"]})
            continue
        for r in results:
            key = source_key(r.url)
            if key in by_key or not r.text.strip():
                continue
            TEXTS.put(key, r.text)
            source = {"id": len(evidence) + 1, "key": key, "title": r.title, "url": r.url,
                      "backend": r.backend, "snippet": snippet(r.text), "query": task["query"]}
            evidence.append(source)
            by_key[key] = source
    usage = budget.close()
    usage["iterations"] += 1
    return {
        "evidence": evidence[known:],  # only the new sources: the channel appends them
        "queries_done": state.get("queries_done", []) + [t["query"] for t in tasks],
        "iteration": state.get("iteration", 0) + 1,
        "errors": errors,
        "usage": usage,
    }
