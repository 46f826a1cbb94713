"""Reading a provider's reply so that no server can carry a run past its budgets.

Replies from OpenAI-compatible servers are streamed (text and structured outputs alike)
and read by a worker thread while the caller waits, at most until the call's deadline.
Reading stops:

- at the completion cap: a server that ignores `max_tokens` is cut off once the reply
  holds `cap` tokens by our own count (a streamed piece of up to 16 bytes counts one
  token, a longer piece one per 4 bytes); the reply kept never holds more, and closing
  the stream tells the server to stop generating (and billing);
- at the deadline: the caller gets `ReplyTimeout` with the tokens received so far; the
  worker drops the connection at its next read;
- at a byte limit on the wire (`WIRE_BYTES_PER_TOKEN` per token of the cap, plus
  `WIRE_OVERHEAD`): one endless SSE line, or an error body of megabytes, never gets into
  memory whole. The limit is enforced by `GuardedClient`, the HTTP client of every
  ChatOpenAI the model factory makes.

Why streaming for structured outputs too (json_schema, function calling, json mode): a
server generates and bills a non-streamed reply in full before its first byte arrives, so
a byte cap there protects memory but not the token budget; closing a stream stops it.
"""

from __future__ import annotations

import contextvars
import functools
import math
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata, add_ai_message_chunks

from deepresearch.worker_threads import KeptThreads

WIRE_BYTES_PER_TOKEN = 1024  # SSE framing costs ~200-300 bytes per streamed token
WIRE_OVERHEAD = 64 * 1024
SMALL_PIECE = 16  # a streamed piece of at most this many bytes counts as one token


class ReplyTimeout(TimeoutError):
    """The reply did not end by the call's deadline; `received` tokens had arrived."""

    def __init__(self, seconds: float, received: int):
        super().__init__(f"no complete reply within {seconds:.1f}s")
        self.received = received


class ReplyTooLarge(Exception):
    """The response passed its byte limit on the wire (raised while reading it)."""


class _Stopped(Exception):
    """The caller gave up on this reply (raised in the worker at its next read)."""


@dataclass
class Guard:
    """Limits of the response read in the current context (set by `read_reply`)."""

    max_bytes: int
    stop: threading.Event = field(default_factory=threading.Event)
    received: int = 0
    tripped: bool = False
    done: threading.Event | None = None  # what the caller waits on
    complete: bool = False  # the reply's end was read (the response may still be drained)

    def reply_complete(self) -> None:
        """The reply has ended ([DONE]): the caller may take it now, while the rest of the
        response (the end of its chunked body) is read so that the connection can be kept."""
        self.complete = True
        if self.done is not None:
            self.done.set()

    def check(self, n: int) -> None:
        if self.stop.is_set():
            raise _Stopped()
        self.received += n
        if self.received > self.max_bytes:
            self.tripped = True
            raise ReplyTooLarge(f"reply passed {self.max_bytes:,} bytes")


_GUARD: contextvars.ContextVar[Guard | None] = contextvars.ContextVar("reply_guard", default=None)


def _httpx() -> Any:  # the module, chosen at run time
    """The httpx library the installed openai SDK is built on (httpx2 for openai>=3)."""
    import openai

    client = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return sys.modules[client.__module__.split(".")[0]]


_client_class = None


def guarded_client(**kwargs):
    """An HTTP client for the openai SDK that holds every response to the current Guard."""
    global _client_class
    if _client_class is None:
        import openai

        hx: Any = _httpx()

        class GuardedStream(hx.SyncByteStream):
            def __init__(self, inner, guard: Guard):
                self.inner, self.guard = inner, guard

            def __iter__(self):
                for part in self.inner:
                    self.guard.check(len(part))
                    yield part

            def close(self) -> None:
                self.inner.close()

        class GuardedClient(openai.DefaultHttpxClient):
            def send(self, request, *, stream: bool = False, **kw):
                guard = _GUARD.get()
                if guard is None:
                    return super().send(request, stream=stream, **kw)
                response = super().send(request, stream=True, **kw)
                response.stream = GuardedStream(response.stream, guard)
                if not stream:
                    try:
                        response.read()
                    except BaseException:
                        response.close()
                        raise
                return response

        _client_class = GuardedClient
    return _client_class(**kwargs)


def piece_tokens(chunk: AIMessageChunk) -> int:
    """Our own count of the tokens in one streamed piece (content and tool-call arguments)."""
    text = (
        chunk.content
        if isinstance(chunk.content, str)
        else "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in chunk.content)
    )
    text += "".join(str(c.get("args") or "") for c in chunk.tool_call_chunks or [])
    n = len(text.encode("utf-8"))
    return 0 if n == 0 else 1 if n <= SMALL_PIECE else math.ceil(n / 4)


def _trim(chunk: AIMessageChunk, room: int) -> AIMessageChunk | None:
    """The part of `chunk` that fits in `room` tokens (text only: a cut tool call is useless)."""
    if room <= 0 or not isinstance(chunk.content, str) or not chunk.content:
        return None
    text = chunk.content.encode("utf-8")[: room * 4].decode("utf-8", "ignore")
    return AIMessageChunk(content=text)


