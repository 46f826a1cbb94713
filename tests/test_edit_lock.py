"""two commands on one thread do not lose each other's work. `deepresearch
edit` and `resume` take the thread's lock (deepresearch/runtime/thread_lock.py): a second edit waits
and then edits the report as the first left it; a resume waits instead of making a saved
edit a second time. Also item 6 for `edit sync --file`: a device, a FIFO or a file past 4 MB
is refused with one line.

The CLI runs in subprocesses against the OpenAI stub on 127.0.0.1; the stub holds the first
edit's model call until the second command has shown what it does (waits, or goes on), so the
tests assert order and the stored `rewrite_history`, not timing. One finished run is made for
the module; each test works on a copy of its database.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from tests.fakes import editor, paragraph_writer
from tests.helpers import Running, citations_resolve, cli, copy_database, finished_cli_run, one_line_error
from tests.stub_openai import StubOpenAI

KEY = "sk-test-editlock-0123456789abcdef"
HANG = 120  # seconds: only a command that waits on a FIFO ever gets near it


class Hold:
    """The stub's latency: the request numbered `at` (the first edit's model call) is held until
    `release` is set or another request arrives (a second edit running alongside); others go
    at once."""

    def __init__(self):
        self.at = None
        self.release = threading.Event()
        self.stub = None

    def __call__(self, n: int) -> float:
        if n == self.at:
            for _ in range(2400):  # a cap (120 s) only for a broken run; released long before
                if self.release.is_set() or len(self.stub.requests) > n + 1:
                    break
                time.sleep(0.05)
        return 0.0


@pytest.fixture(scope="module")
def module_stub():
    hold = Hold()
    with StubOpenAI(editor(paragraph_writer()), latency=hold) as s:
        hold.stub = s
        s.hold = hold
        yield s


@pytest.fixture
def edit_stub(module_stub):
    module_stub.hold.at, module_stub.hold.release = None, threading.Event()
    return module_stub


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = KEY
    return cli_env


@pytest.fixture(scope="module")
def finished_once(module_stub, tmp_path_factory):
    """One finished CLI run on thread io-1, for the module: (db, report)."""
    return finished_cli_run(module_stub, tmp_path_factory.mktemp("finished"), KEY, "io-1")


@pytest.fixture
def finished(finished_once, edit_stub, tmp_path):
    """A copy of the finished run's database for one test: (db, report)."""
    source, report = finished_once
    return copy_database(source, str(tmp_path / "runs.sqlite")), report


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    return path


def body(report: str) -> str:
    return report[: report.rindex("\n\n## Sources\n")]


def cited_sentence(report: str, k: int) -> str:
    para = [p for p in body(report).split("\n\n") if "[" in p and not p.startswith("#")][k]
    return re.split(r"(?<=\]\.)\s+", para)[0]


def stored(env, db) -> dict:
    r = cli(["resume", "io-1", "--db", db, "--json"], env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_edit_sync_file_that_is_a_device_a_fifo_or_too_large_is_refused(env, finished, tmp_path, fifo):
    db, report = finished
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * 4_000_001)
    for path, words in (
        ("/dev/zero", "a device, not a regular file"),
        (fifo, "a FIFO (named pipe)"),
        (big, "larger than 4 MB"),
    ):
        r = cli(["edit", "io-1", "sync", "--file", path, "--db", db], env, timeout=HANG)
        assert words in one_line_error(r), r.stderr
        assert r.stdout == ""
    assert stored(env, db)["report"] == report  # nothing was written


# --- item 11: two edits of one thread at once ------------------------------------------------------


