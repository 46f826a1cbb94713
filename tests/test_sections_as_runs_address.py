"""`section_execution: server` where the server's address is missing or not an http(s) one:
no section leaves the process, each is a failed section whose reason says what to set, and the
report is written with the gaps (as docs/server.md says). Nothing waits for a server."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from tests.deep_helpers import DEEP_QUESTION, deep_responder, run_deep

NEEDS = "SectionServerError: section_execution 'server' needs DEEPRESEARCH_SECTION_SERVER, the LangGraph server's http(s) address"


@pytest.mark.parametrize("address", [None, "127.0.0.1:2024"])
def test_sections_as_runs_without_a_server_address_fail_saying_what_to_set(fake_model, monkeypatch, address):
    if address is None:
        monkeypatch.delenv("DEEPRESEARCH_SECTION_SERVER", raising=False)
    else:
        monkeypatch.setenv("DEEPRESEARCH_SECTION_SERVER", address)
    spec, model = fake_model(deep_responder(2))
    graph = build(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}
    ctx = Context(model=spec, writer="single", max_iterations=2, max_sections=2, section_execution="server")

    final, events, _ = run_deep(graph, ctx, config, {"question": DEEP_QUESTION})

    assert [(s["status"], s["reason"]) for s in final["sections"]] == [("failed", NEEDS)] * 2
    assert [e["reason"] for e in events if e["type"] == "section_complete"] == [NEEDS] * 2
    assert "2 of 2 sections failed" in final["report"] and "Traceback" not in final["report"]
