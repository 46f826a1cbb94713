"""A real OpenAI-compatible server for the tests: llama-cpp-python's own
(`python -m llama_cpp.server`, the `llama-cpp-python[server]` dev dependency), serving the
SmolLM2 GGUF the `local` extra ships: nothing is downloaded.

It listens on 127.0.0.1 on a free port; `start()` waits (bounded) until it lists its model
and `stop()` ends it. `RecordingProxy` stands in front of it and logs every request as it
went over the wire: its JSON body, the status, and for a streamed reply the pieces it held
and how it finished (the server itself logs only a status line per request).

    server = LlamaServer.start()          # LlamaServerError with its log when it cannot
    with RecordingProxy(server.url) as wire:
        wire.base_url                      # http://127.0.0.1:PORT/v1, through the proxy
        wire.chats()                       # the chat requests, in order
    server.stop()
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.loopback import Loopback

ALIAS = "smollm2"
READY_SECONDS = 180  # loading a 135M model takes seconds; a loaded machine may take longer


class LlamaServerError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path):
        self.proc, self.port, self.log = proc, port, log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls) -> LlamaServer:
        from deepresearch.llm.models import local_model_path

        log = Path(tempfile.mkstemp(prefix="deepresearch-llama-server.", suffix=".log")[1])
        port = _free_port()
        # as the README (Local models) says to start it: the server's defaults (one thread, n_ctx 2048)
        # but for `--interrupt_requests False`: by default the server ends a streaming reply early,
        # with [DONE] and no finish_reason, whenever another request arrives (deep mode asks in parallel)
        args = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(local_model_path()),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--interrupt_requests",
            "False",
        ]
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        server = cls(proc, port, log)
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise LlamaServerError(f"the server ended (status {proc.returncode}):\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(f"{server.url}/v1/models", timeout=5) as r:  # noqa: S310
                    if ALIAS in r.read().decode():
                        return server
            except OSError:
                pass
            time.sleep(0.25)
        server.stop()
        raise LlamaServerError(f"the server did not list its model within {READY_SECONDS}s:\n{server.log_tail()}")

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=20)
        self.log.unlink(missing_ok=True)


def method_of(body: dict) -> str:
    """The structured-output method a request asks for: a response_format type, 'tools' or 'text'."""
    return (body.get("response_format") or {}).get("type") or ("tools" if body.get("tools") else "text")


class RecordingProxy(Loopback):
    """A pass-through proxy on 127.0.0.1 that logs each request (see the module's docstring)."""

    def __init__(self, upstream: str):
        self.upstream = upstream.removeprefix("http://")
        self.log: list[dict] = []
        self.lock = threading.Lock()
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def chats(self, settle: float = 30.0) -> list[dict]:
        """The chat requests, once each has been noted (the client may take a reply at its
        [DONE], before the proxy has read the end of the response)."""
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            with self.lock:
                if all(r["done"] for r in self.log):
                    break
            time.sleep(0.02)
        with self.lock:
            return [r for r in self.log if r["path"].rstrip("/").endswith("/chat/completions")]

    def _handler(proxy):  # noqa: N805 - the closure needs the proxy
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._forward()

            def do_POST(self):
                self._forward()

            def _forward(self):
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(data) if data else None
                except ValueError:
                    body = None
                entry = {
                    "method": self.command,
                    "path": self.path,
                    "body": body,
                    "status": None,
                    "pieces": 0,
                    "finish": None,
                    "error": None,
                    "hung_up": False,
                    "done": False,
                }
                with proxy.lock:
                    proxy.log.append(entry)
                upstream = http.client.HTTPConnection(proxy.upstream, timeout=600)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                    upstream.request(self.command, self.path, body=data or None, headers=headers)
                    reply = upstream.getresponse()
                    entry["status"] = reply.status
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.getheader("Content-Type") or "application/json")
                    self.send_header("Connection", "close")  # the body ends when the connection does
                    self.end_headers()
                    self.close_connection = True
                    streamed = "text/event-stream" in (reply.getheader("Content-Type") or "")
                    seen = b""
                    while True:
                        try:
                            part = reply.read1(65536)
                        except (http.client.HTTPException, OSError) as e:  # the server broke off the reply
                            entry["error"] = f"the reply broke off: {e!r}"
                            break
                        if not part:
                            break
                        seen += part
                        try:
                            self.wfile.write(part)
                            self.wfile.flush()
                        except OSError:  # the client hung up (a reply cut at its cap, or at its deadline)
                            entry["hung_up"] = True
                            break
                    self._note(entry, seen, streamed)
                finally:
                    upstream.close()
                    entry["done"] = True

            def _note(self, entry: dict, seen: bytes, streamed: bool) -> None:
                if entry["status"] >= 400:
                    entry["error"] = seen.decode(errors="replace")[:4000]
                    return
                events = (
                    [
                        line[5:].strip()
                        for line in seen.decode(errors="replace").splitlines()
                        if line.startswith("data:")
                    ]
                    if streamed
                    else [seen.decode(errors="replace")]
                )
                for event in events:
                    try:
                        data = json.loads(event)
                    except ValueError:  # [DONE]
                        continue
                    for choice in data.get("choices") or ():
                        delta = choice.get("delta") or choice.get("message") or {}
                        if delta.get("content") or delta.get("tool_calls"):
                            entry["pieces"] += 1
                        entry["finish"] = choice.get("finish_reason") or entry["finish"]

        return Handler
