"""Durable CLI runs stopped by a signal (Ctrl-C, SIGTERM) and resumed, as in tests/test_durable.py
(a file of their own so that the suite's workers share the durable tests out).

The CLI runs in subprocesses against a local stub of the OpenAI API (the HTTP boundary).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.deep_helpers import TITLE, deep_args, deep_responder, plan_requests
from tests.helpers import Running, cli
from tests.stub_openai import StubOpenAI

FAKE_KEY = "sk-test-durable-0123456789"


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = FAKE_KEY
    return cli_env


@pytest.mark.parametrize(
    "sig,status,word,target",
    [
        (signal.SIGINT, 130, "interrupted", "process"),
        (signal.SIGTERM, 143, "stopped", "process"),
        (signal.SIGTERM, 143, "stopped", "another thread"),
    ],
)
def test_ctrl_c_or_sigterm_stop_at_once_and_the_run_resumes(env, tmp_path, sig, status, word, target):
    """The third case: the kernel may hand a signal sent to the process to any of its threads;
    Python runs the handler in the main thread, which during a run waits for LangGraph's tasks
    (the model calls in flight) and would only notice when one ended."""
    db = str(tmp_path / "runs.sqlite")
    # after the question's reading and the plan, the model answers only after a minute: a CLI that
    # waited for the calls in flight would still be waiting when the stub is asked how many it answered
    with StubOpenAI(deep_responder(2), latency=lambda n: 0 if n <= 1 else 60) as stub:
        run = Running(deep_args(stub, db, "--thread-id", "c-1"), env)
        try:
            run.wait_for(r"section 1 started")
            deadline = time.monotonic() + 60
            while stub.in_flight == 0 and time.monotonic() < deadline:
                time.sleep(0.02)  # polls for a state, settles no race
            assert stub.in_flight > 0, "no model call in flight to interrupt"
            code = run.kill(sig, timeout=30) if target == "process" else run.kill_thread(sig, timeout=30)
        finally:
            run.close()
        # it left at once: the calls in flight were still unanswered when it exited
        assert code == status, (code, run.text)
        assert stub.answered == 2 and stub.in_flight > 0, (stub.answered, stub.in_flight)  # reading and plan
        assert run.lines[-1].strip() == (
            f"deepresearch: {word}; the run is checkpointed: 'deepresearch resume c-1 --db {db}' continues it"
        ), run.lines[-3:]
        stub.latency = 0
        r = cli(["resume", "c-1", "--db", db, "--json"], env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert [s["status"] for s in out.get("sections", [])] == ["done", "done"], (out, r.stderr)
        assert len(plan_requests(stub)) == 1


def test_ctrl_c_at_the_review_prompt_leaves_the_review_waiting(env, tmp_path):
    db = str(tmp_path / "runs.sqlite")
    with StubOpenAI(deep_responder(2)) as stub:
        run = Running(deep_args(stub, db, "--review", "--thread-id", "p-1"), env, stdin=subprocess.PIPE)
        try:
            run.wait_for(r"^- Construction :: ")  # the outline is shown
            run.wait_for(r"\[e\]dit the outline: ")  # the prompt waits for an answer
            code = run.kill(signal.SIGINT, timeout=20)
        finally:
            run.close()
        assert code == 130
        assert "interrupted; the run is checkpointed: 'deepresearch resume p-1" in run.text
        listed = json.loads(cli(["threads", "--db", db, "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("p-1", "waiting for review")]
        r = cli(["resume", "p-1", "--db", db], env, input="a\n")  # answered on stdin this time
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"# {TITLE}")
