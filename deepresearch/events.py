"""Progress events on LangGraph's custom stream.

Every event is a small dict with a `type` from EVENT_TYPES. Consumers receive them with
`stream_mode="custom"` (CLI, Python, the SDK, Studio). Events are redacted: a secret from
the environment never leaves in one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

T = TypeVar("T", bound=Hashable)

EVENT_TYPES = (
    "clarify",
    "started",
    "concepts",
    "grounding",
    "planning",
    "outline",
    "searching",
    "search_complete",
    "judging",
    "looping",
    "writing",
    "synthesizing",
    "section_started",
    "section_researched",
    "section_complete",
    "dependency_dropped",
    "verifying",
    "chart",
    "complete",
    "edit",
    "error",
    "budget",
    "model_mode",
    "indexing",
)

SECRET_ENV = (
    "OPENAI_API_KEY",
    "TAVILY_API_KEY",
    "LANGSMITH_API_KEY",
    "ANTHROPIC_API_KEY",
    "NCBI_API_KEY",
    "OLLAMA_API_KEY",
    "VLLM_API_KEY",
    "LLAMACPP_API_KEY",
    "LMSTUDIO_API_KEY",
)  # deepresearch.llm.providers
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|tvly-[A-Za-z0-9_\-]{8,})")


_registered: set[str] = set()


def register_secrets(values) -> None:
    """Secrets the run knows besides the environment's keys (an MCP server's `env` and header
    values): masked from then on wherever `redact` applies, retrieved content included. Values
    shorter than 8 characters, and plain lower-case words, are not taken (`"1"`, `"true"` or
    `"production"` are settings, and masking them would cut words out of every text)."""
    for v in values:
        if isinstance(v, str) and len(v) >= 8 and not (v.isalpha() and v.islower()) and not v.isspace():
            _registered.add(v)


def _environment(names: tuple[str, ...]) -> list[str]:
    """The values of the variables `names` that are set, read as they are now (a variable set or
    changed a moment ago included). CPython keeps os.environ's current values in a dict of encoded
    names: a lookup there costs a tenth of os.environ.get, which raises and catches a KeyError for
    every variable that is not set."""
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        return [v for name in names if (v := os.environ.get(name)) is not None]
    decode = os.environ.decodevalue
    return [decode(v) for key in _encoded(names) if (v := data.get(key)) is not None]


@functools.cache
def _encoded(names: tuple[str, ...]) -> tuple:
    return tuple(os.environ.encodekey(name) for name in names)


def _secrets() -> list[str]:
    env = [v for v in _environment(SECRET_ENV) if len(v) >= 6]
    return sorted({*env, *_registered}, key=len, reverse=True)  # the longest first: no half-masked secret


def secrets() -> list[str]:
    """Every secret the process knows now (for `redact(text, secrets)` over many strings)."""
    return _secrets()


def redact(text: Any, secrets: list[str] | None = None) -> str:
    """`text` with every secret from the environment (and anything key-shaped) masked.
    (`secrets`: the environment's secrets, when the caller has read them already.)"""
    s = str(text)
    for value in _secrets() if secrets is None else secrets:
        s = s.replace(value, "***")
    return _KEYLIKE.sub("***", s) if "sk-" in s or "tvly-" in s else s  # every key shape holds one of the two


_forward: contextvars.ContextVar[Callable[[dict], None] | None] = contextvars.ContextVar("events_forward", default=None)


@contextlib.contextmanager
def forwarded_to(writer: Callable[[dict], None]):
    """Within the block, events go to `writer` rather than to the current graph's custom stream
    (a section's loop run inside a node: its events reach the parent's stream tagged with the
    section, without the loop streaming them itself)."""
    token = _forward.set(writer)
    try:
        yield
    finally:
        _forward.reset(token)


def emit(type_: str, **fields: Any) -> None:
    """Send one progress event to the custom stream (a no-op outside a graph run)."""
    assert type_ in EVENT_TYPES, type_
    writer = _forward.get()
    if writer is None:
        try:
            from langgraph.config import get_stream_writer

            writer = get_stream_writer()
        except Exception:  # not inside a graph run
            return
    secrets = _secrets()  # read once per event, not once per string in it
    writer({"type": type_, **{k: _redacted(v, secrets) for k, v in fields.items()}})


def _redacted(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v, secrets) for v in value]
    return value


SAID_KEPT = 4096  # the (thread, scope, item) keys `unsaid` remembers, the least recently met forgotten first
_said: OrderedDict[tuple, None] = OrderedDict()
_said_lock = threading.Lock()


def run_thread() -> Any:
    """The thread id of the graph run this is called in (None outside a run, or a run without one)."""
    try:
        from langgraph.config import get_config

        return (get_config().get("configurable") or {}).get("thread_id")
    except Exception:  # noqa: BLE001 - outside a graph run
        return None


def unsaid(scope: Hashable, items: Iterable[T], *, outside_runs: bool = False) -> list[T]:
    """The items of `items` not yet said under `scope` in this run's thread (a deep run's sections
    share it), remembered as said from now on: a warning given once per run, not once per section.
    Outside a thread every item is new, unless `outside_runs`: then the process is one thread."""
    thread = run_thread()
    if thread is None and not outside_runs:
        return list(items)
    with _said_lock:
        fresh = []
        for item in items:
            key = (thread, scope, item)
            if key in _said:
                _said.move_to_end(key)
            else:
                fresh.append(item)
        for item in fresh:
            _said[(thread, scope, item)] = None
        while len(_said) > SAID_KEPT:
            _said.popitem(last=False)
    return fresh
