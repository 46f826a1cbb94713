"""`section_execution: server` without a server (tests/test_sections_as_runs.py has the servers).

- Where the server's address is missing or not an http(s) one, no section leaves the process:
  each is a failed section whose reason says what to set, and the report is written with the
  gaps (as docs/server.md says). Nothing waits for a server.
- A section's thread id is the same wherever its parent run is taken up again, from whichever
  checkpoint (the server's run id stands for the run), and another for another run, section or
  task; without a server's run id, the task's place in the parent's checkpoint stands for it.
"""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from deepresearch.sections.remote import section_thread
from deepresearch.sections.run import section_input
from tests.deep_helpers import DEEP_QUESTION, deep_responder, plan_for, run_deep

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


def test_a_sections_thread_is_its_runs_and_tasks_wherever_the_run_resumes():
    plan = plan_for(2)

    def task(i: int, **changed) -> dict:
        s = plan["sections"][i]
        return {"title": s["title"], "key_question": s["key_question"], "report_title": plan["title"], **changed}

    def thread(i: int, run: str | None, step: str, **changed) -> str:
        config = {"thread_id": "parent", "checkpoint_ns": f"section_research:{step}"}
        return section_thread({**config, **({"run_id": run} if run else {})}, section_input(task(i, **changed)), i)

    first = thread(0, "run-1", "task-at-the-fan-out")
    assert thread(0, "run-1", "task-of-a-fan-out-planned-again") == first  # the same run, resumed
    assert thread(1, "run-1", "task-at-the-fan-out") != first  # another section
    assert thread(0, "run-1", "task-at-the-fan-out", key_question="Who paid for it?") != first  # another task
    assert thread(0, "run-2", "task-at-the-fan-out") != first  # a later run of the same thread
    # a command-line run (no server run id): its resume continues from the fan-out's checkpoint
    assert thread(0, None, "task-at-the-fan-out") == thread(0, None, "task-at-the-fan-out")
    assert thread(0, None, "task-at-the-fan-out") != thread(0, None, "task-of-another-step")