def test_two_edits_of_one_thread_at_once_both_land(env, finished, edit_stub):
    db, report = finished
    first, second = cited_sentence(report, 0), cited_sentence(report, 1)
    edit_stub.hold.at = len(edit_stub.requests)  # the first edit's model call waits for the second edit
    a = Running(["edit", "io-1", "expand", "--select", first, "--db", db, "--json"], env)
    b = None
    try:
        a.wait_for(r"editing thread io-1: expand")
        while len(edit_stub.requests) <= edit_stub.hold.at:  # a's rewrite call is in flight
            a._drain(0.05)
        b = Running(["edit", "io-1", "expand", "--select", second, "--db", db, "--json"], env)
        b.wait_for(r"waiting for it to finish|editing thread io-1")  # b waits, or (unserialized) edits too
        edit_stub.hold.release.set()
        assert a.wait() == 0, a.text
        assert b.wait() == 0, b.text
        out_a, out_b = json.loads(a.proc.stdout.read()), json.loads(b.proc.stdout.read())
    finally:
        edit_stub.hold.release.set()
        a.close()
        if b is not None:
            b.close()
    final = stored(env, db)
    assert [h["action"] for h in final["rewrite_history"]] == ["expand", "expand"]
    assert "is being changed by another command; waiting for it to finish" in b.text
    assert [h["action"] for h in out_a["rewrite_history"]] == ["expand"]
    assert out_b["report"] == final["report"]  # the report printed as edited is the one stored
    # the second edit was made on the report as the first left it: both expansions are there
    assert len(body(final["report"])) > len(body(out_a["report"])) > len(body(report))
    kept = body(out_a["report"])[: out_a["rewrite_history"][0]["new_end"]]
    assert body(final["report"]).startswith(kept) and citations_resolve(final)


def test_a_resume_or_an_offsets_edit_during_an_edit_waits_for_it(env, finished, edit_stub):
    """`resume` of a thread whose edit is in progress waits instead of making the saved edit a
    second time; an edit given only offsets is refused after the wait (they may point elsewhere)."""
    db, report = finished
    first, second = cited_sentence(report, 0), cited_sentence(report, 1)
    start = report.index(second)
    n = edit_stub.hold.at = len(edit_stub.requests)
    a = Running(["edit", "io-1", "expand", "--select", first, "--db", db, "--json"], env)
    others = []
    try:
        a.wait_for(r"editing thread io-1: expand")
        while len(edit_stub.requests) <= n:
            a._drain(0.05)
        others = [
            Running(["resume", "io-1", "--db", db, "--json"], env),
            Running(["edit", "io-1", "shorten", "--start", start, "--end", start + len(second), "--db", db], env),
        ]
        for p in others:  # each waits, or (unserialized) goes on at once
            p.wait_for(r"waiting for it to finish|finishing the edit|editing thread io-1|the run failed")
        edit_stub.hold.release.set()
        assert a.wait() == 0, a.text
        statuses = [p.wait() for p in others]
        out_a, out_resume = json.loads(a.proc.stdout.read()), json.loads(others[0].proc.stdout.read())
    finally:
        edit_stub.hold.release.set()
        for p in (a, *others):
            p.close()
    assert statuses == [0, 2], [p.text for p in others]
    assert len(edit_stub.requests) == n + 1  # the edit's one model call: made once
    assert "waiting for it to finish" in others[0].text and "waiting for it to finish" in others[1].text
    assert "edited by another command while this one waited" in others[1].text.strip().splitlines()[-1]
    assert [h["action"] for h in out_resume["rewrite_history"]] == ["expand"]
    assert out_resume["report"] == out_a["report"] == stored(env, db)["report"]


def test_edits_of_one_thread_on_postgres_serialize_across_machines(postgres_url, tmp_path):
    """On PostgreSQL the lock is the server's (an advisory lock): two commands that share no
    cache directory (two machines) still take turns."""
    import queue

    from deepresearch.runtime.thread_lock import thread_lock

    holder_env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "machine-a")}
    code = (
        "import sys\nfrom deepresearch.runtime.thread_lock import thread_lock\n"
        "with thread_lock(sys.argv[1], 'pg-edit-1'):\n    print('held', flush=True)\n    sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, postgres_url],
        env=holder_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(tmp_path),
    )
    events: queue.Queue = queue.Queue()
    try:
        assert holder.stdout.readline() == "held\n"
        os.environ["XDG_CACHE_HOME"], before = str(tmp_path / "machine-b"), os.environ["XDG_CACHE_HOME"]
        try:

            def second():
                with thread_lock(postgres_url, "pg-edit-1", on_wait=lambda: events.put("waiting")):
                    events.put("acquired")

            t = threading.Thread(target=second)
            t.start()
            assert events.get(timeout=60) == "waiting"
            holder.stdin.close()  # the first command ends: its session, and the lock, go
            assert holder.wait(timeout=60) == 0
            assert events.get(timeout=60) == "acquired"
            t.join(timeout=60)
        finally:
            os.environ["XDG_CACHE_HOME"] = before
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)
