"""The deep graph with fake chat models: review loop, parallel sections, failures, citations."""

import re
import threading
import time
import uuid

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from tests.deep_helpers import citations_resolve, deep_responder, plan_for, run_deep, section_of
from tests.helpers import of_type

Q = "Give an overview of the Eiffel Tower: its design, construction and purpose"


def setup(fake_model, respond, **ctx):
    spec, model = fake_model(respond)
    graph = build(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}
    return graph, Context(model=spec, writer="single", max_iterations=2, **ctx), config, model


def headings(report):
    return re.findall(r"^## (.+)$", report.split("## Sources")[0], re.MULTILINE)


def test_review_accept_at_once(fake_model):
    graph, ctx, config, model = setup(fake_model, deep_responder(3), outline_review=True)
    final, events, asked = run_deep(graph, ctx, config, {"question": Q}, [{"action": "accept"}])
    assert len(asked) == 1
    assert asked[0] == {
        "type": "outline_review",
        "outline": {
            "title": "The Eiffel Tower",
            "sections": [{"title": s["title"], "key_question": s["key_question"]} for s in plan_for(3)["sections"]],
        },
        "round": 1,
        "max_rounds": 3,
    }
    assert headings(final["report"]) == ["Design", "Construction", "Purpose"]
    assert [s["status"] for s in final["sections"]] == ["done"] * 3
    assert final["outline"]["title"] == "The Eiffel Tower"
    assert citations_resolve(final)


def test_review_revise_then_accept(fake_model):
    plans = [plan_for(3), {**plan_for(2), "title": "Revised tower"}]
    graph, ctx, config, model = setup(fake_model, deep_responder(plans=plans), outline_review=True)
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": Q},
        [{"action": "revise", "comment": "Only two sections please"}, {"action": "accept"}],
    )
    assert [a["round"] for a in asked] == [1, 2]
    assert asked[1]["outline"]["title"] == "Revised tower"
    planner_prompts = [c["prompt"] for c in model.calls if c["kind"] == "ReportPlan"]
    assert len(planner_prompts) == 2 and "Only two sections please" in planner_prompts[1]
    assert headings(final["report"]) == ["Design", "Construction"]


def test_review_replace_then_accept(fake_model):
    mine = {
        "title": "My tower report",
        "sections": [
            {"title": "Engineer", "key_question": "Who was Gustave Eiffel?"},
            {"title": "Paris", "key_question": "What is Paris known for?"},
            {"title": "Liberty", "key_question": "Who designed the Statue of Liberty?"},
        ],
    }
    graph, ctx, config, model = setup(fake_model, deep_responder(2), outline_review=True)
    final, events, asked = run_deep(
        graph, ctx, config, {"question": Q}, [{"action": "replace", "outline": mine}, {"action": "accept"}]
    )
    assert asked[1]["outline"] == mine
    assert final["report"].startswith("# My tower report")
    assert headings(final["report"]) == ["Engineer", "Paris", "Liberty"]
    assert sum(1 for c in model.calls if c["kind"] == "ReportPlan") == 1  # used as given
    assert citations_resolve(final)


def test_review_invalid_answer_asks_again(fake_model):
    graph, ctx, config, _ = setup(fake_model, deep_responder(2), outline_review=True)
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": Q},
        [
            {"action": "dance"},
            "yes",
            {"action": "replace", "outline": {"title": "x", "sections": []}},
            {"action": "revise", "comment": "  "},
            {"action": "accept"},
        ],
    )
    ctx5 = len(asked)
    assert ctx5 == 3  # max_review_rounds=3: three invalid answers, then the outline goes ahead
    assert "unknown action 'dance'" in asked[1]["error"]
    assert "expected an object" in asked[2]["error"]
    assert any(e["type"] == "outline" and "used up" in e.get("note", "") for e in events)
    assert final["report"] and [s["status"] for s in final["sections"]] == ["done", "done"]


def test_review_runs_out_of_rounds(fake_model):
    graph, ctx, config, model = setup(fake_model, deep_responder(2), outline_review=True, max_review_rounds=2)
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": Q},
        [{"action": "revise", "comment": "more"}, {"action": "revise", "comment": "even more"}, {"action": "accept"}],
    )
    assert len(asked) == 2
    assert sum(1 for c in model.calls if c["kind"] == "ReportPlan") == 3
    notes = [e for e in events if e["type"] == "outline" and e.get("note")]
    assert notes and "used up (2)" in notes[-1]["note"]
    assert final["report"]