@dataclass
class Reply:
    message: AIMessage
    received: int  # our own count of the tokens read
    cut: str | None  # None, "cap" (the reply reached its cap) or "size" (its wire bytes passed the limit)
    usage: UsageMetadata | None  # the provider's usage figures, when the stream ended with them


def unobserved_stream(runnable, messages, kwargs: dict):
    """The model's own stream of reply pieces, without the callback run LangChain's `stream`
    wraps around it, when no callback would see that run (no tracer, no `messages` stream mode,
    no handler of the caller's or the model's): the same pieces, with their response metadata as
    `stream` gives them, for a fraction of the work. None when a callback would see the run, or
    the model needs `stream`'s own path (a rate limiter, v1 output, no streaming)."""
    try:
        from langchain_core.callbacks import CallbackManager
        from langchain_core.language_models.chat_models import (
            BaseChatModel,
            _gen_info_and_msg_metadata,
            _normalize_messages,
        )
        from langchain_core.runnables import RunnableBinding
        from langchain_core.runnables.config import ensure_config
    except ImportError:  # another langchain-core: its own path
        return None
    model, bound = runnable, {}
    if isinstance(runnable, RunnableBinding):  # tools bound (function calling)
        if runnable.config or runnable.config_factories:
            return None
        model, bound = runnable.bound, dict(runnable.kwargs)
    kwargs = {**bound, **kwargs}
    if (
        not isinstance(model, BaseChatModel)
        or model.rate_limiter is not None
        or getattr(model, "output_version", None) == "v1"
        or not model._should_stream(async_api=False, **{**kwargs, "stream": True})
    ):
        return None
    config = ensure_config()  # the node's (this thread runs in a copy of its context)
    if CallbackManager.configure(
        config.get("callbacks"), model.callbacks, model.verbose, config.get("tags"), model.tags, None, model.metadata
    ).handlers:
        return None
    normalized = _normalize_messages(model._convert_input(messages).to_messages())

    def pieces():
        for chunk in model._stream(normalized, stop=None, **kwargs):
            chunk.message.response_metadata = _gen_info_and_msg_metadata(chunk)
            yield chunk.message

    return pieces()


_READERS = KeptThreads("reply-reader")  # a thread start per call cost about a millisecond of latency


class _Reading:
    def __init__(self):
        self.lock = threading.Lock()
        self.chunks: list[AIMessageChunk] = []
        self.received = 0
        self.cut: str | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()


def read_reply(runnable, messages, kwargs: dict, *, cap: int, timeout: float) -> Reply:
    """Stream `runnable` (a ChatOpenAI, possibly with tools bound) and return the reply,
    keeping at most `cap` tokens of it and waiting at most `timeout` seconds.

    Raises ReplyTimeout at the deadline, or the provider's error (with `received` set on it
    when part of the reply had arrived)."""
    r = _Reading()
    guard = Guard(max_bytes=cap * WIRE_BYTES_PER_TOKEN + WIRE_OVERHEAD, done=r.done)

    def work() -> None:
        _GUARD.set(guard)
        stream = unobserved_stream(runnable, messages, {**kwargs, "timeout": timeout}) or runnable.stream(
            messages, **kwargs, timeout=timeout
        )
        try:
            for chunk in stream:
                n = piece_tokens(chunk)
                with r.lock:
                    if guard.stop.is_set():
                        break
                    if r.received + n > cap:
                        part = _trim(chunk, cap - r.received)
                        if part is not None:
                            r.chunks.append(part)
                        r.received = cap
                        r.cut = "cap"
                        break
                    r.chunks.append(chunk)
                    r.received += n
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            with r.lock:  # the SDK may wrap what the guard raised: ask the guard
                if guard.complete:  # the reply had ended: a failure draining the rest is no failure of it
                    pass
                elif guard.tripped:  # over `cap` KB of it came: more than the cap, for sure
                    r.cut, r.received = "size", cap
                elif not guard.stop.is_set():
                    r.error = e
        finally:
            try:
                stream.close()  # closes the HTTP response: the server sees the client hang up
            except Exception:  # noqa: BLE001
                pass
            r.done.set()

    ctx = contextvars.copy_context()  # the node's config and callbacks, in the worker
    _READERS.run(functools.partial(ctx.run, work))
    finished = r.done.wait(timeout)
    with r.lock:
        if not finished:
            guard.stop.set()  # the worker stops at its next read and drops the connection
            raise ReplyTimeout(timeout, r.received)
        if r.error is not None:
            r.error.received = r.received  # type: ignore[attr-defined]
            raise r.error
        merged = add_ai_message_chunks(r.chunks[0], *r.chunks[1:]) if r.chunks else AIMessageChunk(content="")
        usage = merged.usage_metadata if r.cut is None and merged.usage_metadata else None
        message = AIMessage(
            content=merged.content,
            tool_calls=merged.tool_calls if r.cut is None else [],
            response_metadata=merged.response_metadata,
            usage_metadata=usage,
            id=merged.id,
        )
        return Reply(message=message, received=r.received, cut=r.cut, usage=usage)
