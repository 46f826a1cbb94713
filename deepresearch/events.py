"""Progress events on LangGraph's custom stream.

Every event is a small dict with a `type` from EVENT_TYPES. Consumers receive them with
`stream_mode="custom"` (CLI, Python, the SDK, Studio). Events are redacted: a secret from
the environment never leaves in one.
"""

from __future__ import annotations

import os
import re
from typing import Any

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
)

SECRET_ENV = ("OPENAI_API_KEY", "TAVILY_API_KEY", "LANGSMITH_API_KEY", "ANTHROPIC_API_KEY", "NCBI_API_KEY",
              "OLLAMA_API_KEY", "VLLM_API_KEY", "LLAMACPP_API_KEY", "LMSTUDIO_API_KEY")  # deepresearch.providers
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|tvly-[A-Za-z0-9_\-]{8,})")


def _secrets() -> list[str]:
    return [v for name in SECRET_ENV if (v := os.environ.get(name)) and len(v) >= 6]


def redact(text: Any, secrets: list[str] | None = None) -> str:
    """`text` with every secret from the environment (and anything key-shaped) masked.
    (`secrets`: the environment's secrets, when the caller has read them already.)"""
    s = str(text)
    for value in _secrets() if secrets is None else secrets:
        s = s.replace(value, "***")
    return _KEYLIKE.sub("***", s)


def emit(type_: str, **fields: Any) -> None:
    """Send one progress event to the custom stream (a no-op outside a graph run)."""
    assert type_ in EVENT_TYPES, type_
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
