"""Clarifying questions (node `clarify`) in both graphs, with fake chat models: the interrupt
payload, answer / skip / finish, invalid answers asked again, rounds, the brief reaching every
later prompt, and no pause when the question is clear, the call fails or the budget is small."""

import uuid

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deepresearch.config import Context
from deepresearch.graphs import deep, iterative
from deepresearch.llm.budget import recursion_limit
from tests.clarify_helpers import clarifier, deep_clarifier, prompts
from tests.deep_helpers import citations_resolve, run_deep

Q = "Who built the Eiffel Tower, and for which event?"
QS = ["Do you mean the tower in Paris or a replica?", "Who is the report for?"]
ANSWERS = ["The one in Paris, built for the 1889 fair", "Engineering students"]


def setup(graph_module, fake_model, respond, **ctx):
    spec, model = fake_model(respond)
    c = Context(model=spec, clarify=True, max_iterations=2, **ctx)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(c) + 20}
    return graph_module.build(checkpointer=InMemorySaver()), c, config, model


def clarify_events(events):
    return [e for e in events if e["type"] == "clarify"]


def test_answers_become_the_brief_of_every_later_prompt(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([QS]))
    values, events, asked = run_deep(graph, ctx, config, {"question": Q})
    # paused before any research: the one call so far is the clarifying one
    assert asked == [{"type": "clarify", "questions": QS, "round": 1, "max_rounds": 1}]
    assert [c["kind"] for c in model.calls] == ["Clarification"]
    assert [e["type"] for e in events] == ["clarify"] and events[0]["status"] == "asking"

    final, events, asked = run_deep(graph, ctx, config, Command(resume={"action": "answer", "answers": ANSWERS}))
    assert asked == []
    assert len(prompts(model, "Clarification")) == 1  # the node re-ran on resume without asking the model again
    brief = final["brief"]
    assert brief.startswith(Q) and all(a in brief for a in ANSWERS) and all(q in brief for q in QS)
    later = [c for c in model.calls if c["kind"] != "Clarification"]
    kinds = {c["kind"] for c in later}
    assert {"KnowledgeGapOutput", "ConceptProposal", "text"} <= kinds
    for c in later:
        if c["kind"] != "SupportJudgement":
            assert ANSWERS[0] in c["prompt"], (c["kind"], c["prompt"][:300])
    writer = [p for p in prompts(model, "text") if "Write the report" in p]
    assert len(writer) == 1 and ANSWERS[1] in writer[0]
    assert final["stopped_by"] == "complete" and "asked to clarify" not in final["report"]
    assert final["usage"]["llm_calls"] == len(model.calls)  # the clarifying call is in the budget
    assert [e["status"] for e in clarify_events(events)] == ["answered"]


def test_free_text_answer_and_invalid_answers_asked_again(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([QS]))
    bad = [
        ["only one answer"],
        {"action": "answer", "answers": ["only one"]},
        {"action": "answer", "answers": "  "},
        {"action": "maybe"},
        {"action": "answer", "answers": ["", ""]},
    ]
    good = {"action": "answer", "answers": "The Paris tower, for students"}
    final, events, asked = run_deep(graph, ctx, config, {"question": Q}, bad + [good])
    assert len(asked) == 1 + len(bad)
    assert all(a["round"] == 1 and a["questions"] == QS for a in asked)  # an invalid answer uses no round
    assert "error" not in asked[0]
    errors = [a["error"] for a in asked[1:]]
    assert "expected an object" in errors[0] and "one text per question (2)" in errors[1]
    assert "non-empty" in errors[2] and "unknown action 'maybe'" in errors[3] and "every answer is empty" in errors[4]
    assert [e["cause"] for e in events if e["type"] == "error" and e["node"] == "clarify"] == errors
    assert len(prompts(model, "Clarification")) == 1
    assert "The Paris tower, for students" in final["brief"] and final["report"]


def test_skip_researches_the_question_as_asked(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([QS]))
    final, events, asked = run_deep(graph, ctx, config, {"question": Q}, [{"action": "skip"}])
    assert len(asked) == 1
    assert final["brief"] == Q and final["stopped_by"] == "complete" and final["report"]
    assert not any("clarify" in c["prompt"] for c in model.calls if c["kind"] != "Clarification")
    assert [e["status"] for e in clarify_events(events)] == ["asking", "skipped"]


def test_finish_ends_the_run_without_research(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([QS]))
    final, events, asked = run_deep(graph, ctx, config, {"question": Q}, [{"action": "finish"}])
    assert len(asked) == 1
    assert final["stopped_by"] == "cancelled" and final["report"] == ""
    assert [c["kind"] for c in model.calls] == ["Clarification"]
    assert not any(e["type"] in ("started", "searching", "writing") for e in events)
    assert graph.get_state(config).next == ()  # ended, nothing waiting


