"""A deep run researched on one machine and finished on another.

The run is stopped after its sections and resumed by a process with another cache directory
(as on another machine, or another worker of a deployment): the synthesis, the proofreading
and the citation checks read the sources' full texts from the run's store (PostgreSQL, the
SQLite file, `langgraph dev`'s store), so the verdicts and scores equal those of an unbroken
run. (With texts on one machine's disk, the other one would check against 300-character
snippets, and the citations of sentences past the snippet would turn unverified.)

The writer of these runs cites, from each source it is shown, a sentence that lies past the
snippet kept in state. The run on PostgreSQL is in tests/test_resume_elsewhere_postgres.py (a file
of its own so that the suite's workers share these runs out).
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from deepresearch.text.urls import SNIPPET_CHARS
from tests.deep_helpers import DEEP_QUESTION, deep_args, deep_responder
from tests.dev_server import DevServer, DevServerError
from tests.fakes import first_sentence
from tests.helpers import Running, citations_resolve, cli
from tests.stub_openai import StubOpenAI

FAKE_KEY = "sk-test-elsewhere-0123456789"
SYNTHESIS = "Write a short introduction and a short conclusion"
DEEP_CONTEXT = {"model": "openai:stub", "max_iterations": 2, "max_sections": 3, "max_seconds": 300}


def late_sentence(prompt: str, i: int) -> str:
    """A sentence of source `i`'s block that starts past the snippet (or its first one)."""
    m = re.search(rf'<source id="{i}"[^>]*>\n(.*?)</source>', prompt, re.DOTALL)
    text = " ".join((m.group(1) if m else "").split())
    at = 0
    for sentence in re.split(r"(?<=[.!?])\s", text):
        if at >= SNIPPET_CHARS and len(sentence) >= 30:
            return sentence.rstrip(".!? ")
        at += len(sentence) + 1
    return first_sentence(prompt, i)


def write_late(prompt: str, ids: list[int]) -> str:
    return " ".join(f"{late_sentence(prompt, i)} [{i}]." for i in ids[:3]) or "Nothing."


def held_synthesis():
    """A deep responder whose synthesis call waits until `release` is set (or a minute)."""
    release = threading.Event()
    base = deep_responder(3, write=write_late)

    def respond(kind, prompt, n):
        if SYNTHESIS in prompt and not release.is_set():
            release.wait(60)
        return base(kind, prompt, n)

    return respond, release


def machine(cli_env: dict, tmp_path: Path, name: str) -> tuple[dict, Path]:
    """A CLI environment with its own cache directory: (env, that directory)."""
    cache = tmp_path / name / "cache"
    return {**cli_env, "XDG_CACHE_HOME": str(cache), "OPENAI_API_KEY": FAKE_KEY}, cache


def no_local_texts(cache: Path) -> bool:
    folder = cache / "deepresearch" / "texts"
    return not folder.exists() or not any(folder.iterdir())


def past_snippets(citations: list[dict], evidence: list[dict]) -> list[dict]:
    """The citations whose sentence is in none of the run's snippets."""
    flat = [" ".join(s["snippet"].split()) for s in evidence]
    return [c for c in citations if not any(c["sentence"].rstrip(" .") in f for f in flat)]


def run_state(db: str, thread_id: str) -> dict:
    from deepresearch.graphs.deep import build
    from deepresearch.runtime.checkpoint import open_checkpointer

    with open_checkpointer(db) as saver:
        return build(checkpointer=saver).get_state({"configurable": {"thread_id": thread_id}}).values