def test_without_review_no_interrupt(fake_model):
    graph, ctx, config, _ = setup(fake_model, deep_responder(2))
    final, events, asked = run_deep(graph, ctx, config, {"question": Q})
    assert asked == [] and final["report"]


def test_sections_run_in_parallel_and_keep_outline_order(fake_model):
    # the first section's model calls wait until the three others were reported complete on
    # the stream: it finishes last, yet comes first in the report
    inner = deep_responder(4)
    others_done = threading.Event()

    def respond(kind, prompt, n):
        if section_of(prompt) == "Design":
            assert others_done.wait(60), "the other sections were never reported complete"
        return inner(kind, prompt, n)

    graph, ctx, config, _ = setup(fake_model, respond)
    events, completed = [], set()
    for mode, chunk in graph.stream({"question": Q}, config, context=ctx, stream_mode=["custom", "values"]):
        if mode == "custom":
            events.append(chunk)
            if chunk["type"] == "section_complete" and chunk["index"] != 0:
                completed.add(chunk["index"])
                if len(completed) == 3:
                    others_done.set()
    final = graph.get_state(config).values
    done_order = [e["index"] for e in events if e["type"] == "section_complete"]
    assert sorted(done_order) == [0, 1, 2, 3] and done_order[-1] == 0
    starts = [i for i, e in enumerate(events) if e["type"] == "section_started"]
    first_done = next(i for i, e in enumerate(events) if e["type"] == "section_complete")
    assert len(starts) == 4 and max(starts) < first_done  # all started before any finished
    assert headings(final["report"]) == ["Design", "Construction", "Purpose", "Legacy"]
    searched = {e["section"] for e in events if e["type"] == "searching"}
    assert searched == {0, 1, 2, 3}  # section events are forwarded, tagged with their index
    assert citations_resolve(final)


def test_one_failing_section_does_not_sink_the_run(fake_model):
    graph, ctx, config, _ = setup(
        fake_model, deep_responder(3, fail_on="How was the Eiffel Tower built?"), max_retries=1
    )
    final, events, _ = run_deep(graph, ctx, config, {"question": Q})
    status = {s["title"]: s for s in final["sections"]}
    assert status["Construction"]["status"] == "failed"
    assert "provider unreachable" in status["Construction"]["reason"]
    assert status["Design"]["status"] == status["Purpose"]["status"] == "done"
    assert "could not be researched" in final["report"] and "1 of 3 sections failed" in final["report"]
    assert any(e["type"] == "error" for e in events)
    assert headings(final["report"]) == ["Design", "Construction", "Purpose"]
    assert citations_resolve(final)


def test_citations_renumbered_and_deduplicated_across_sections(fake_model):
    graph, ctx, config, _ = setup(fake_model, deep_responder(3))
    final, _, _ = run_deep(graph, ctx, config, {"question": Q})
    urls = [s["url"] for s in final["sources"]]
    assert len(urls) == len(set(urls))  # one number per URL
    # every section is about the Eiffel Tower: the article is shared, with one number
    shared = [s for s in final["sources"] if s["title"] == "Eiffel Tower"]
    assert len(shared) == 1
    cited_by = [sec for sec in final["sections"] if any(s["id"] == shared[0]["id"] for s in sec["sources"])]
    assert len(cited_by) >= 2
    assert citations_resolve(final)
    assert [s["id"] for s in final["sources"]] == list(range(1, len(urls) + 1))


def test_section_concurrency_limits_sections_at_once(fake_model):
    graph, ctx, config, _ = setup(fake_model, deep_responder(3, slow={"Eiffel": 0.05}), section_concurrency=1)
    final, events, _ = run_deep(graph, ctx, config, {"question": Q})
    order = [(e["type"], e["index"]) for e in events if e["type"] in ("section_started", "section_complete")]
    running, peak = 0, 0
    for kind, _ in order:
        running += 1 if kind == "section_started" else -1
        peak = max(peak, running)
    assert peak == 1 and len(order) == 6
    # time is shared by waves: one section at a time means three waves
    assert {e["budget"]["waves"] for e in events if e["type"] == "section_started"} == {3}
    assert [s["status"] for s in final["sections"]] == ["done"] * 3


