"""A hostile OpenAI-compatible server on 127.0.0.1: it ignores `max_tokens`, floods, never
stops streaming, trickles and stalls. For the budget tests.

    with HostileStub(respond, plan=lambda kind, n, body: Flood(5_000_000)) as stub:
        ChatOpenAI(base_url=stub.base_url, api_key="sk-fake", model="stub")

`respond(kind, prompt, n)` gives the well-behaved content (a str, or a dict sent as JSON:
as a tool call when the request offers tools). `plan(kind, n, body)` says how to misbehave
on request `n` (None: behave). The stub streams like a real server: one word per chunk,
tool-call arguments in pieces, usage in a last chunk when `stream_options.include_usage`.
It counts usage its own way (words), never with the product's estimator.

Every request is logged: its body, the bytes the stub managed to send, whether the client
hung up before the end (`hung_up`), and when it started and ended (time.monotonic()).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.fakes import kind_of
from tests.loopback import Loopback


@dataclass
class Flood:
    """A reply of `nbytes` bytes whatever the cap; streamed as one giant chunk or word by word.
    `repeat`: the well-behaved reply said again and again (else followed by "flood flood …")."""

    nbytes: int
    one_chunk: bool = False
    repeat: bool = False


@dataclass
class Endless:
    """Stream words, one every `interval` seconds, with no finish: the stub gives up after
    `seconds` (so a client that never stops reading fails a test instead of hanging it)."""

    interval: float = 0.0
    seconds: float = 30.0


@dataclass
class Slow:
    """Wait `seconds` before answering (well-behaved after that)."""

    seconds: float


@dataclass
class Trickle:
    """Send an SSE line that never ends, a byte every `interval` seconds (for `seconds`)."""

    interval: float = 0.01
    seconds: float = 30.0


class _HungUp(Exception):
    pass


class HostileStub(Loopback):
    def __init__(self, respond, plan=None):
        self.respond = respond
        self.plan = plan or (lambda kind, n, body: None)
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until every request has ended (the client hung up or the reply was sent)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if all(r["ended"] is not None for r in self.requests):
                    return
            time.sleep(0.02)

    def _handler(stub):  # noqa: N805 - the closure needs the stub
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _write(self, data: bytes) -> None:
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except (TimeoutError, BrokenPipeError, ConnectionResetError, OSError):
                    raise _HungUp() from None
                with stub.lock:
                    self.log["sent"] += len(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                messages = body.get("messages", [])
                prompt = "\n\n".join(str(m.get("content") or "") for m in messages)
                kind = kind_of(prompt)
                tools = body.get("tools") or []
                if tools and kind == "text":
                    kind = tools[0]["function"]["name"]
                with stub.lock:
                    n = len(stub.requests)
                    self.log = {
                        "body": body,
                        "kind": kind,
                        "sent": 0,
                        "hung_up": False,
                        "started": time.monotonic(),
                        "ended": None,
                    }
                    stub.requests.append(self.log)
                try:
                    self._answer(body, prompt, kind, tools, n)
                except _HungUp:
                    self.log["hung_up"] = True
                finally:
                    self.close_connection = True
                    with stub.lock:
                        self.log["ended"] = time.monotonic()

            def _answer(self, body, prompt, kind, tools, n):
                how = stub.plan(kind, n, body)
                if isinstance(how, Slow):
                    time.sleep(how.seconds)
                    how = None
                out = stub.respond(kind, prompt, n)
                if isinstance(out, tuple):  # (status, body): an error reply
                    data = json.dumps(out[1]).encode()
                    self.send_response(out[0])
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    return self._write(data)
                text = out if isinstance(out, str) else json.dumps(out)
                as_tool = bool(tools) and not isinstance(out, str)
                prompt_tokens = max(1, len(prompt.split()))
                if how is None:  # behave: honour the cap (in words)
                    cap = body.get("max_completion_tokens") or body.get("max_tokens")
                    words = text.split(" ")
                    if cap and len(words) > cap:
                        text = " ".join(words[:cap])
                elif isinstance(how, Flood) and how.repeat:
                    text = ((text.strip() + "\n\n") * (how.nbytes // (len(text) + 2) + 1))[: how.nbytes]
                elif isinstance(how, Flood):
                    text = (text + " ") + ("flood " * (how.nbytes // 6 + 1))[: how.nbytes]
                if not body.get("stream"):
                    return self._whole(body, text, as_tool, tools, prompt_tokens, n, how)
                self._head("text/event-stream")
                base = {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "stub"),
                }

                def chunk(delta: dict | None, finish=None, usage=None) -> None:
                    c = {
                        **base,
                        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    if usage:
                        c["usage"] = usage
                    self._write(f"data: {json.dumps(c)}\n\n".encode())

                chunk({"role": "assistant", "content": ""})
                if isinstance(how, Endless):
                    i, end = 0, time.monotonic() + how.seconds
                    while time.monotonic() < end:
                        chunk({"content": f" word{i}"})
                        i += 1
                        if how.interval:
                            time.sleep(how.interval)
                    return
                if isinstance(how, Trickle):
                    self._write(b'data: {"id": "x", "choices": [{"index": 0, "delta": {"content": "')
                    end = time.monotonic() + how.seconds
                    while time.monotonic() < end:
                        self._write(b"a")
                        time.sleep(how.interval)
                    return
                pieces = (
                    [text]
                    if isinstance(how, Flood) and how.one_chunk
                    else [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]
                )
                for p in pieces:
                    if as_tool:
                        chunk(
                            {
                                "tool_calls": [
                                    {
                                        "index": 0,
                                        **({"id": f"call_{n}", "type": "function"} if p is pieces[0] else {}),
                                        "function": {
                                            **({"name": tools[0]["function"]["name"]} if p is pieces[0] else {}),
                                            "arguments": p,
                                        },
                                    }
                                ]
                            }
                        )
                    else:
                        chunk({"content": p})
                chunk({}, finish="tool_calls" if as_tool else "stop")
                if (body.get("stream_options") or {}).get("include_usage"):
                    words = len(text.split(" "))
                    chunk(
                        None,
                        usage={
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": words,
                            "total_tokens": prompt_tokens + words,
                        },
                    )
                self._write(b"data: [DONE]\n\n")

            def _head(self, ctype: str, length: int | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                if length is not None:
                    self.send_header("Content-Length", str(length))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()

            def _whole(self, body, text, as_tool, tools, prompt_tokens, n, how):
                if isinstance(how, (Endless, Trickle)):  # a body that does not end
                    self._head("application/json", 10**12)
                    self._write(b'{"id": "x", "choices": [{"message": {"content": "')
                    end = time.monotonic() + how.seconds
                    while time.monotonic() < end:
                        self._write(b"word " * 100)
                        time.sleep(how.interval or 0.001)
                    return
                message: dict = {"role": "assistant", "content": text}
                if as_tool:
                    message = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{n}",
                                "type": "function",
                                "function": {"name": tools[0]["function"]["name"], "arguments": text},
                            }
                        ],
                    }
                words = len(text.split(" "))
                data = json.dumps(
                    {
                        "id": f"chatcmpl-{n}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": words,
                            "total_tokens": prompt_tokens + words,
                        },
                    }
                ).encode()
                self._head("application/json", len(data))
                self._write(data)

        return Handler
