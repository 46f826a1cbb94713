"""Budgets across parallel sections: the user's limits hold for the whole run."""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from deepresearch.llm.models import register_model, unregister_model
from tests.deep_helpers import TOPICS, deep_responder, run_deep
from tests.fakes import ScriptedModel
from tests.helpers import of_type

Q = "Give an overview of the Eiffel Tower"
LOOP_STOPS = ("max_tokens", "max_seconds", "max_iterations")


def deep_run(sections, latency=0.0, complete=False, queries=None, **ctx):
    name = f"fake-{uuid.uuid4().hex[:8]}"
    model = ScriptedModel(respond=deep_responder(sections, complete=complete, queries=queries), latency=latency)
    register_model(name, model)
    try:
        graph = build(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": name}, "recursion_limit": 100}
        context = Context(model=name, writer="single", max_sections=sections, **ctx)
        final, events, _ = run_deep(graph, context, config, {"question": Q})
        return final, events, model
    finally:
        unregister_model(name)


def check_outline(final, events, model, sections):
    """The planner's outline, or (only when the budget could not pay for planning) the
    one-section fallback, with the reason given."""
    planned = any(c["kind"] == "ReportPlan" for c in model.calls)
    assert len(final["sections"]) == len(final["outline"]["sections"]) == (sections if planned else 1)
    if not planned:  # a budget stop, named by a `budget` event (never an error)
        stops = [e["reason"] for e in of_type(events, "budget") if e.get("node") == "planner"]
        assert stops and stops[0] == "max_tokens", stops
        assert not [e for e in of_type(events, "error") if e.get("node") == "planner"]
    return planned


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sections=st.integers(1, 6),
    max_tokens=st.integers(600, 30000),
    iterations=st.integers(1, 4),
    concurrency=st.integers(1, 6),
)
def test_token_budget_never_exceeded(sections, max_tokens, iterations, concurrency):
    final, events, model = deep_run(
        sections, max_tokens=max_tokens, max_iterations=iterations, model_concurrency=concurrency
    )
    assert final["usage"]["total_tokens"] <= max_tokens
    assert final["report"].startswith("# ")
    planned = check_outline(final, events, model, sections)
    if max_tokens >= 3000:  # enough to plan: the planner's outline is used
        assert planned
    # the research is never judged complete: each section stops at a budget or its iterations
    assert {s["stopped_by"] for s in final["sections"]} <= set(LOOP_STOPS), final["sections"]
    assert final["stopped_by"] in LOOP_STOPS
    # each section kept to the share it was given
    for e in of_type(events, "section_complete"):
        share = next(s["budget"] for s in of_type(events, "section_started") if s["index"] == e["index"])
        assert e["usage"]["total_tokens"] <= share["max_tokens"]


@pytest.mark.usefixtures("warm")  # the seconds are the sections', not the first load of the encyclopedia
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections=st.integers(1, 5), max_seconds=st.floats(2.0, 4.0))
def test_time_budget_stops_every_section(sections, max_seconds):
    latency = 0.15
    # each round searches another year, so that every round finds new sources: only the time can
    # stop a section (the same search each round ends it, by no new sources, on a fast machine)
    final, events, model = deep_run(
        sections,
        latency=latency,
        max_seconds=max_seconds,
        max_iterations=10,
        max_tokens=10**6,
        queries=lambda n: f"events of the year {1700 + n}",
    )
    assert check_outline(final, events, model, sections)
    assert final["report"].startswith("# ")
    # ten iterations take far longer than the time: every section stops at its share of it
    assert [s["stopped_by"] for s in final["sections"]] == ["max_seconds"] * sections
    assert final["stopped_by"] == "max_seconds"
    # each call lasts `latency` or its timeout, whichever is shorter: the calls a section chose
    # to make fit in its share of the time (a slower machine makes fewer)
    for e in of_type(events, "section_started"):
        question = TOPICS[e["index"]][1]
        calls = [c for c in model.calls if question in c["prompt"]]
        assert calls and sum(min(latency, c["kwargs"]["timeout"]) for c in calls) <= e["budget"]["max_seconds"]


def test_each_section_reports_its_own_stop():
    final, _, _ = deep_run(3, max_iterations=2)
    assert [s["stopped_by"] for s in final["sections"]] == ["max_iterations"] * 3
    assert final["stopped_by"] == "max_iterations"
    final, _, _ = deep_run(2, complete=True, max_iterations=2)
    assert [s["stopped_by"] for s in final["sections"]] == ["complete"] * 2
    assert final["stopped_by"] == "complete"