def test_no_pause_when_clear_failed_or_out_of_budget(fake_model):
    cases = [
        ([[]], {}, "clear"),
        ([ConnectionError("provider unreachable")], {"max_retries": 0}, "error"),
        ([QS], {"max_tokens": 200}, "budget"),
    ]
    for rounds, extra, reason in cases:
        graph, ctx, config, model = setup(iterative, fake_model, clarifier(rounds), **extra)
        final, events, asked = run_deep(graph, ctx, config, {"question": Q})
        assert asked == [], reason  # nothing paused
        notes = clarify_events(events)
        assert len(notes) == 1 and notes[0]["status"] == "not_asked" and notes[0]["reason"] == reason, notes
        assert final["brief"] == Q and final["report"], reason
        if reason == "error":
            assert any(e["node"] == "clarify" for e in final["errors"])
        if reason == "budget":
            assert "Clarification" not in [c["kind"] for c in model.calls]


def test_rounds_and_the_question_limit(fake_model):
    four = QS + ["Which period?", "How long?"]
    graph, ctx, config, model = setup(
        iterative, fake_model, clarifier([four, ["Any other wish?"], []]), max_clarify_rounds=2, max_clarify_questions=2
    )
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": Q},
        [{"action": "answer", "answers": ANSWERS}, {"action": "answer", "answers": "Keep it short"}],
    )
    assert [a["questions"] for a in asked] == [QS, ["Any other wish?"]]  # at most 2 questions a round
    assert [(a["round"], a["max_rounds"]) for a in asked] == [(1, 2), (2, 2)]
    calls = prompts(model, "Clarification")
    assert len(calls) == 2  # after the last round's answer, no more questions
    assert "at most 2 short questions" in calls[0]
    assert ANSWERS[0] in calls[1]  # the second round sees what was said in the first
    assert "Keep it short" in final["brief"] and ANSWERS[1] in final["brief"]


def test_off_by_default_and_a_new_question_on_a_finished_thread(fake_model):
    spec, model = fake_model(clarifier([QS]))
    graph = iterative.build(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "reused"}, "recursion_limit": 40}
    first, events, asked = run_deep(graph, Context(model=spec, max_iterations=1), config, {"question": Q})
    assert asked == [] and "Clarification" not in [c["kind"] for c in model.calls]
    assert first["brief"] == Q and first["language"] == "en"
    n = len(model.calls)
    ctx = Context(model=spec, clarify=True, max_iterations=1)
    other = "Why is the Statue of Liberty green?"
    final, events, asked = run_deep(
        graph, ctx, config, {"question": other}, [{"action": "answer", "answers": "the copper"}]
    )
    assert asked[0]["questions"] == QS
    assert final["brief"].startswith(other) and "the copper" in final["brief"]
    # the new run's usage is its own, the clarifying call included
    assert final["usage"]["llm_calls"] == len(model.calls) - n


def test_deep_clarify_then_outline_review(fake_model):
    graph, ctx, config, model = setup(deep, fake_model, deep_clarifier([QS]), outline_review=True, writer="single")
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": "Tell me about the Eiffel Tower"},
        [{"action": "answer", "answers": ANSWERS}, {"action": "accept"}],
    )
    assert [a["type"] for a in asked] == ["clarify", "outline_review"]
    planner = prompts(model, "ReportPlan")
    assert len(planner) == 1 and all(a in planner[0] for a in ANSWERS)
    section_writers = [p for p in prompts(model, "text") if "Write the section body" in p]
    assert len(section_writers) == 2
    assert all("This section is part of a report on" in p and ANSWERS[1] in p for p in section_writers)
    assert all(ANSWERS[0] in p for p in prompts(model, "Synthesis"))
    assert final["brief"].startswith("Tell me about the Eiffel Tower") and citations_resolve(final)
    assert final["usage"]["llm_calls"] == len(model.calls)


def test_deep_finish(fake_model):
    graph, ctx, config, model = setup(deep, fake_model, deep_clarifier([QS]))
    final, events, asked = run_deep(
        graph, ctx, config, {"question": "Tell me about the Eiffel Tower"}, [{"action": "finish"}]
    )
    assert final["stopped_by"] == "cancelled" and not final.get("report") and not final.get("outline")
    assert [c["kind"] for c in model.calls] == ["Clarification"]


def test_the_embedded_model_asks_fixed_questions_without_a_call():
    """With the tiny local model the questions are fixed ones (no model is loaded to ask)."""
    graph = deep.build(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "local"}, "recursion_limit": 40}
    ctx = Context(clarify=True, max_clarify_questions=2)
    final, events, asked = run_deep(
        graph, ctx, config, {"question": "Pourquoi la tour Eiffel a-t-elle été construite ?"}, [{"action": "finish"}]
    )
    assert asked[0]["questions"] == [
        "Sur quoi le rapport doit-il se concentrer ?",
        "Avez-vous en tête une période, un lieu ou un cas précis ?",
    ]
    assert final["stopped_by"] == "cancelled" and final["usage"]["llm_calls"] == 0
