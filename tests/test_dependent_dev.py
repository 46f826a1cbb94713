"""`langgraph dev` and the SDK: a dependent outline reviewed (replaced with dependencies, one of
them invalid), accepted, and researched in layers over HTTP.

The server, the OpenAI stub and the helpers are those of tests/test_langgraph_dev.py (a
server of this module's own, started and stopped the same way)."""

from __future__ import annotations

import re

from langgraph_sdk import get_client

from tests.test_durable import TOPICS, citations_resolve
from tests.test_langgraph_dev import run, server, stub  # noqa: F401 (fixtures)

MINE = {
    "title": "Eiffel and the Fair",
    "sections": [
        {"title": "Engineer", "key_question": "Who was Gustave Eiffel?"},
        {"title": "World's Fair", "key_question": "What was the 1889 World's Fair?"},
        {
            "title": "Tower",
            "key_question": "Why was the Eiffel Tower built for the 1889 World's Fair?",
            "depends_on": [0, "World's Fair", "Tower"],
        },
    ],
}


def test_dependent_outline_reviewed_and_accepted_over_http(server, stub):  # noqa: F811
    context = {
        "outline_review": True,
        "outline_style": "dependent",
        "model": "openai:stub",
        "base_url": stub.base_url,
        "max_sections": 3,
        "max_iterations": 1,
        "max_seconds": 120,
    }
    modes = ["custom", "updates"]

    async def stream(client, thread_id, **kwargs):
        parts = []
        async for part in client.runs.stream(thread_id, "deep", context=context, stream_mode=modes, **kwargs):
            assert part.event != "error", part.data
            parts.append((part.event, part.data))
        return parts

    async def go():
        client = get_client(url=server["url"])
        tid = (await client.threads.create())["thread_id"]
        first = await stream(client, tid, input={"question": "Tell me about the Eiffel Tower"})
        second = await stream(client, tid, command={"resume": {"action": "replace", "outline": MINE}})
        waiting = await client.threads.get_state(tid)
        third = await stream(client, tid, command={"resume": {"action": "accept"}})
        return first, second, waiting, third, await client.threads.get_state(tid)

    first, second, waiting, third, final = run(go())

    def request(parts):
        return [d["__interrupt__"] for e, d in parts if e == "updates" and "__interrupt__" in d][0][0]["value"]

    # the planner's outline (no dependencies from this model): one layer, shown in the request
    r1 = request(first)
    assert r1["layers"] == [[0, 1, 2]]
    assert [(s["title"], s["depends_on"]) for s in r1["outline"]["sections"]] == [(t, []) for t, _ in TOPICS]
    outline = next(d for e, d in first if e == "custom" and d["type"] == "outline")
    assert outline["layers"] == [[0, 1, 2]]

    # the replacement: its self-reference dropped with an event, its layers shown for round 2
    r2 = request(second)
    assert r2["round"] == 2 and r2["layers"] == [[0, 1], [2]]
    assert [s["depends_on"] for s in r2["outline"]["sections"]] == [[], [], [0, 1]]
    dropped = [d for e, d in second if e == "custom" and d["type"] == "dependency_dropped"]
    assert [(d["index"], d["reason"]) for d in dropped] == [(2, "self")]
    assert waiting["next"] == ["outline_review"]

    # accepted: Tower is researched after Engineer and World's Fair, with their findings
    events = [d for e, d in third if e == "custom"]
    order = [(e["type"], e["index"]) for e in events if e["type"] in ("section_started", "section_researched")]
    assert order.index(("section_started", 2)) > max(
        order.index(("section_researched", 0)), order.index(("section_researched", 1))
    )
    assert {e["index"]: e["layer"] for e in events if e["type"] == "section_started"} == {0: 0, 1: 0, 2: 1}
    assert events[-1]["type"] == "complete"
    texts = ["\n".join(str(m.get("content") or "") for m in r["body"].get("messages", [])) for r in stub.requests]
    tower = [t for t in texts if "Why was the Eiffel Tower built for the 1889 World's Fair? (in: " in t]
    noted = [m for m in tower if "In two to four sentences" in m or "Write the section body" in m]  # notes shown
    assert any("Write the section body" in m for m in noted), tower
    assert all(
        "builds on earlier sections" in m and "Who was Gustave Eiffel?" in m and "What was the 1889 World's Fair?" in m
        for m in noted
    ), noted

    values = final["values"]
    assert final["next"] == [] and values["report"].startswith("# Eiffel and the Fair\n")
    headings = re.findall(r"^## (.+)$", values["report"], re.M)
    assert [h for h in headings if h in ("Engineer", "World's Fair", "Tower")] == ["Engineer", "World's Fair", "Tower"]
    assert [s["status"] for s in values["sections"]] == ["done"] * 3
    assert values["outline"]["sections"][2]["depends_on"] == [0, 1]
    assert citations_resolve(values["report"], values["sources"])
