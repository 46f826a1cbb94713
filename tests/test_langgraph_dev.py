"""`langgraph dev` serves the graphs of langgraph.json; the SDK drives a deep run with an
outline review over HTTP.

The server runs in a subprocess on 127.0.0.1 (offline: no analytics, no version check, no
tracing, no browser, no reload) and is stopped by its process group id. The model is the
local OpenAI stub (tests/stub_openai.py): the server process talks to it over HTTP with a
fake key, exactly as it would talk to a real provider.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from deepresearch.config import Context
from deepresearch.events import EVENT_TYPES
from tests.deep_helpers import TOPICS as ALL_TOPICS
from tests.deep_helpers import deep_responder, section_calls
from tests.dev_server import DevServer, DevServerError
from tests.helpers import citations_resolve
from tests.stub_openai import StubOpenAI

ROOT = Path(__file__).resolve().parent.parent
FAKE_KEY = "sk-test-langgraph-dev-0123456789"
TOPICS = ALL_TOPICS[:3]
MINE = [("Engineer", "Who was Gustave Eiffel?"), ("World's Fair", "What was the 1889 World's Fair?")]


@pytest.fixture(scope="module")
def stub():
    with StubOpenAI(deep_responder(3)) as s:
        yield s


@pytest.fixture(scope="module")
def server(tmp_path_factory, stub):
    server = DevServer(tmp_path_factory.mktemp("langgraph-dev"), {"OPENAI_API_KEY": FAKE_KEY})
    try:
        server.wait_ready()
    except DevServerError as e:
        pytest.fail(str(e))
    try:
        yield {"url": server.url, "log": server.log, "pid": server.proc.pid}
    finally:
        server.stop()
    assert server.proc.poll() is not None


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=120))


def test_served_graphs_and_their_schemas(server):
    async def go():
        client = get_client(url=server["url"])
        assistants = await client.assistants.search(limit=20)
        by_graph = {a["graph_id"]: a for a in assistants}
        assert {"iterative", "deep"} <= set(by_graph), assistants
        spec = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
        for gid in ("iterative", "deep"):  # Studio shows each graph's description
            assert by_graph[gid]["description"] == spec[gid]["description"]
        return {g: await client.assistants.get_schemas(by_graph[g]["assistant_id"]) for g in ("iterative", "deep")}

    schemas = run(go())
    for gid, s in schemas.items():
        # the question box
        assert s["input_schema"] is not None, (gid, server["log"]())
        props = s["input_schema"]["properties"]
        assert set(props) == {"question", "messages"}  # a question, or LangGraph's chat input
        assert props["question"]["type"] == "string" and props["question"]["description"]
        assert props["messages"]["type"] == "array" and props["messages"]["description"]
        # the result: the report and what it rests on
        out = s["output_schema"]["properties"]
        assert {"report", "sources", "citations", "usage", "stopped_by"} <= set(out), (gid, out)
        assert "evidence" not in out and "observations" not in out  # internals stay internal
        if gid == "deep":
            assert {"outline", "sections"} <= set(out)
        # the configuration form: every context field, each with its description
        ctx = s["context_schema"]["properties"]
        assert set(ctx) == {f.name for f in fields(Context)}, gid
        for f in fields(Context):
            assert ctx[f.name]["description"] == f.metadata["description"], (gid, f.name)
            assert ctx[f.name].get("default") == f.default, (gid, f.name)
        assert ctx["mode"]["enum"] == ["auto", "iterative", "deep"]


def test_deep_run_with_outline_review_over_http(server, stub):
    context = {
        "outline_review": True,
        "model": "openai:stub",
        "base_url": stub.base_url,
        "max_sections": 2,
        "max_iterations": 2,
        "max_seconds": 120,
    }
    modes = ["custom", "values", "updates"]
    replaced = {"title": "Eiffel and the Fair", "sections": [{"title": t, "key_question": q} for t, q in MINE]}

    async def stream(client, thread_id, **kwargs):
        parts = []
        async for part in client.runs.stream(thread_id, "deep", context=context, stream_mode=modes, **kwargs):
            assert part.event != "error", part.data
            parts.append((part.event, part.data))
        return parts

    async def go():
        client = get_client(url=server["url"])
        thread = await client.threads.create()
        tid = thread["thread_id"]
        first = await stream(client, tid, input={"question": "Tell me about the Eiffel Tower"})
        waiting = await client.threads.get_state(tid)
        second = await stream(client, tid, command={"resume": {"action": "replace", "outline": replaced}})
        waiting2 = await client.threads.get_state(tid)
        third = await stream(client, tid, command={"resume": {"action": "accept"}})
        final = await client.threads.get_state(tid)
        status = (await client.threads.get(tid))["status"]
        return first, waiting, second, waiting2, third, final, status

    n_before = len(stub.requests)
    first, waiting, second, waiting2, third, final, status = run(go())

    # 1. the planner's outline arrives as an interrupt (updates stream and thread state)
    interrupts = [d["__interrupt__"] for e, d in first if e == "updates" and "__interrupt__" in d]
    assert len(interrupts) == 1
    request = interrupts[0][0]["value"]
    assert request["type"] == "outline_review" and request["round"] == 1
    assert [s["title"] for s in request["outline"]["sections"]] == [t for t, _ in TOPICS[:2]]  # max_sections=2
    assert waiting["next"] == ["outline_review"]
    assert waiting["interrupts"][0]["value"] == request
    events = [d for e, d in first if e == "custom"]
    assert [e["type"] for e in events] == ["concepts", "planning", "outline"]  # analyse, then the planner

    # 2. a replaced outline is shown again for review (round 2)
    request2 = [d["__interrupt__"] for e, d in second if e == "updates" and "__interrupt__" in d][0][0]["value"]
    assert request2["round"] == 2 and request2["outline"] == replaced
    assert waiting2["next"] == ["outline_review"]
    assert sum(section_calls(stub.requests[n_before:]).values()) == 0  # nothing researched while waiting

    # 3. accepted: the sections of the replaced outline are researched, progress is streamed
    events = [d for e, d in third if e == "custom"]
    assert {e["type"] for e in events} <= set(EVENT_TYPES)
    types = [e["type"] for e in events]
    for t in (
        "section_started",
        "started",
        "searching",
        "search_complete",
        "writing",
        "section_complete",
        "synthesizing",
        "verifying",
        "complete",
    ):
        assert t in types, (t, types)
    done = [e for e in events if e["type"] == "section_complete"]
    assert sorted((e["index"], e["title"], e["status"]) for e in done) == [
        (0, MINE[0][0], "done"),
        (1, MINE[1][0], "done"),
    ]
    inner = [e for e in events if e["type"] in ("started", "searching", "search_complete", "writing")]
    assert inner and all(e.get("section") in (0, 1) for e in inner)  # tagged with their section
    assert types[-1] == "complete"
    assert any(e == "values" for e, _ in third) and any(e == "updates" for e, _ in third)

    # 4. the final thread state holds the report, following the replaced outline
    values = final["values"]
    assert final["next"] == [] and not final.get("interrupts") and status == "idle"
    report = values["report"]
    assert report.startswith("# Eiffel and the Fair\n")
    headings = re.findall(r"^## (.+)$", report, re.M)
    assert [h for h in headings if h in dict(MINE)] == [t for t, _ in MINE]
    assert not any(t in headings for t, _ in TOPICS)
    assert [s["title"] for s in values["sections"]] == [t for t, _ in MINE]
    assert citations_resolve(report, values["sources"])
    assert all(s["url"].startswith("https://en.wikipedia.org/wiki/") for s in values["sources"])
    assert values["usage"]["llm_calls"] >= 4

    # 5. the model was reached over HTTP with the server's (fake) key; only the replaced
    # sections were researched
    mine = section_calls(stub.requests[n_before:], MINE)
    assert all(c >= 2 for c in mine.values()), mine
    assert sum(section_calls(stub.requests[n_before:]).values()) == 0
    auth = [{k.lower(): v for k, v in r["headers"].items()}.get("authorization") for r in stub.requests[n_before:]]
    assert auth and set(auth) == {f"Bearer {FAKE_KEY}"}
    assert FAKE_KEY not in json.dumps([first, second, third, final])


def test_iterative_run_over_http(server, stub):
    async def go():
        client = get_client(url=server["url"])
        thread = await client.threads.create()
        return await client.runs.wait(
            thread["thread_id"],
            "iterative",
            input={"question": "Who built the Eiffel Tower?"},
            context={"model": "openai:stub", "base_url": stub.base_url, "max_iterations": 1},
        )

    out = run(go())
    assert set(out) >= {"question", "report", "sources", "citations", "usage", "stopped_by"}
    assert "evidence" not in out  # the output schema, not the whole state
    assert out["report"].count("## Sources") == 1
    assert citations_resolve(out["report"], out["sources"])


def test_server_log_is_clean(server):
    log = server["log"](10**7)
    assert "Application started up" in log
    assert FAKE_KEY not in log
    assert "Failed to get input schema" not in log and "Failed to get output schema" not in log


def test_an_assistant_keeps_the_settings_across_the_review(server, stub):
    """A run's context is per run: a resume sent without it would research with the defaults
    (the local model). An assistant created with the context (what Studio's configuration
    panel saves) carries it to every run on the thread, the resume included."""
    context = {
        "outline_review": True,
        "model": "openai:stub",
        "base_url": stub.base_url,
        "max_sections": 2,
        "max_iterations": 1,
        "max_seconds": 120,
    }

    async def go():
        client = get_client(url=server["url"])
        assistant = await client.assistants.create("deep", context=context, name="deep via the stub")
        thread = await client.threads.create()
        await client.runs.wait(thread["thread_id"], assistant["assistant_id"], input={"question": "The Eiffel Tower"})
        waiting = await client.threads.get_state(thread["thread_id"])
        n = len(stub.requests)
        out = await client.runs.wait(
            thread["thread_id"], assistant["assistant_id"], command={"resume": {"action": "accept"}}
        )
        return waiting, n, out

    waiting, n, out = run(go())
    assert waiting["next"] == ["outline_review"]
    assert [s["title"] for s in out["sections"]] == [t for t, _ in TOPICS[:2]]
    counts = section_calls(stub.requests[n:])
    assert counts[TOPICS[0][0]] >= 1 and counts[TOPICS[1][0]] >= 1, counts  # the stub, not the local model


def test_an_edit_of_the_report_over_http(server, stub):
    """edit_after_report: the finished report arrives as a report_feedback interrupt; an
    edit sent as a resume command changes only its span; finish ends the run."""
    context = {"model": "openai:stub", "base_url": stub.base_url, "max_iterations": 1, "edit_after_report": True}

    async def go():
        client = get_client(url=server["url"])
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "iterative", input={"question": "Who built the Eiffel Tower?"}, context=context)
        waiting = await client.threads.get_state(tid)
        report = waiting["interrupts"][0]["value"]["report"]
        text = re.split(r"(?<=\]\.)\s+", [p for p in report.split("\n\n") if "[1]" in p][0])[0]
        start = report.index(text)
        await client.runs.wait(
            tid,
            "iterative",
            context=context,
            command={"resume": {"action": "expand", "selected_text": text, "start": start, "end": start + len(text)}},
        )
        edited = await client.threads.get_state(tid)
        await client.runs.wait(tid, "iterative", context=context, command={"resume": {"action": "finish"}})
        final = await client.threads.get_state(tid)
        return waiting, edited, final

    waiting, edited, final = run(go())
    request = waiting["interrupts"][0]["value"]
    assert request["type"] == "report_feedback" and request["round"] == 1 and waiting["next"] == ["report_feedback"]
    assert request["report"] == waiting["values"]["report"]  # saved before the pause
    again = edited["interrupts"][0]["value"]
    change = again["last_change"]
    assert "error" not in again and again["round"] == 2 and change["action"] == "expand"
    old, new = request["report"], again["report"]
    assert new[: change["start"]] == old[: change["start"]]
    assert new.split("\n\n## Sources")[0][change["new_end"] :] == old.split("\n\n## Sources")[0][change["end"] :]
    assert change["new_end"] > change["end"]
    values = final["values"]
    assert final["next"] == [] and not final.get("interrupts")
    assert values["report"] == new and [h["action"] for h in values["rewrite_history"]] == ["expand"]
    assert citations_resolve(values["report"], values["sources"])
