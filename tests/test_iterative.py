"""The iterative graph with fake chat models: loops, budgets, citations, events."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.iterative import build
from tests.fakes import researcher
from tests.helpers import QUESTION, citations_resolve, of_type, run_iterative


def run(ctx, checkpointer=None, question=QUESTION):
    return run_iterative(
        ctx, question, checkpointer=checkpointer, config={"recursion_limit": 200, "configurable": {"thread_id": "t"}}
    )


def assert_citations_resolve(final):
    assert citations_resolve(final)


def test_one_pass_completes(fake_model):
    spec, model = fake_model(researcher(complete_after=1))
    final, events = run(Context(model=spec, max_iterations=3))
    assert final["stopped_by"] == "complete"
    assert final["usage"]["iterations"] == 1
    assert final["usage"]["llm_calls"] == sum(1 for c in model.calls)
    assert_citations_resolve(final)
    assert any(s["title"] == "Eiffel Tower" for s in final["sources"])
    types = [e["type"] for e in events]
    for t in ("started", "searching", "search_complete", "judging", "writing", "verifying", "complete"):
        assert t in types, t
    assert "Partial report" not in final["report"]


def test_loops_twice_then_finishes(fake_model):
    spec, model = fake_model(researcher(complete_after=2))
    final, events = run(Context(model=spec, max_iterations=5))
    assert final["stopped_by"] == "complete"
    assert final["usage"]["iterations"] == 2
    kinds = [c["kind"] for c in model.calls]
    assert kinds.count("KnowledgeGapOutput") == 2
    assert kinds.count("AgentSelectionPlan") == 1  # the first search is the question itself
    assert [e["type"] for e in events].count("looping") == 1
    queries = [e["query"] for e in events if e["type"] == "searching"]
    assert queries[0] == QUESTION and "Gustave Eiffel" in queries
    assert_citations_resolve(final)


def test_max_iterations_stops_with_partial_report(fake_model):
    spec, _ = fake_model(researcher(complete_after=99))
    final, events = run(Context(model=spec, max_iterations=2))
    assert final["stopped_by"] == "max_iterations"
    assert final["usage"]["iterations"] == 2
    assert "Partial report" in final["report"] and "max_iterations" in final["report"]
    assert [e["reason"] for e in of_type(events, "budget")] == ["max_iterations"]
    assert_citations_resolve(final)


@pytest.mark.parametrize("max_tokens", [900, 1500, 2500, 4000])
def test_token_budget_never_exceeded(fake_model, max_tokens):
    spec, _ = fake_model(researcher(complete_after=99))
    final, events = run(Context(model=spec, max_iterations=50, max_tokens=max_tokens))
    assert final["stopped_by"] == "max_tokens"
    assert [e["reason"] for e in of_type(events, "budget")] == ["max_tokens"]
    assert final["usage"]["total_tokens"] <= max_tokens
    assert "Partial report" in final["report"]
    assert "## Sources" in final["report"]


def test_time_budget_stops_the_loop(fake_model):
    spec, model = fake_model(researcher(complete_after=99), latency=0.3)
    final, events = run(Context(model=spec, max_iterations=50, max_seconds=4))
    assert final["stopped_by"] == "max_seconds"
    assert [e["reason"] for e in of_type(events, "budget")] == ["max_seconds"]
    assert "Partial report" in final["report"] and "max_seconds" in final["report"]
    # each call lasts 0.3 s or its timeout, whichever is shorter: the calls the run chose to
    # make fit in its 4 s (a slower machine makes fewer); without the budget the loop would
    # have gone on for 50 iterations
    assert all(0 < c["kwargs"]["timeout"] <= 4 for c in model.calls)
    assert sum(min(0.3, c["kwargs"]["timeout"]) for c in model.calls) <= 4
    assert_citations_resolve(final)


def test_dangling_citations_and_invented_urls_are_removed(fake_model):
    def cite(ids):
        return (
            "# Report\n\nThe Eiffel Tower is a lattice tower in Paris [1]. "
            "It was moved to the Moon in 1999 [42]. See https://example.com/made-up for more."
        )

    spec, _ = fake_model(researcher(complete_after=1, cite=cite))
    final, _ = run(Context(model=spec, writer="single"))
    assert "[42]" not in final["report"]
    assert "example.com" not in final["report"]
    # the grounded writer drops what no source supports before the tracer sees it
    assert "Moon" not in final["report"] and "See " not in final["report"]
    assert "lattice tower in Paris [1]" in final["report"]
    assert_citations_resolve(final)


def test_a_finished_thread_takes_a_new_question(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    saver = InMemorySaver()
    first, _ = run(Context(model=spec), saver)
    second, events = run(Context(model=spec), saver, question="Where is the Louvre?")
    assert second["question"] == "Where is the Louvre?"
    assert second["usage"]["iterations"] == 1
    assert second["usage"]["llm_calls"] == first["usage"]["llm_calls"]  # not the sum of both runs
    assert [e["query"] for e in of_type(events, "searching")][0] == "Where is the Louvre?"
    assert any(s["title"] == "Louvre" for s in second["sources"])
    assert not any("Eiffel" in s["title"] for s in second["sources"])  # nothing carried over
    assert_citations_resolve(second)


def test_a_new_question_after_an_unfinished_run_starts_afresh(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    saver = InMemorySaver()
    graph = build(checkpointer=saver)
    ctx = Context(model=spec)
    config = {"recursion_limit": 40, "configurable": {"thread_id": "unfinished"}}
    for _ in graph.stream({"question": QUESTION}, config, context=ctx, interrupt_before=["writer"]):
        pass
    assert graph.get_state(config).next == ("writer",)  # left unfinished
    final = None
    for final in graph.stream({"question": "Where is the Louvre?"}, config, context=ctx, stream_mode="values"):  # noqa: B007
        pass
    assert final["usage"]["iterations"] == 1
    assert any(s["title"] == "Louvre" for s in final["sources"])
    assert not any("Eiffel" in s["title"] for s in final["sources"])
