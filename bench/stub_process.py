"""The stub in a process of its own, as a provider is.

In the bench's own process the stub's work (parsing each request, building its reply and
the search pages, counting tokens) waits for the same GIL as the run it answers, and the
run's work waits for it: at 16 sections and zero latency that is about a tenth of the
process's CPU, which no real deployment pays. Row 1 measures how much of *our* Python work
fits between model calls, so it runs the stub here instead.

    with StubProcess(latency=0.2) as stub:
        stub.respond = responder(sections=16)   # a picklable responder (bench.harness.Responder)
        ... stub.base_url, stub.root_url, stub.latency, stub.peak, stub.requests (paths only)

The child is `python -m bench.stub_process` (not a fork: the bench process has threads), and
every attribute is read or set over its pipes between runs, never during one.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_REMOTE = ("latency", "respond", "peak")  # attributes read and set in the child


def _serve() -> None:
    """The child: `python -m bench.stub_process`, one pickled (op, name, value) a line of work
    on stdin, one pickled answer on stdout (everything else printed goes to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    respond, latency = pickle.load(inp)
    from bench.harness import make_stub

    def send(x) -> None:
        pickle.dump(x, out)
        out.flush()

    with make_stub(respond, latency=latency) as stub:
        send((stub.base_url, stub.root_url))
        while True:
            try:
                op, name, value = pickle.load(inp)
            except EOFError:  # the bench process went away
                break
            if op == "stop":
                break
            if op == "set":
                setattr(stub, name, value)
                send(None)
            elif op == "requests":  # the paths of the requests since number `value`
                send([{"path": r["path"]} for r in stub.requests[value:]])
            else:
                send(getattr(stub, name))


class StubProcess:
    def __init__(self, respond=None, *, latency: float = 0.0):
        from bench.harness import responder

        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.stub_process"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        object.__setattr__(self, "_proc", proc)
        self._send((respond or responder(), latency))
        base_url, root_url = pickle.load(proc.stdout)
        object.__setattr__(self, "base_url", base_url)
        object.__setattr__(self, "root_url", root_url)

    def _send(self, x) -> None:
        pickle.dump(x, self._proc.stdin)
        self._proc.stdin.flush()

    def _ask(self, op: str, name: str = "", value=None):
        self._send((op, name, value))
        return pickle.load(self._proc.stdout)

    def __getattr__(self, name: str):
        if name in _REMOTE:
            return self._ask("get", name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value) -> None:
        if name not in _REMOTE:
            raise AttributeError(f"StubProcess cannot set {name!r}")
        self._ask("set", name, value)

    @property
    def requests(self) -> list[dict]:
        return self._ask("requests", value=0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self._send(("stop", "", None))
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc.stdout.close()


if __name__ == "__main__":
    _serve()
