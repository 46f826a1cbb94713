"""Budgets across parallel sections: the user's limits hold for the whole run."""

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from deepresearch.models import register_model, unregister_model
from tests.deep_helpers import deep_responder, run_deep
from tests.fakes import ScriptedModel

Q = "Give an overview of the Eiffel Tower"


def deep_run(sections, latency=0.0, complete=False, **ctx):
    name = f"fake-{uuid.uuid4().hex[:8]}"
    model = ScriptedModel(respond=deep_responder(sections, complete=complete), latency=latency)
    register_model(name, model)
    try:
        graph = build(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": name}, "recursion_limit": 100}
        context = Context(model=name, writer="single", max_sections=sections, **ctx)
        final, events, _ = run_deep(graph, context, config, {"question": Q})
        return final, events, model
    finally:
        unregister_model(name)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections=st.integers(1, 6), max_tokens=st.integers(600, 30000), iterations=st.integers(1, 4),
       concurrency=st.integers(1, 6))
def test_token_budget_never_exceeded(sections, max_tokens, iterations, concurrency):
    final, events, model = deep_run(sections, max_tokens=max_tokens, max_iterations=iterations,
                                    model_concurrency=concurrency)
    assert final["usage"]["total_tokens"] <= max_tokens
    assert final["report"].startswith("# ")
    # with too little budget to plan, the fallback outline has one section; the outline guard
    # drops a planned section that is not about the question (the Statue of Liberty)
    assert 1 <= len(final["sections"]) == len(final["outline"]["sections"]) <= sections
    # each section kept to the share it was given
    for e in events:
        if e["type"] == "section_complete":
            share = next(s["budget"] for s in events if s["type"] == "section_started" and s["index"] == e["index"])
            assert e["usage"]["total_tokens"] <= share["max_tokens"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections=st.integers(1, 5), max_seconds=st.floats(2.0, 4.0))
def test_time_budget_never_exceeded(sections, max_seconds):
    final, events, _ = deep_run(sections, latency=0.15, max_seconds=max_seconds, max_iterations=10)
    assert final["usage"]["seconds"] <= max_seconds
    assert final["stopped_by"] in ("max_seconds", "max_iterations", "complete", "max_tokens")
    assert final["report"].startswith("# ")


def test_each_section_reports_its_own_stop():
    final, _, _ = deep_run(3, max_iterations=2)
    assert [s["stopped_by"] for s in final["sections"]] == ["max_iterations"] * 3
    assert final["stopped_by"] == "max_iterations"
    final, _, _ = deep_run(2, complete=True, max_iterations=2)
    assert [s["stopped_by"] for s in final["sections"]] == ["complete"] * 2
    assert final["stopped_by"] == "complete"
