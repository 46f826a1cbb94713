"""Durable runs on a real PostgreSQL server (langgraph-checkpoint-postgres).

`make test` starts a throwaway server through scripts/postgres.sh and exports its URL as
DEEPRESEARCH_TEST_POSTGRES. Without that variable these tests start a server themselves
with the same script; if that is impossible (PostgreSQL not installed) they FAIL: they are
never skipped, so a broken PostgreSQL path cannot hide behind a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from deepresearch.checkpoint import open_checkpointer
from deepresearch.config import Context
from deepresearch.runner import research
from tests.stub_openai import StubOpenAI
from tests.test_durable import (QUESTION, TITLE, TOPICS, citations_resolve, cli, deep_args, deep_responder,
                                kill_after_a_section_and_resume, one_line_error, section_calls)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "postgres.sh"


@pytest.fixture(scope="module")
def server_url():
    url = os.environ.get("DEEPRESEARCH_TEST_POSTGRES")
    if url:
        yield url
        return
    folder = tempfile.mkdtemp(prefix="deepresearch-pg.")  # under /tmp: reachable by the postgres user
    r = subprocess.run(["bash", str(SCRIPT), "start", folder], capture_output=True, text=True, timeout=180)
    if r.returncode != 0 or not r.stdout.strip().startswith("postgresql://"):
        subprocess.run(["bash", str(SCRIPT), "stop", folder], capture_output=True, timeout=60)
        pytest.fail("no PostgreSQL for the durable-run tests: DEEPRESEARCH_TEST_POSTGRES is unset and "
                    f"scripts/postgres.sh could not start a server:\n{r.stderr}")
    try:
        yield r.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", folder], capture_output=True, timeout=60)


@pytest.fixture
def pg(server_url):
    """A fresh database on the server for one test; its URL."""
    import psycopg

    name = f"dr_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = server_url.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def env(cli_env):
    cli_env["OPENAI_API_KEY"] = "sk-test-postgres-0123456789"
    return cli_env


def test_deep_run_killed_and_resumed_on_postgres(env, pg):
    done, before, resumed, out, r, stub = kill_after_a_section_and_resume(env, pg, "pg-killed-1")
    for title in done:
        assert resumed[title] == 0, (done, before, resumed)
    for title, _ in TOPICS:
        if before[title] == 0:
            assert resumed[title] == 3, (done, before, resumed)
        assert 3 <= before[title] + resumed[title] <= 3 + 1, (done, before, resumed)
    assert [s["title"] for s in out["sections"]] == [t for t, _ in TOPICS]
    assert all(s["status"] == "done" for s in out["sections"])
    assert out["report"].startswith(f"# {TITLE}")
    assert citations_resolve(out["report"], out["sources"])

    # the checkpoints are in PostgreSQL (not in a SQLite file somewhere)
    import psycopg

    with psycopg.connect(pg) as conn:
        namespaces = {row[0] for row in conn.execute(
            "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s", ("pg-killed-1",))}
    assert "" in namespaces and any(ns.startswith("section_research:") for ns in namespaces)

    listed = json.loads(cli(["threads", "--db", pg, "--json"], env).stdout)
    assert [(t["thread_id"], t["status"], t["question"]) for t in listed] == [("pg-killed-1", "done", QUESTION)]


def test_review_waiting_on_postgres_is_answered_later(env, pg):
    with StubOpenAI(deep_responder(TOPICS[:2])) as stub:
        r = cli(deep_args(stub, pg, "--review", "--thread-id", "pg-rev-1", "--quiet"), env)
        assert r.returncode == 0 and r.stdout == "", r.stderr
        assert "waiting for an outline review" in r.stderr
        listed = json.loads(cli(["threads", "--db", pg, "--json"], env).stdout)
        assert [(t["thread_id"], t["status"]) for t in listed] == [("pg-rev-1", "waiting for review")]
        r = cli(["resume", "pg-rev-1", "--db", pg, "--answer", '{"action": "accept"}', "--json"], env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert [s["title"] for s in out["sections"]] == [t for t, _ in TOPICS[:2]]
        assert all(c >= 2 for c in section_calls(stub.requests, TOPICS[:2]).values())


def test_python_callers_use_open_checkpointer(pg, fake_model):
    """The documented Python way: `with open_checkpointer(url) as saver: research(..., checkpointer=saver)`."""
    spec, model = fake_model(deep_responder(TOPICS[:2]))
    with open_checkpointer(pg) as saver:
        result = research(QUESTION, Context(model=spec, max_iterations=1, max_sections=2), mode="deep",
                          checkpointer=saver, thread_id="py-1")
    assert result["report"].startswith(f"# {TITLE}")
    with open_checkpointer(pg) as saver:  # a new connection sees the finished run
        from deepresearch.graphs.deep import build

        state = build(checkpointer=saver).get_state({"configurable": {"thread_id": "py-1"}})
    assert state.next == () and state.values["report"] == result["report"]


def test_unreachable_postgres_gives_one_line_without_the_password(env):
    url = "postgresql://someone:hunter2secret@127.0.0.1:1/nowhere"
    for args in (["threads", "--db", url], ["resume", "x", "--db", url], ["a question", "--db", url]):
        line = one_line_error(cli(args, env))
        assert "cannot open the PostgreSQL checkpointer" in line
        assert "hunter2secret" not in line


def test_make_test_hands_its_server_to_pytest():
    """Under `make test` (MAKELEVEL is set) with PostgreSQL installed, the recipe's shell has
    started a server and exported its URL into this process."""
    import glob

    if os.environ.get("MAKELEVEL") and glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        assert os.environ.get("DEEPRESEARCH_TEST_POSTGRES", "").startswith("postgresql://"), \
            "make test ran pytest without DEEPRESEARCH_TEST_POSTGRES: see scripts/postgres.sh"