def test_a_new_question_on_a_finished_thread_starts_afresh(fake_model):
    graph, ctx, config, _ = setup(fake_model, deep_responder(2))
    first, _, _ = run_deep(graph, ctx, config, {"question": Q})
    second, _, _ = run_deep(graph, ctx, config, {"question": "Another question about the tower"})
    assert second["usage"]["total_tokens"] <= first["usage"]["total_tokens"] * 1.2  # not the sum of both
    assert second["usage"]["llm_calls"] < first["usage"]["llm_calls"] * 1.5  # not the sum of both runs
    assert len(second["sections"]) == 2 and citations_resolve(second)


def test_a_section_whose_judge_fails_keeps_its_draft(fake_model):
    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput" and "How was the Eiffel Tower built?" in prompt:
            return "{not json"
        return deep_responder(3)(kind, prompt, n)

    graph, ctx, config, _ = setup(fake_model, respond)
    final, events, _ = run_deep(graph, ctx, config, {"question": Q})
    construction = next(s for s in final["sections"] if s["title"] == "Construction")
    assert construction["status"] == "done" and construction["stopped_by"] == "error"
    assert "could not be researched" not in final["report"]
    assert any(e["type"] == "error" and e.get("node") == "knowledge_gap" for e in events)


def _sentences_of(prompt: str, i: int) -> list[str]:
    m = re.search(rf'<source id="{i}" title="([^"]*)">\n(.*?)</source>', prompt, re.DOTALL)
    text = " ".join(m.group(2).split()) if m else ""
    return [x for x in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if x.endswith(".") and not x.endswith(").")]


def test_the_proofreader_drops_repeated_sentences_and_polishes_each_section(fake_model):
    shared = {}

    def write(prompt, ids):  # each section quotes other sentences of its sources, then one every section repeats
        k = {"Design": 0, "Construction": 1, "Purpose": 2}.get(section_of(prompt) or "", 0)
        own = [f"{sents[k][:-1]} [{i}]." for i in ids if len(sents := _sentences_of(prompt, i)) > k]
        tower = next((i for i in ids if 'title="Eiffel Tower"' in prompt.split(f'<source id="{i}"', 1)[-1][:40]), None)
        if tower is None:
            return " ".join(own) or "Nothing."
        shared["text"] = _sentences_of(prompt, tower)[-1][:-1]
        return " ".join(own + [f"{shared['text']} [{tower}]."])

    polished = []

    def polish(text):  # a copy edit that keeps every fact and citation
        polished.append(text)
        return "Indeed, " + text

    graph, ctx, config, model = setup(fake_model, deep_responder(3, write=write, polish=polish))
    final, _, _ = run_deep(graph, ctx, config, {"question": Q})
    body = final["report"].split("## Sources")[0]
    # the repeated sentence is said once, in the first section
    assert shared and body.count(shared["text"]) == 1, body
    design = body.split("## Design", 1)[1].split("\n## ", 1)[0]
    assert shared["text"] in design
    assert citations_resolve(final)
    # each section long enough to polish (200 characters, nodes/proofreader.py) was polished, once,
    # after the repetition was dropped
    sections = {
        t: body.split(f"## {t}", 1)[1].split("\n## ", 1)[0].strip() for t in ("Design", "Construction", "Purpose")
    }
    long = [t for t, text in sections.items() if len(text.removeprefix("Indeed, ")) >= 200]
    assert len(long) >= 2 and len(polished) == len(long), body
    assert sum(shared["text"] in text for text in polished) == 1
    for t in long:
        assert sections[t].startswith("Indeed, "), sections[t]


def test_time_spent_waiting_for_the_review_is_not_counted(fake_model):
    # a budget the research itself stays well inside on a loaded machine (each result is embedded)
    graph, ctx, config, _ = setup(fake_model, deep_responder(2), outline_review=True, max_seconds=10)
    _, _, asked = run_deep(graph, ctx, config, {"question": Q})
    assert [a["round"] for a in asked] == [1]  # waiting for the person
    time.sleep(12)  # who takes longer than the run's whole time budget
    final, events, _ = run_deep(graph, ctx, config, Command(resume={"action": "accept"}))
    assert final["stopped_by"] == "complete" and not of_type(events, "budget")
    assert [(s["status"], s["stopped_by"]) for s in final["sections"]] == [("done", "complete")] * 2
    assert citations_resolve(final)
