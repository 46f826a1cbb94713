"""Sync nodes of a served graph run in threads of their own, not in the event loop's pool.

Served by `langgraph dev` or LangGraph Server, a graph runs on an event loop, and LangGraph
hands every sync node to the loop's default executor: min(32, CPUs + 4) threads (6 on 2
CPUs), shared by every run the server executes at once. A deep run's section holds one of
them for the whole section (its research loop runs inside the node), so a few runs used the
pool up and the others queued behind them: 16 runs of 3 sections took 4.9x one run's time
(bench/server.py). `own_threads(builder)` gives every sync node of a graph an async path that
runs it in this module's pool instead, which grows to `NODE_THREADS` threads as needed (they
wait on the network, not the CPU). The sync path (the CLI, `graph.stream`) is unchanged.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.runnables.config import run_in_executor
from langgraph.graph import StateGraph

Builder = TypeVar("Builder", bound=StateGraph[Any, Any, Any, Any])

NODE_THREADS = 512  # a deep run holds at most one per section in flight (plus short-lived others)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=NODE_THREADS, thread_name_prefix="deepresearch-node")
        return _pool


def _in_pool(func):
    """An async twin of the sync node `func` that runs it in `pool()`, in a copy of the
    caller's context (the run's config, stream writer and runtime, as LangGraph's own
    executor hand-off does)."""

    @functools.wraps(func)
    async def afunc(*args, **kwargs):
        def call():
            try:
                return func(*args, **kwargs)
            except StopIteration as exc:  # cannot cross an asyncio future (as in langchain's run_in_executor)
                raise RuntimeError from exc

        return await asyncio.get_running_loop().run_in_executor(pool(), contextvars.copy_context().run, call)

    return afunc


def _executor_backed(afunc) -> bool:
    """The async path LangGraph gives a sync node: the loop's default executor."""
    return isinstance(afunc, functools.partial) and afunc.func is run_in_executor


def own_threads(builder: Builder) -> Builder:
    """`builder` with each sync node's async path running in `pool()` (before `compile()`)."""
    for spec in builder.nodes.values():
        runnable: Any = spec.runnable  # a function's node: LangGraph's RunnableCallable, with func and afunc
        if getattr(runnable, "func", None) is not None and _executor_backed(getattr(runnable, "afunc", None)):
            runnable.afunc = _in_pool(runnable.func)
    return builder