def resumed_elsewhere(cli_env, tmp_path, db: str):
    env_a, cache_a = machine(cli_env, tmp_path, "a")
    env_b, cache_b = machine(cli_env, tmp_path, "b")
    respond, release = held_synthesis()
    with StubOpenAI(respond) as stub:
        release.set()
        r = cli(deep_args(stub, db, "--sections", "3", "--thread-id", "whole", "--json"), env_a)
        assert r.returncode == 0, r.stderr
        whole = json.loads(r.stdout)
        release.clear()

        # machine A: killed once the sections are done, while the synthesis call waits
        run = Running(deep_args(stub, db, "--sections", "3", "--thread-id", "moved"), env_a)
        try:
            run.wait_for(r"synthesizing 3 section")
            deadline = time.monotonic() + 60
            while (
                not any(SYNTHESIS in json.dumps(q["body"]) for q in stub.requests[-3:]) and time.monotonic() < deadline
            ):
                time.sleep(0.02)  # polls for a state, settles no race
            status = run.kill()
        finally:
            run.close()
            release.set()
        assert status == -signal.SIGKILL
        assert len(re.findall(r"section \d+ done: ", run.text)) == 3, run.text

        # machine B: another cache directory, the same database
        r = cli(["resume", "moved", "--db", db, "--json"], env_b)
        assert r.returncode == 0, r.stderr
        assert "resuming thread moved at" in r.stderr
        moved = json.loads(r.stdout)

    assert [s["status"] for s in moved["sections"]] == ["done"] * 3
    assert citations_resolve(moved)
    assert len(whole["citations"]) >= 3 and all(c["verdict"] == "supported" for c in whole["citations"])
    # what the test rests on: cited sentences that no snippet holds (checked against a snippet,
    # they would be unverified)
    assert len(past_snippets(whole["citations"], run_state(db, "whole")["evidence"])) >= 1
    assert moved["citations"] == whole["citations"]  # sentences, sources, scores, verdicts, spans
    assert moved["report"] == whole["report"]
    assert no_local_texts(cache_a) and no_local_texts(cache_b)  # nothing on either machine's disk
    return run_state(db, "moved")


def test_deep_run_resumed_on_another_machine_on_sqlite(cli_env, tmp_path):
    db = str(tmp_path / "shared" / "runs.sqlite")  # a file both machines reach (a network share)
    state = resumed_elsewhere(cli_env, tmp_path, db)
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        keys = {k for (k,) in conn.execute("SELECT key FROM store WHERE prefix = 'deepresearch.texts.t:moved'")}
    finally:
        conn.close()
    assert keys == {s["key"] for s in state["evidence"]}


# --- langgraph dev: its store -------------------------------------------------------------------


def dev_server(folder: Path, cache: Path) -> DevServer:
    """`langgraph dev` in `folder` (its in-memory state is saved to folder/.langgraph_api when
    it stops), with `cache` as its cache directory: one machine of the deployment."""
    server = DevServer(
        folder, {"OPENAI_API_KEY": FAKE_KEY, "XDG_CACHE_HOME": str(cache)}, log_name=f"server-{cache.parent.name}.log"
    )
    try:
        return server.wait_ready()
    except DevServerError as e:
        pytest.fail(str(e))


def test_deep_run_resumed_on_another_langgraph_dev_server(tmp_path):
    folder = tmp_path / "deployment"
    folder.mkdir()
    respond, release = held_synthesis()
    release.set()
    question = {"question": DEEP_QUESTION}

    async def first(url, context):
        client = get_client(url=url)
        whole = await client.runs.wait(
            (await client.threads.create())["thread_id"], "deep", input=question, context=context
        )
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "deep", input=question, context=context, interrupt_before=["synthesizer"])
        return whole, tid, await client.threads.get_state(tid)

    async def second(url, tid, context):
        client = get_client(url=url)
        moved = await client.runs.wait(tid, "deep", input=None, context=context)
        items = await client.store.search_items(("deepresearch", "texts", f"t:{tid}"), limit=100)
        return moved, items["items"]

    def go(coro):
        return asyncio.run(asyncio.wait_for(coro, timeout=240))

    with StubOpenAI(respond) as stub:
        context = {**DEEP_CONTEXT, "base_url": stub.base_url}
        server = dev_server(folder, tmp_path / "a" / "cache")
        try:
            whole, tid, paused = go(first(server.url, context))
        finally:
            server.stop()
        assert paused["next"] == ["synthesizer"], (paused, server.log())
        assert [s["status"] for s in paused["values"]["section_results"]] == ["done"] * 3
        server = dev_server(folder, tmp_path / "b" / "cache")  # another machine, the same deployment state
        try:
            moved, items = go(second(server.url, tid, context))
        finally:
            server.stop()

    assert citations_resolve(whole) and citations_resolve(moved)
    assert len(whole["citations"]) >= 3 and all(c["verdict"] == "supported" for c in whole["citations"])
    assert len(past_snippets(whole["citations"], paused["values"]["evidence"])) >= 1
    assert moved["citations"] == whole["citations"]
    assert moved["report"] == whole["report"]
    # the texts are in the server's store, under this run's label; none on either machine's disk
    assert {i["key"] for i in items} == {s["key"] for s in paused["values"]["evidence"]}
    assert no_local_texts(tmp_path / "a" / "cache") and no_local_texts(tmp_path / "b" / "cache")
