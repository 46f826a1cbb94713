"""A stub of the OpenAI chat-completions API on 127.0.0.1, for tests and benchmarks.

    with StubOpenAI(respond=lambda kind, prompt, n: "...", latency=0.05) as stub:
        ChatOpenAI(base_url=stub.base_url, api_key="sk-fake", model="stub")

`respond(kind, prompt, n)` returns the reply text (or a dict, sent as JSON, or a
`(status, body)` tuple sent as an error reply). `kind` is the structured output asked for
(see tests.fakes.kind_of). `latency` is seconds per chat request, or a function of the
request number `n` (e.g. slow only the first). Faults can be injected: a share of requests
answered 429 (with Retry-After) or 5xx, or replies that are not JSON. The stub records
every request (`requests`, `start_times`), the requests in flight now and at the peak, the
responses it finished sending (`answered`), and the headers it saw. Usage is counted like a
provider would, with tests.fakes.count_tokens (four characters a token), never with the
product's estimator. Also answers `POST /search` like Tavily's API (`search_echo_key`: its
error replies quote the API key it was sent, as a careless server might).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fakes import MESSAGE_OVERHEAD, count_tokens, kind_of, truncate  # noqa: E402


class _QuietServer(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a burst of new connections (16 sections' searches at
    # once) overflows it while the accepting thread waits for the GIL, the kernel drops the
    # SYNs and each client waits out a 1 s retransmit. A real server's backlog holds hundreds.
    request_queue_size = 128

    def handle_error(self, request, client_address):  # a client that hung up (a killed CLI) is no news
        pass


class StubOpenAI:
    def __init__(
        self,
        respond=None,
        *,
        latency: float = 0.0,
        rate_429: float = 0.0,
        rate_5xx: float = 0.0,
        retry_after: float = 0.05,
        seed: int = 1,
        search=None,
        search_rate_429: float = 0.0,
        search_rate_5xx: float = 0.0,
        rate_drop: float = 0.0,
        echo_auth: bool = False,
        search_echo_key: bool = False,
    ):
        self.respond = respond or (lambda kind, prompt, n: "ok")
        self.latency = latency
        self.rate_429 = rate_429
        self.rate_5xx = rate_5xx
        self.retry_after = retry_after
        self.search = search
        self.search_rate_429 = search_rate_429
        self.search_rate_5xx = search_rate_5xx
        self.rate_drop = rate_drop  # share of chat requests whose connection is dropped unanswered
        self.echo_auth = echo_auth  # error bodies quote the Authorization header (a careless server)
        self.search_echo_key = search_echo_key
        self.answered = 0  # chat responses sent in full
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.faults = 0
        self.in_flight = 0
        self.peak = 0
        self.start_times: list[float] = []
        self._closing = threading.Event()  # wakes requests still sleeping when the stub stops
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def _fault(self, r429: float, r5xx: float) -> int | None:
        with self.lock:
            x = self.random.random()
        if x < r429:
            return 429
        if x < r429 + r5xx:
            return self.random.choice([500, 502, 503])
        return None

    def _handler(stub):  # noqa: N805 - the closure needs the stub
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no delayed-ACK stall

            def log_message(self, *args):
                pass

            def _settle(self):
                """The request stops counting as in flight: before its reply is written, so a
                client cannot send its next request while this one still counts."""
                if not getattr(self, "_settled", False):
                    self._settled = True
                    with stub.lock:
                        stub.in_flight -= 1

            def _send(self, status: int, body: dict | str, headers: dict | None = None):
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self._settle()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self._settled = False
                with stub.lock:
                    stub.in_flight += 1
                    stub.peak = max(stub.peak, stub.in_flight)
                    n = len(stub.requests)
                    stub.requests.append(
                        {"path": self.path, "body": body, "headers": dict(self.headers), "peer": self.client_address[1]}
                    )
                    stub.start_times.append(time.monotonic())
                try:
                    if self.path.rstrip("/").endswith("/search"):
                        return self._search(body)
                    latency = stub.latency(n) if callable(stub.latency) else stub.latency
                    if latency:
                        stub._closing.wait(latency)
                    with stub.lock:
                        drop = stub.random.random() < stub.rate_drop
                    if drop:
                        with stub.lock:
                            stub.faults += 1
                        self.close_connection = True
                        self._settle()
                        self.connection.shutdown(2)
                        return
                    status = stub._fault(stub.rate_429, stub.rate_5xx)
                    if status:
                        with stub.lock:
                            stub.faults += 1
                        headers = {"Retry-After": str(stub.retry_after)} if status == 429 else {}
                        message = "injected fault"
                        if stub.echo_auth:
                            message += f" for {self.headers.get('Authorization')}"
                        return self._send(status, {"error": {"message": message, "type": "fault"}}, headers)
                    self._chat(body, n)
                finally:
                    self._settle()

            def _search(self, body):
                status = stub._fault(stub.search_rate_429, stub.search_rate_5xx)
                if status:
                    with stub.lock:
                        stub.faults += 1
                    headers = {"Retry-After": "0"} if status == 429 else {}
                    message = "injected fault"
                    if stub.search_echo_key:
                        message += f" for {self.headers.get('Authorization') or body.get('api_key')}"
                    return self._send(status, {"detail": {"error": message}}, headers)
                results = stub.search(body.get("query", "")) if stub.search else []
                self._send(200, {"query": body.get("query"), "results": results})

            def _chat(self, body, n):
                messages = body.get("messages", [])
                prompt = "\n\n".join(str(m.get("content") or "") for m in messages)
                kind = kind_of(prompt)
                tools = body.get("tools") or []
                if tools and kind == "text":
                    kind = tools[0]["function"]["name"]
                out = stub.respond(kind, prompt, n)
                if isinstance(out, tuple):  # (status, body): an explicit error reply
                    return self._send(out[0], out[1])
                text = out if isinstance(out, str) else json.dumps(out)
                text = truncate(text, body.get("max_completion_tokens") or body.get("max_tokens"))
                prompt_tokens = sum(count_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD for m in messages)
                completion_tokens = count_tokens(text)
                message: dict = {"role": "assistant", "content": text}
                if tools and not isinstance(out, str):
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
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                }
                if body.get("stream"):
                    return self._stream(message, usage, body)
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{n}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": usage,
                    },
                )
                with stub.lock:
                    stub.answered += 1

            def _stream(self, message, usage, body):
                self._settle()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")  # the connection stays open, as a provider's
                self.end_headers()
                base = {
                    "id": "chatcmpl-s",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "stub"),
                }
                delta = {"role": "assistant", "content": message.get("content") or ""}
                if message.get("tool_calls"):  # a tool call streams as one delta too
                    delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {**base, "choices": [], "usage": usage},
                ]
                for event in [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                with stub.lock:
                    stub.answered += 1

        return Handler


def main():  # python -m tests.stub_openai PORT: a stub for manual runs (`langgraph dev` demos)
    import argparse

    from tests.fakes import researcher

    p = argparse.ArgumentParser()
    p.add_argument("--latency", type=float, default=0.0)
    args = p.parse_args()
    with StubOpenAI(researcher(), latency=args.latency) as stub:
        print(stub.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
