"""Running a graph from Python or the CLI: mode choice, config, streaming, review, resume.

from deepresearch.runtime.runner import research
result = research("How do bees navigate?", Context(max_iterations=2), on_event=print)
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from deepresearch.config import MAX_QUESTION_CHARS, Context, validate_question  # noqa: F401 (re-exported)
from deepresearch.llm.budget import recursion_limit

POOL_SPARE = 2  # pool workers beyond one per section (see run_config)
OUTPUT_KEYS = (
    "report",
    "sources",
    "usage",
    "stopped_by",
    "citations",
    "removed",
    "errors",
    "outline",
    "sections",
    "concepts",
    "covered",
    "unanswered",
    "rewrite_history",
    "charts",
    "charts_skipped",
    "provenance",
    "citation_style",
)

_DEEP_HINTS = re.compile(
    r"\b(compare|comparison|versus|vs\.?|overview|history of|survey|report on|pros and cons|"
    r"in depth|in-depth|comprehensive|advantages and disadvantages|landscape|evolution of)\b",
    re.IGNORECASE,
)


BRIEF_KEYS = ("brief", "language")  # the research brief and the report's language (node `clarify`)


def choose_mode(question: str) -> str:
    """`auto`: deep for broad or many-part questions, iterative for focused ones."""
    words = len(question.split())
    if _DEEP_HINTS.search(question) or question.count("?") >= 2 or words >= 30:
        return "deep"
    return "iterative"


def build_graph(mode: str, checkpointer=None, store=None):
    if mode == "deep":
        from deepresearch.graphs import deep

        return deep.build(checkpointer=checkpointer, store=store)
    if mode == "iterative":
        from deepresearch.graphs import iterative

        return iterative.build(checkpointer=checkpointer, store=store)
    raise ValueError(f"unknown mode {mode!r}; valid: auto, iterative, deep")


def _without_credentials(value):
    """A URL setting without `user:password@` (the run's settings are stored in checkpoints)."""
    if isinstance(value, str) and "://" in value and "@" in value:
        parts = urlsplit(value)
        if parts.username or parts.password:
            return urlunsplit(
                (
                    parts.scheme,
                    (parts.hostname or "") + (f":{parts.port}" if parts.port else ""),
                    parts.path,
                    parts.query,
                    parts.fragment,
                )
            )
    return value


def _stored_setting(key: str, value):
    if key == "mcp_servers":  # a config given as a dict: its env and header values masked
        from deepresearch.tools.mcp import public_config

        return public_config(value)
    if isinstance(value, dict):  # search_base_urls
        return {k: _without_credentials(v) for k, v in value.items()}
    return _without_credentials(value)


def run_config(thread_id: str, ctx: Context, mode: str, question: str) -> dict:
    """The run's config: thread, recursion bound, the settings to resume with, and a thread
    pool big enough for every section at once (LangGraph's default pool has only
    min(32, cores + 4) workers). How many sections really run at once is the context's
    `section_concurrency`: LangGraph's own `max_concurrency` cannot be that limit, as its sync
    stream parks a waiter in the same pool (a limit of 1 deadlocks, checked on 1.2.22)."""
    return {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": recursion_limit(ctx),
        "max_concurrency": ctx.max_sections + POOL_SPARE,
        "metadata": {
            "dr_question": question[:500],
            "dr_mode": mode,
            # unset settings (None) are left out: every checkpoint carries these, and resume reads
            # a missing one as None again
            "dr_context": json.dumps({k: _stored_setting(k, v) for k, v in asdict(ctx).items() if v is not None}),
            "dr_started": datetime.now(UTC).isoformat(timespec="seconds"),
        },
    }


def _stream(graph, inp, config, ctx, on_event) -> dict:
    final: dict = {}
    for mode, chunk in graph.stream(inp, config, context=ctx, stream_mode=["custom", "values"]):
        if mode == "custom":
            if on_event:
                on_event(chunk)
        else:
            final = chunk
    return final


def answer_reviews(snapshot, on_review: Callable[[dict], Any] | None) -> Command | None:
    """The resume command answering every pending interrupt of `snapshot` with
    `on_review(value)`, or None when there is nobody to answer (no callback, or it
    returned None): the run then stays waiting in its checkpoint."""
    if on_review is None:
        return None
    answers = {}
    for i in snapshot.interrupts:
        answer = on_review(i.value)
        if answer is None:
            return None
        answers[i.id] = answer
    return Command(resume=answers)  # a map by interrupt id also works with several pending


def drive(
    graph,
    inp,
    config,
    ctx: Context,
    *,
    on_event=None,
    on_review: Callable[[dict], Any] | None = None,
    start: dict | None = None,
) -> dict:
    """Stream until the graph ends or waits for a review nobody answers; return the final values.

    `on_review(request) -> answer | None` answers outline reviews; None (or no callback)
    leaves the run waiting: the result then has `waiting` (the pending review requests).
    `start`: the config of an earlier checkpoint of the thread to run again from (once).
    A new question's reading is prepared first (deepresearch.understanding.reader.prepare): loading
    is start-up, outside the run's time budget, which counts the graph's steps."""
    if isinstance(inp, dict) and inp.get("question"):
        _prepare(ctx, inp["question"], on_event)
    while True:
        final = _stream(graph, inp, start or config, ctx, on_event)
        start = None
        snapshot = graph.get_state(config)
        if not snapshot.interrupts:
            return final
        inp = answer_reviews(snapshot, on_review)
        if inp is None:
            return {**(final or snapshot.values), "waiting": [i.value for i in snapshot.interrupts]}


def _prepare(ctx: Context, question: str, on_event) -> None:
    from deepresearch.events import forwarded_to
    from deepresearch.understanding.reader import prepare

    with forwarded_to(on_event or (lambda _event: None)):  # what loading says (an embedder that cannot be made)
        try:
            prepare(ctx, question)
        except Exception:  # noqa: BLE001 - the run meets the same fault in its first step and reports it
            pass


# The channel a checkpoint's pending writes name for a saved resume value. LangGraph keeps the name
# private (the RESUME constant of its internal constants module) and has no public way to ask whether a thread's
# interrupt has an answer waiting; tests/test_edit_cli.py kills an edit and resumes it.
RESUME_WRITE = "__resume__"


def answer_saved(graph, config) -> bool:
    """A resume value is saved for the thread's pending interrupt (an answer whose work was cut
    off by a crash): continuing the thread does that work."""
    saved = graph.checkpointer.get_tuple(config) if graph.checkpointer else None
    return saved is not None and any(w[1] == RESUME_WRITE for w in saved.pending_writes or [])


def provider_failure(final: dict) -> str | None:
    """The cause, when the run produced nothing a model wrote because the provider failed:
    no model call succeeded and a model call failed (a wrong key, a server down). None for a
    run that researched something: a budget stop before any call, or faults it absorbed."""
    if (final.get("usage") or {}).get("llm_calls", 0) or final.get("stopped_by") in (
        "max_seconds",
        "max_tokens",
        "max_cost",
    ):
        return None  # a model answered, or the budget ran out (calls cut by the deadline): a budget stop
    causes = [
        e.get("cause")
        for e in final.get("errors") or []  # a budget stop is no provider failure
        if e.get("cause")
        and e.get("node") != "execute_tools"
        and "tool" not in e
        and not str(e["cause"]).startswith("budget exhausted")
    ]
    return causes[-1] if causes else None


def result_of(final: dict, *, question: str, mode: str, thread_id: str) -> dict:
    out = {"question": question, "mode": mode, "thread_id": thread_id}
    # charts_skipped: only when no chart was drawn (a drawn one clears it)
    out.update(
        {
            k: final[k]
            for k in OUTPUT_KEYS + BRIEF_KEYS
            if k in final and not (k == "charts_skipped" and final[k] is None)
        }
    )
    if final.get("citation_style") and final.get("report"):  # delivered in the run's citation style
        from deepresearch.report.citation_style import delivered

        out["report"] = delivered(final)
    if "waiting" in final:
        out["waiting"] = final["waiting"]
    return out


def research(
    question: str,
    context: Context | dict | None = None,
    *,
    mode: str | None = None,
    checkpointer=None,
    store=None,
    thread_id: str | None = None,
    on_event=None,
    on_review=None,
    concurrency: int | None = None,
) -> dict:
    """Run one research question to the end and return the result dict.

    `checkpointer` and `store` (where the sources' full texts are kept): e.g. from
    `deepresearch.runtime.checkpoint.open_checkpointer(db)` and `open_store(db)`. Without a
    checkpointer, the run is kept in memory, its texts too."""
    ctx = context if isinstance(context, Context) else Context(**(context or {}))
    question = validate_question(question)
    mode = mode or ctx.mode
    if mode == "auto":
        mode = choose_mode(question)
    if concurrency:
        ctx = replace(ctx, section_concurrency=concurrency)  # sections at once, as the CLI's --concurrency
    if checkpointer is None:
        checkpointer, store = InMemorySaver(), store if store is not None else InMemoryStore()
    graph = build_graph(mode, checkpointer, store)
    thread_id = thread_id or uuid.uuid4().hex
    config = run_config(thread_id, ctx, mode, question)
    final = drive(graph, {"question": question}, config, ctx, on_event=on_event, on_review=on_review)
    return result_of(final, question=question, mode=mode, thread_id=thread_id)
