"""A deep run whose model never finishes a reply: the planner's call cut by
the time budget is a budget stop, never an error. The outline falls back to the one built from
the question's concepts, the sections stop with the sources they found, the writers fall back
to the sources' own sentences, and the run ends with a report and `stopped_by: max_seconds`
(the CLI exits 0: `provider_failure` finds nothing)."""

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.runtime.runner import provider_failure
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.hostile_stub import HostileStub, Slow, Trickle

QUESTION = "Compare the design and purpose of the Eiffel Tower and the Statue of Liberty"
BUDGET_S = 12


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-secret-0123456789abcdef")


@pytest.mark.parametrize(
    "style,how",
    [("parallel", Slow(120)), ("dependent", Trickle(1.0, seconds=120))],
    ids=["parallel-never-answers", "dependent-trickles-a-byte-a-second"],
)
def test_a_deep_run_whose_model_hangs_ends_with_a_report_on_its_time_budget(key, warm, style, how):
    with HostileStub(deep_responder(sections=2), plan=lambda kind, n, body: how) as stub:
        ctx = Context(
            model="openai:stub", base_url=stub.base_url, mode="deep", outline_style=style, max_seconds=BUDGET_S
        )
        config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
        final, events, _ = run_deep(build_deep(checkpointer=InMemorySaver()), ctx, config, {"question": QUESTION})
    assert final["stopped_by"] == "max_seconds"
    assert not final["errors"] and not [e for e in events if e["type"] == "error"]  # a budget stop, no error
    assert provider_failure(final) is None  # what the CLI reads to exit 1 with "no model call succeeded"
    planner_stop = [e for e in events if e["type"] == "budget" and e.get("node") == "planner"]
    assert planner_stop and planner_stop[0]["reason"] == "max_seconds"
    # the outline from the question's concepts; each section stopped with what it found
    assert [s["title"] for s in final["outline"]["sections"]][:2] == ["Eiffel Tower", "Statue of Liberty"]
    assert final["sections"] and all(s["status"] == "done" for s in final["sections"])
    assert final["report"].startswith("#") and final["sources"] and citations_resolve(final)
    assert final["usage"]["seconds"] <= BUDGET_S and final["usage"]["llm_calls"] == 0


def test_a_budget_stop_is_never_read_as_a_provider_failure():
    final = {
        "usage": {"llm_calls": 0},
        "stopped_by": "error",
        "errors": [{"node": "planner", "cause": "budget exhausted: max_seconds"}],
    }
    assert provider_failure(final) is None
    final["errors"].append({"node": "writer", "cause": "OpenAIAuthenticationError (HTTP 401): bad key"})
    assert provider_failure(final) == "OpenAIAuthenticationError (HTTP 401): bad key"
