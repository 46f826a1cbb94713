"""What a reader sees of a report's shape: its title is the question (never the clarified
brief), no section heading stands with nothing under it (it says why), and a deep report says
once that research stopped early, naming the sections where it did."""

from __future__ import annotations

import re
import uuid

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deepresearch.config import Context
from deepresearch.graphs import deep, iterative
from tests.clarify_helpers import clarifier
from tests.deep_helpers import deep_responder, run_deep

Q = "Who was the engineer behind the Eiffel Tower?"
# two sections whose research finds the same sources: the second one's sentences all repeat the first's
OVERLAPPING = [("Design", "Who was the engineer behind the Eiffel Tower?"), ("Engineer", "Who was Gustave Eiffel?")]


def headings_without_text(report: str) -> list[str]:
    """Headings (below the title) followed by no line of text before the next heading of their
    level or above; the report-wide notes at the end and the Sources list are no section's text."""
    body = report.partition("\n## Sources\n")[0]
    lines = [x for x in body.split("\n") if x.strip() and not x.startswith("> **Partial report:**")]
    out = []
    for i, line in enumerate(lines):
        level = len(re.match(r"#*", line).group(0))
        if level < 2:
            continue
        rest = lines[i + 1 :]
        nxt = next((j for j, x in enumerate(rest) if 0 < len(re.match(r"#*", x).group(0)) <= level), len(rest))
        if not any(not x.startswith("#") for x in rest[:nxt]):
            out.append(line)
    return out


def deep_run(fake_model, respond, max_iterations=1):
    spec, _ = fake_model(respond)
    ctx = Context(model=spec, max_iterations=max_iterations, writer="extractive")
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
    values, _events, _ = run_deep(
        deep.build(checkpointer=InMemorySaver()), ctx, config, {"question": "Give an overview of the Eiffel Tower"}
    )
    return values


def test_a_section_whose_sentences_were_all_said_before_says_so(fake_model):
    values = deep_run(fake_model, deep_responder(OVERLAPPING))
    report = values["report"]
    assert headings_without_text(report) == [], report
    # the outline's sections all stay; the one whose sentences were all said before keeps its last
    # one (the de-duplication never empties a section), so it still holds a cited fact
    engineer = report.split("## Engineer\n\n", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"\[\d+\]", engineer) and not engineer.startswith(">"), report
    assert [s["title"] for s in values["sections"]] == ["Design", "Engineer"]


def test_every_emptied_heading_says_why():
    """A part with text, or with a sub-part with text, stays as it is; an emptied one (a
    template's too: its headings are the report's shape) says why it is empty."""
    from deepresearch.nodes.proofreader import say_why_empty

    report = (
        "# T\n\n## Answer\n\nBees dance [1].\n\n## Findings\n\n### Sub\n\nThey see light [2].\n\n"
        "## Emptied\n\n### Also empty\n\n## Last\n\n> **Partial report:** research stopped early."
    )
    out = say_why_empty(report)
    assert re.findall(r"(?m)^#+ .*$", out) == re.findall(r"(?m)^#+ .*$", report)
    assert headings_without_text(out) == []
    assert out.count("> Nothing new here: ") == 3  # Emptied, Also empty, Last
    assert "## Findings\n\n### Sub\n\nThey see light [2]." in out
    assert out.endswith("> **Partial report:** research stopped early.")


def test_a_partial_deep_report_says_so_once_naming_the_sections(fake_model):
    values = deep_run(fake_model, deep_responder(OVERLAPPING, complete=False))
    report = values["report"]
    notes = re.findall(r"(?m)^> \*\*Partial report:\*\*.*$", report)
    assert notes == [
        "> **Partial report:** research stopped early because the research loop reached its "
        "iteration limit (max_iterations)."
    ], report  # every section stopped: said once, for all
    assert headings_without_text(report) == [], report
    assert report.rstrip().split("\n## Sources\n")[0].rstrip().endswith(notes[0])  # at the end, under no section


def test_a_note_names_the_sections_it_applies_to():
    """The synthesizer, given one section cut by its iteration limit and one complete."""
    from deepresearch.nodes.synthesizer import synthesizer

    drafts = [
        {
            "index": i,
            "title": t,
            "status": "done",
            "reason": "",
            "stopped_by": why,
            "text": f"{t} text [1].",
            "source_keys": [],
        }
        for i, (t, why) in enumerate([("Design", "max_iterations"), ("Engineer", "complete")])
    ]
    state = {
        "question": Q,
        "plan": {"title": "The Eiffel Tower", "sections": [{"title": d["title"]} for d in drafts]},
        "drafts": drafts,
        "stopped_by": "max_iterations",
        "evidence": [],
    }
    runtime = type("Runtime", (), {"context": Context(writer="extractive")})()
    draft = synthesizer(state, runtime)["draft"]
    notes = re.findall(r"(?m)^> \*\*Partial report:\*\*.*$", draft)
    assert notes == [
        "> **Partial report:** research stopped early because the research loop reached its "
        "iteration limit (max_iterations) in 1 of 2 sections (Design)."
    ], draft


def test_the_title_is_the_question_not_the_clarified_brief(fake_model):
    spec, _ = fake_model(clarifier([["What should the report focus on?"]]))
    ctx = Context(model=spec, clarify=True, max_iterations=1, writer="extractive")
    graph = iterative.build(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
    run_deep(graph, ctx, config, {"question": Q})
    final, _events, _ = run_deep(
        graph, ctx, config, Command(resume={"action": "answer", "answers": ["its engineers and the 1889 fair"]})
    )
    assert "1889 fair" in final["brief"]  # the answer is in the brief the research used
    assert final["report"].split("\n", 1)[0] == f"# {Q}"
    assert "asked to clarify" not in final["report"] and "1889 fair" not in final["report"].split("\n", 1)[0]
