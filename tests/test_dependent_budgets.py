"""Budgets of dependent outlines: the layers change when sections run, not how much they may
spend. Any dependency structure (cycles, self-references and unknown references included)."""

import re
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from deepresearch.llm.models import register_model, unregister_model
from tests.deep_helpers import deep_responder, run_deep
from tests.dependent_helpers import dep_plan, positions
from tests.fakes import ScriptedModel

Q = "Give an overview of the Eiffel Tower"

refs = st.one_of(st.integers(-1, 5), st.sampled_from(["Design", "Construction", "Purpose", "Legacy", "Nowhere"]))
structures = st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(refs, max_size=3), min_size=n, max_size=n))


def deep_run(depends, latency=0.0, complete=False, **ctx):
    name = f"fake-{uuid.uuid4().hex[:8]}"
    respond = deep_responder(plans=[dep_plan(depends, len(depends))], complete=complete)
    register_model(name, ScriptedModel(respond=respond, latency=latency))
    try:
        graph = build(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": name}, "recursion_limit": 100}
        context = Context(model=name, writer="single", max_sections=len(depends), outline_style="dependent", **ctx)
        final, events, _ = run_deep(graph, context, config, {"question": Q})
        return final, events
    finally:
        unregister_model(name)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    depends=structures,
    max_tokens=st.integers(600, 30000),
    iterations=st.integers(1, 3),
    concurrency=st.one_of(st.none(), st.integers(1, 3)),
)
def test_token_budget_never_exceeded_whatever_the_dependencies(depends, max_tokens, iterations, concurrency):
    final, events = deep_run(depends, max_tokens=max_tokens, max_iterations=iterations, section_concurrency=concurrency)
    assert final["usage"]["total_tokens"] <= max_tokens
    assert final["report"].startswith("# ")
    n = len(final["outline"]["sections"])
    assert 1 <= n == len(final["sections"]) <= len(depends)
    # every section ran once, within its share, after the research of what it depends on
    shares = {e["index"]: e["budget"] for e in events if e["type"] == "section_started"}
    assert sorted(shares) == list(range(n))
    for e in events:
        if e["type"] == "section_complete":
            assert e["usage"]["total_tokens"] <= shares[e["index"]]["max_tokens"]
    started, researched = positions(events, "section_started"), positions(events, "section_researched")
    for i, s in enumerate(final["outline"]["sections"]):
        for d in s.get("depends_on", []):
            assert d != i and started[i] > researched[d]
    # the report keeps the outline's order
    body = final["report"].split("## Sources")[0]
    heads = [h for h in re.findall(r"^## (.+)$", body, re.M) if h not in ("Introduction", "Conclusion")]
    assert heads == [s["title"] for s in final["outline"]["sections"]]


@pytest.mark.usefixtures("warm")  # the seconds are the sections', not the first load of the encyclopedia
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(depends=structures, max_seconds=st.floats(2.0, 4.0))
def test_time_budget_never_exceeded_whatever_the_dependencies(depends, max_seconds):
    final, _ = deep_run(depends, latency=0.15, max_seconds=max_seconds, max_iterations=10)
    assert final["usage"]["seconds"] <= max_seconds
    assert final["stopped_by"] in ("max_seconds", "max_iterations", "complete", "max_tokens")
    assert final["report"].startswith("# ")
