"""What OpenAI-compatible servers do differently from OpenAI's API, and how calls meet it
(deepresearch.llm.calls asks here).

- The completion cap's name. ChatOpenAI sends the cap as `max_completion_tokens`, OpenAI's
  name since 2024; most other servers read `max_tokens` and pass over a field they do not
  know (llama-cpp-python's server, LM Studio, Ollama, llama.cpp's own server). OpenAI's own
  endpoint gets `max_completion_tokens`; every other server gets both names, and a server
  that refuses one of them by name gets the other from then on.
- A refused request. Beside 400/404/415/422, a server built on request validation answers a
  value it does not know with a 5xx whose body is the validation error (llama-cpp-python's
  server: HTTP 500 "Input should be 'text' or 'json_object'" for `response_format:
  json_schema`). A 5xx whose body reads as a refusal naming a request field
  (`response_format`, `tools`, `tool_choice`, `stream_options`, a cap name) is a refusal, not
  a transient failure: it is not retried, the structured-output ladder steps down, and a
  field the request can do without (`stream_options`, one of the cap's names) is dropped for
  this server.
- A server that still ignores the cap: its reply is read up to the cap
  (deepresearch.llm.streaming). What came is used when it parses (a structured call) or holds
  a complete sentence (a text call, kept up to its last one); a `model_mode` event says once
  that the server ignores the cap. It is a failed call only when nothing usable came.

Requests refused and caps ignored are remembered per model spec and base URL for the rest of
the process (as the structured-output method that works is).
"""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import urlparse

from deepresearch.events import emit
from deepresearch.llm.streaming import WIRE_BYTES_PER_TOKEN

REFUSED_STATUS = (400, 404, 415, 422)
FIELDS = ("response_format", "tool_choice", "tools", "stream_options", "max_completion_tokens", "max_tokens")
CAP_NAMES = ("max_completion_tokens", "max_tokens")
DROPPABLE = ("stream_options", *CAP_NAMES)  # what a request can do without
# a 5xx body that says the request was invalid, as validation libraries and servers word it
_INVALID = re.compile(
    r"validation error|input should|invalid|not supported|unsupported|unrecognized|unknown"
    r"|extra inputs|not permitted|not allowed",
    re.IGNORECASE,
)
_FIELD = re.compile(r"\b(" + "|".join(FIELDS) + r")\b")
_SENTENCE_END = re.compile(r"[.!?]['\")\]]*(?=\s|$)|\n")
OPENAI_HOSTS = ("api.openai.com",)

_lock = threading.Lock()
_dropped: dict[tuple, set[str]] = {}  # per (model spec, base URL): request fields the server refused
_cap_ignored: set[tuple] = set()  # (model spec, base URL) whose server was seen ignoring the cap


def _key(ctx) -> tuple:
    return ctx.model, ctx.base_url


def _error_text(e: BaseException) -> str:
    body = getattr(e, "body", None)
    if body is not None and not isinstance(body, str):
        body = json.dumps(body, default=str)
    return f"{e} {getattr(e, 'param', None) or ''} {body or ''}"[:8000]


def named_field(e: BaseException) -> str | None:
    """The request field the error names first (None: none the calls send)."""
    m = _FIELD.search(_error_text(e))
    return m.group(1) if m else None


def refused(e: BaseException) -> bool:
    """The server refused the request as it was made (asking the same again cannot help)."""
    status = getattr(e, "status_code", None)
    if status in REFUSED_STATUS:
        return True
    return (
        isinstance(status, int)
        and status >= 500
        and named_field(e) is not None
        and bool(_INVALID.search(_error_text(e)))
    )


def _own_openai(model) -> bool:
    url = getattr(getattr(model, "root_client", None), "base_url", None) or "https://api.openai.com/v1"
    return urlparse(str(url)).hostname in OPENAI_HOSTS


def _cap_names(ctx, model) -> list[str]:
    if _own_openai(model):
        return ["max_completion_tokens"]
    return [n for n in CAP_NAMES if n not in _dropped.get(_key(ctx), ())]


def request_kwargs(ctx, model, cap: int, kwargs: dict) -> dict:
    """The call arguments of a streamed ChatOpenAI call: the cap under the names the server
    reads, and without the fields it refused."""
    out = dict(kwargs)
    if "stream_options" in _dropped.get(_key(ctx), ()):
        out["stream_usage"] = False  # streamed without usage figures: counted by what was read
    names = _cap_names(ctx, model)
    if "max_completion_tokens" in names:
        out["max_tokens"] = cap  # ChatOpenAI sends it as max_completion_tokens
    if "max_tokens" in names:  # past ChatOpenAI's renaming: in the body as it is
        out["extra_body"] = {**(out.get("extra_body") or {}), "max_tokens": cap}
    return out


def drop_refused(ctx, model, e: BaseException) -> bool:
    """True when `e` refuses a field the request can do without: it is not sent to this server
    again (ask again). Never the last name of the cap."""
    field = named_field(e)
    if field not in DROPPABLE or not refused(e):
        return False
    with _lock:
        dropped = _dropped.setdefault(_key(ctx), set())
        if field in dropped or (field in CAP_NAMES and _cap_names(ctx, model) == [field]):
            return False
        dropped.add(field)
    return True


def cap_ignored(ctx, cap: int, how: str) -> str:
    """A reply the server sent past its cap was cut there: say once per server that it ignores
    the cap (a `model_mode` event). Returns what to say of this reply should it be unusable."""
    why = f"at its cap of {cap} tokens" if how == "cap" else f"at {cap * WIRE_BYTES_PER_TOKEN // 1024:,} KB on the wire"
    with _lock:
        first = _key(ctx) not in _cap_ignored
        _cap_ignored.add(_key(ctx))
    if first:
        emit(
            "model_mode",
            model=ctx.model,
            mode="cap ignored",
            note="the server ignores the completion cap: replies are read up to it, and used when they "
            "parse or hold a complete sentence",
        )
    return f"reply cut {why}: the server ignored the completion cap"


def complete_part(text: str) -> str:
    """`text` up to the end of its last complete sentence or line ('' when it holds none)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].strip() if ends else ""


def forget() -> None:
    """Forget every server's refusals and ignored caps (tests: ports are reused)."""
    with _lock:
        _dropped.clear()
        _cap_ignored.clear()
