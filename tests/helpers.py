"""Helpers shared by the test modules: the one citation check, the one CLI runner, the finished
CLI run a module's tests share and the one iterative-run helper. (Deep-graph helpers are in
tests/deep_helpers.py.) No test module imports another test module: what two of them need lives here.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Who built the Eiffel Tower, and for which event?"
CLI_TIMEOUT = 300  # a hang fails the test instead of blocking the suite (a bound on hangs, not on speed)


# --- citations ----------------------------------------------------------------------------


def citations_resolve(final: dict | str, sources: list[dict] | None = None) -> bool:
    """Strict check of a finished report: every `[n]` in the body is a listed source, every
    listed source is cited, there is at least one citation, and the `## Sources` list shows
    exactly the sources of the result. Takes a result dict (`report`, `sources`) or a report
    and its sources. Raises AssertionError saying what is wrong; returns True otherwise, so
    `assert citations_resolve(final)` reads naturally."""
    if isinstance(final, dict):
        report, sources = final["report"], final["sources"] if sources is None else sources
    else:
        report = final
    assert sources is not None, "no sources given"
    body, heading, tail = report.partition("## Sources")
    assert heading, f"the report has no '## Sources' section:\n{report[-500:]}"
    ids = [int(s["id"]) for s in sources]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    assert cited, f"the report cites nothing:\n{body[:500]}"
    assert len(ids) == len(set(ids)), f"a source id is listed twice: {ids}"
    assert cited <= set(ids), f"citations of no listed source: {sorted(cited - set(ids))}"
    assert set(ids) <= cited, f"listed sources the report never cites: {sorted(set(ids) - cited)}"
    listed = [int(n) for n in re.findall(r"^\[(\d+)\] ", tail, re.MULTILINE)]
    assert listed == ids, f"the Sources list shows {listed}, the result has {ids}"
    for s in sources:
        if "url" in s:
            assert f"[{s['id']}] " in tail and s["url"] in tail, f"source {s['id']} is not listed with its URL"
    return True


# --- the CLI --------------------------------------------------------------------------------


def cli_command(args) -> list[str]:
    return [sys.executable, "-m", "deepresearch.cli", *map(str, args)]


def cli(args, env, *, input=None, timeout=CLI_TIMEOUT, cwd=None) -> subprocess.CompletedProcess:
    """Run `deepresearch ARGS` to the end. cwd: the scratch HOME by default, so a developer's
    .env in the repository is never read."""
    return subprocess.run(
        cli_command(args),
        env=env,
        cwd=cwd or env.get("HOME"),
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_error(r: subprocess.CompletedProcess, status: int = 2) -> str:
    """The single stderr line of a CLI that refused its input with `status`; no traceback."""
    assert r.returncode == status, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


class Running:
    """A CLI subprocess whose stderr is read in a thread as it comes (chunks, not lines, so a
    prompt without a newline is seen too)."""

    def __init__(self, args, env, stdin=subprocess.DEVNULL, terminal: bool = False):
        """`terminal`: stderr is a pseudo-terminal (as when a person runs the command)."""
        slave = None
        if terminal:
            import pty

            self._fd, slave = pty.openpty()
        self.proc = subprocess.Popen(
            cli_command(args),
            env=env,
            cwd=env.get("HOME"),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=slave if terminal else subprocess.PIPE,
        )
        if terminal:
            os.close(slave)  # the child holds it; reading the master ends when the child exits
        else:
            self._fd = self.proc.stderr.fileno()
        self.terminal = terminal
        self.text = ""
        self._seen = 0  # wait_for looks after this offset
        self._q: queue.Queue = queue.Queue()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)

    def _read(self):
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # a pty whose other end closed
                chunk = b""
            if not chunk:
                break
            self._q.put(chunk.decode("utf-8", "replace"))
        self._q.put(None)

    def _drain(self, timeout: float) -> bool:
        """Read what arrived within `timeout`; False once the stream ended."""
        try:
            chunk = self._q.get(timeout=timeout)
        except queue.Empty:
            return True
        if chunk is None:
            self._q.put(None)
            return False
        self.text += chunk
        return True

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match:
        """The first match of `pattern` (multiline) in stderr after the previous match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern, re.MULTILINE)
        while True:
            if m := rx.search(self.text, self._seen):
                self._seen = m.end()
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} within {timeout}s:\n{self.text[-3000:]}")
            if not self._drain(0.05) and not rx.search(self.text, self._seen):
                raise AssertionError(
                    f"the CLI ended (status {self.proc.wait()}) before {pattern!r}:\n" + self.text[-3000:]
                )

    def kill(self, sig=signal.SIGKILL, timeout: float = 30) -> int:
        self.proc.send_signal(sig)
        return self.wait(timeout)

    def kill_thread(self, sig, timeout: float = 30) -> int:
        """Send `sig` to one of the program's threads other than its main thread (Linux's
        tgkill), as the kernel may do with a signal sent to the process; wait for the end."""
        import ctypes
        import platform

        number = {"x86_64": 234, "aarch64": 131}.get(platform.machine())
        assert number, f"no tgkill system call number known for {platform.machine()}"
        pid = self.proc.pid
        others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
        assert others, "the program has no thread but its main one"
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(number, pid, others[-1], int(sig)) == 0, os.strerror(ctypes.get_errno())
        return self.wait(timeout)

    def wait(self, timeout: float = CLI_TIMEOUT) -> int:
        """Wait for the end; all of stderr is in `text` after it."""
        status = self.proc.wait(timeout=timeout)
        self._t.join(timeout=30)
        while self._drain(0) and not self._q.empty():
            pass
        return status

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        if self.terminal:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self.terminal = False


# --- a finished CLI run shared by a module's tests ---------------------------------------------


def finished_cli_run(stub, home: Path, key: str, thread_id: str, question: str = QUESTION) -> tuple[str, str]:
    """An iterative CLI run (one iteration) on `stub`, checkpointed in `home`/runs.sqlite on thread
    `thread_id`, for a module's fixture: (db, report). Each test works on its own copy
    (`copy_database`), so the tests share the run, not its thread."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(home), OPENAI_API_KEY=key)
    db = str(home / "runs.sqlite")
    args = [question, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url]
    r = cli([*args, "--max-iterations", "1", "--db", db, "--thread-id", thread_id], env)
    assert r.returncode == 0, r.stderr
    return db, r.stdout


def copy_database(source: str, target: str) -> str:
    """A copy of the SQLite checkpoint database `source` at `target` (SQLite's online backup: its
    WAL's pages included); returns `target`."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)
    return target


# --- the iterative graph in-process ---------------------------------------------------------


def run_iterative(
    ctx, question: str = QUESTION, *, checkpointer=None, config: dict | None = None, **stream_kwargs
) -> tuple[dict, list[dict]]:
    """Stream one iterative run; returns (final values, custom events)."""
    from deepresearch.graphs.iterative import build
    from deepresearch.llm.budget import recursion_limit

    graph = build(checkpointer=checkpointer)
    config = config or {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(ctx)}
    events, final = [], None
    for mode, chunk in graph.stream(
        {"question": question} if question is not None else None,
        config,
        context=ctx,
        stream_mode=["custom", "values"],
        **stream_kwargs,
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    return final, events


def of_type(events: list[dict], type_: str) -> list[dict]:
    return [e for e in events if e.get("type") == type_]
