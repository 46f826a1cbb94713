"""Over `langgraph dev` with the SDK: clarifying questions, then the outline review, then the
report (the server and its helpers are those of tests/test_langgraph_dev.py; the model is the
local OpenAI stub, answering the clarifying call too)."""

from __future__ import annotations

import json

import pytest
from langgraph_sdk import get_client

from tests.clarify_helpers import deep_clarifier
from tests.stub_openai import StubOpenAI
from tests.test_langgraph_dev import FAKE_KEY, run, server  # noqa: F401 (the server fixture)

QS = ["Do you mean the tower in Paris or a replica?", "Who is the report for?"]
ANSWERS = ["The one in Paris", "Engineering students"]


@pytest.fixture(scope="module")
def stub():
    """The stub the served graphs talk to: it asks clarifying questions about every question."""
    with StubOpenAI(deep_clarifier([QS], sections=2)) as s:
        yield s


def interrupts(parts):
    return [i["value"] for e, d in parts if e == "updates" and "__interrupt__" in d for i in d["__interrupt__"]]


def test_clarify_then_review_then_report_over_http(server, stub):  # noqa: F811
    context = {
        "clarify": True,
        "outline_review": True,
        "model": "openai:stub",
        "base_url": stub.base_url,
        "max_sections": 2,
        "max_iterations": 1,
        "max_seconds": 120,
    }
    modes = ["custom", "values", "updates"]

    async def stream(client, tid, **kwargs):
        parts = []
        async for part in client.runs.stream(tid, "deep", context=context, stream_mode=modes, **kwargs):
            assert part.event != "error", part.data
            parts.append((part.event, part.data))
        return parts

    async def go():
        client = get_client(url=server["url"])
        tid = (await client.threads.create())["thread_id"]
        first = await stream(client, tid, input={"question": "Tell me about the Eiffel Tower"})
        waiting = await client.threads.get_state(tid)
        second = await stream(client, tid, command={"resume": {"action": "answer", "answers": ""}})
        third = await stream(client, tid, command={"resume": {"action": "answer", "answers": ANSWERS}})
        waiting2 = await client.threads.get_state(tid)
        fourth = await stream(client, tid, command={"resume": {"action": "accept"}})
        final = await client.threads.get_state(tid)
        return first, waiting, second, third, waiting2, fourth, final

    n_before = len(stub.requests)
    first, waiting, second, third, waiting2, fourth, final = run(go())

    # 1. the clarifying questions arrive as an interrupt; nothing else ran
    assert interrupts(first) == [{"type": "clarify", "questions": QS, "round": 1, "max_rounds": 1}]
    assert waiting["next"] == ["clarify"]
    assert [d["type"] for e, d in first if e == "custom"] == ["clarify"]
    assert len(stub.requests) - n_before >= 1 and "ReportPlan" not in json.dumps(stub.requests[n_before:][0]["body"])
    # 2. an empty answer is asked again, with the error, in the same round
    again = interrupts(second)
    assert len(again) == 1 and again[0]["round"] == 1 and "non-empty" in again[0]["error"]
    # 3. answered: the planner's outline is up for review, planned from the brief
    review = interrupts(third)
    assert len(review) == 1 and review[0]["type"] == "outline_review"
    assert waiting2["next"] == ["outline_review"]
    plans = [
        json.dumps(r["body"], ensure_ascii=False)
        for r in stub.requests[n_before:]
        if "ReportPlan" in json.dumps(r["body"])
    ]
    assert len(plans) == 1 and all(a in plans[0] for a in ANSWERS)
    # 4. accepted: the report, with the brief and the language in the output
    values = final["values"]
    assert final["next"] == [] and values["report"].count("## Sources") == 1
    assert values["brief"].startswith("Tell me about the Eiffel Tower") and all(a in values["brief"] for a in ANSWERS)
    assert values["language"] == "en"
    started = [d for e, d in fourth if e == "custom" and d["type"] == "started"]
    assert started and all(d["language"] == "en" for d in started)
    assert FAKE_KEY not in json.dumps([first, second, third, fourth, final])


def test_iterative_finish_over_http(server, stub):  # noqa: F811
    async def go():
        client = get_client(url=server["url"])
        tid = (await client.threads.create())["thread_id"]
        context = {"clarify": True, "model": "openai:stub", "base_url": stub.base_url, "max_iterations": 1}
        await client.runs.wait(tid, "iterative", input={"question": "Who built the Eiffel Tower?"}, context=context)
        waiting = await client.threads.get_state(tid)
        out = await client.runs.wait(tid, "iterative", command={"resume": {"action": "finish"}}, context=context)
        return waiting, out

    waiting, out = run(go())
    assert waiting["interrupts"][0]["value"]["type"] == "clarify"
    assert out["stopped_by"] == "cancelled" and out["report"] == "" and out["brief"] == "Who built the Eiffel Tower?"
