"""Editing a finished report in place (node `report_feedback`), in-process: fake
models at the chat-model boundary, the offline encyclopedia as the search backend.

Every edit is checked for the rules that hold for all of them: the text outside the
rewritten span(s) is byte-identical, every citation resolves to a listed source (new
sources appended with the next numbers), the history records the change, and invalid or
unaffordable requests are asked again without using a round.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build
from tests.deep_helpers import deep_responder, run_deep
from tests.fakes import editor, paragraph_writer
from tests.helpers import QUESTION, citations_resolve, of_type

UNVERIFIED = "^unverified^"
NO_TIME_LIMIT = 10.0**6  # seconds: the edits are counted in rounds and tokens here, never in time


class Session:
    """One iterative run paused at report_feedback, and the requests sent to it."""

    def __init__(self, fake_model, respond=None, *, spec=None, **settings):
        # spec: a model served elsewhere (a stub server); else a fake answering with `respond`
        self.spec, self.model = (spec, None) if spec else fake_model(respond or editor(paragraph_writer()))
        # no wall-clock budget unless a test sets one. The research before the edits waits on the
        # run's clock and nothing else: execute_tools waits for its searches only for the loop's
        # seconds left (a later one is dropped) and no model call starts past them. On a loaded
        # machine the seconds ran out before a search came back, the report cited nothing, and
        # the tests failed at its first cited paragraph (an IndexError in cited_line)
        timed = "max_seconds" in settings
        settings.setdefault("max_seconds", NO_TIME_LIMIT)
        self.ctx = Context(model=self.spec, edit_after_report=True, max_iterations=1, **settings)
        self.graph = build(checkpointer=InMemorySaver())
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}
        self.events = []
        self.stream({"question": QUESTION})
        # the edits below need a report of cited paragraphs: a research stopped by the clock is
        # said as such, not as a missing paragraph
        assert self.values.get("stopped_by") != "max_seconds" or timed, self.values.get("stopped_by")

    def stream(self, inp, ctx=None):
        for mode, chunk in self.graph.stream(
            inp, self.config, context=ctx or self.ctx, stream_mode=["custom", "values"]
        ):
            if mode == "custom":
                self.events.append(chunk)

    @property
    def pending(self) -> dict | None:
        snap = self.graph.get_state(self.config)
        return snap.interrupts[0].value if snap.interrupts else None

    @property
    def values(self) -> dict:
        return self.graph.get_state(self.config).values

    def send(self, request, ctx=None) -> dict | None:
        self.stream(Command(resume=request), ctx)
        return self.pending

    def span(self, text: str, action: str, **extra) -> dict:
        report = self.values["report"]
        start = report.index(text)
        return {"action": action, "selected_text": text, "start": start, "end": start + len(text), **extra}


def body(report: str) -> str:
    return report[: report.rindex("\n\n## Sources\n")]


def cited_line(report: str, k: int = 0) -> str:
    """The k-th paragraph of the body that cites something."""
    return [p for p in body(report).split("\n\n") if "[" in p and not p.startswith("#")][k]


def first_sentence_of(paragraph: str) -> str:
    return re.split(r"(?<=\]\.)\s+", paragraph)[0]


def assert_only_span_changed(old: str, new: str, change: dict) -> None:
    """Text outside the change is byte-identical (the Sources list and verification line, the
    tail, are rebuilt)."""
    start, end, new_end = change["start"], change["end"], change["new_end"]
    assert body(new)[:start] == body(old)[:start]
    assert body(new)[new_end:] == body(old)[end:]


@pytest.fixture
def session(fake_model):
    return Session(fake_model)


def test_the_report_is_saved_before_the_pause(session):
    request = session.pending
    assert request["type"] == "report_feedback"
    assert (request["round"], request["max_rounds"]) == (1, 10)
    assert "error" not in request and "last_change" not in request
    values = session.values
    assert request["report"] == values["report"] and request["sources"] == values["sources"]
    assert citations_resolve(values)
    assert values["report"].count("\n\n") >= 4  # several paragraphs to edit


@pytest.mark.parametrize("action", ["expand", "shorten", "polish"])
def test_a_rewrite_changes_only_its_span(session, action):
    old = session.values["report"]
    paragraph = cited_line(old)
    text = paragraph if action == "shorten" else first_sentence_of(paragraph)
    calls = len(session.model.calls)
    request = session.send(session.span(text, action))
    new = session.values["report"]
    change = request["last_change"]
    assert "error" not in request and request["round"] == 2
    assert change["action"] == action and (change["start"], change["end"]) == (
        old.index(text),
        old.index(text) + len(text),
    )
    assert_only_span_changed(old, new, change)
    rewritten = body(new)[change["start"] : change["new_end"]]
    assert rewritten != text
    if action == "expand":
        assert len(rewritten) > len(text) and rewritten.startswith(text[:-1].rstrip(".[]1234567890 "))
    elif action == "shorten":
        assert len(rewritten) < len(text)
    else:
        assert rewritten.startswith("In short, ")
    assert len(session.model.calls) == calls + 1  # one rewrite call
    # every citation of the new text was scored, and the verification line counts them all
    records = session.values["citations"]
    assert any(rewritten.startswith(r["sentence"][:30]) or r["sentence"][:30] in rewritten for r in records)
    assert f"Verification: {len(records)} citations checked" in new
    assert citations_resolve(new, session.values["sources"])
    assert session.values["sources"] == [s for s in session.values["sources"]]  # listed as numbered
    history = session.values["rewrite_history"]
    assert [(h["action"], h["start"], h["end"], h["new_end"]) for h in history] == [
        (action, change["start"], change["end"], change["new_end"])
    ]
    assert history[0]["at"]


def test_rewritten_text_is_checked_like_the_writers(fake_model):
    """The model's rewrite is data: links, images, HTML, unknown citations and unsupported
    sentences do not reach the report."""

    def hostile(instruction, passage, ids):
        return (
            f"{passage} See [here](https://evil.example/x) ![p](https://evil.example/p.png) "
            f"<script>alert(1)</script> The tower is made of blue cheese [{ids[0]}]. "
            "It was moved to the Moon in 1999 [99]. www.evil.example/login"
        )

    s = Session(fake_model, editor(paragraph_writer(), rewrite=hostile))
    old = s.values["report"]
    text = first_sentence_of(cited_line(old))
    request = s.send(s.span(text, "polish"))
    new = s.values["report"]
    for bad in ("evil.example", "<script", "blue cheese", "Moon", "[99]", "![", "](http"):
        assert bad not in new, bad
    assert_only_span_changed(old, new, request["last_change"])
    assert citations_resolve(new, s.values["sources"])
    assert any(r["kind"] == "url" for r in s.values["removed"])


def test_supplementary_search_cites_new_sources_with_the_next_numbers(session):
    old = session.values["report"]
    before = session.values["sources"]
    evidence = len(session.values["evidence"])
    text = first_sentence_of(cited_line(old))
    request = session.send(session.span(text, "supplementary_search", query="Statue of Liberty copper framework"))
    values = session.values
    change = request["last_change"]
    assert change["action"] == "supplementary_search" and change["scope"] == "selected_only"
    assert_only_span_changed(old, values["report"], change)
    assert values["sources"][: len(before)] == before  # the old sources keep their numbers
    new_ids = [s["id"] for s in values["sources"][len(before) :]]
    assert new_ids == list(range(len(before) + 1, len(before) + 1 + len(new_ids))) and new_ids
    rewritten = body(values["report"])[change["start"] : change["new_end"]]
    assert all(f"[{n}]" in rewritten for n in new_ids)
    assert any("Statue of Liberty" in s["title"] for s in values["sources"][len(before) :])
    assert len(values["evidence"]) > evidence  # the new sources joined the run's registry, once each
    assert len({s["key"] for s in values["evidence"]}) == len(values["evidence"])
    assert citations_resolve(values)
    searches = [e for e in of_type(session.events, "searching") if e["query"] == "Statue of Liberty copper framework"]
    assert len(searches) == 1
    assert values["usage"]["iterations"] == 1  # an edit's search is no research iteration


def test_supplementary_search_with_related_paragraphs(session):
    """selected_and_related also revises the other paragraphs the new findings bear on;
    everything between the changed spans stays byte-identical."""
    old = session.values["report"]
    text = first_sentence_of(cited_line(old))
    request = session.send(
        session.span(
            text,
            "supplementary_search",
            scope="selected_and_related",
            query="Statue of Liberty copper framework by Gustave Eiffel",
        )
    )
    change = request["last_change"]
    assert change["scope"] == "selected_and_related"
    related = change.get("related") or []
    assert related, "no other paragraph was revised"
    spans = sorted(
        [{"start": change["start"], "end": change["end"], "new_start": change["start"], "new_end": change["new_end"]}]
        + related,
        key=lambda c: c["start"],
    )
    # between and around the changes, the old text, byte for byte
    new_body, old_body = body(session.values["report"]), body(old)
    at_old = at_new = 0
    for c in spans:
        shift = c["new_start"] - c["start"]
        assert new_body[at_new : c["new_start"]] == old_body[at_old : c["start"]]
        at_old, at_new = c["end"], c["new_end"]
        assert shift == c["new_start"] - c["start"]
    assert new_body[at_new:] == old_body[at_old:]
    assert citations_resolve(session.values)
    assert session.values["rewrite_history"][-1]["related"] == related


def test_fact_check_returns_verdicts_and_marks_unsupported_claims(session):
    old = session.values["report"]
    paragraph = cited_line(old)
    claim = "The tower was painted gold by Napoleon in 1650."
    # the person adds an uncited claim of their own (sync), then has the paragraph checked
    session.send({"action": "sync", "report": old.replace(paragraph, paragraph + " " + claim, 1)})
    synced = session.values["report"]
    assert claim in synced
    paragraph = paragraph + " " + claim
    request = session.send(session.span(paragraph, "fact_check"))
    change = request["last_change"]
    verdicts = {v["claim"]: v for v in change["claims"]}
    assert verdicts[claim]["verdict"] == "unsupported"
    supported = [v for v in change["claims"] if v["claim"] != claim]
    assert supported and all(v["verdict"] == "supported" and v["quote"] and v["source"]["id"] for v in supported)
    assert claim in change["searched"]  # not settled by the retrieved sources: searched
    new = session.values["report"]
    at = synced.index(claim) + len(claim)
    assert (
        new == synced[:at] + UNVERIFIED + synced[at:] or body(new) == body(synced)[:at] + UNVERIFIED + body(synced)[at:]
    )
    assert_only_span_changed(synced, new, change)
    assert request["round"] == 2  # sync used no round, the check did


def test_sync_rules(session):
    old = session.values["report"]
    # an unchanged text records nothing and uses no round
    request = session.send({"action": "sync", "report": old})
    assert session.values.get("rewrite_history", []) == [] and request["round"] == 1
    assert session.values["report"] == old
    # the person's edit: a paragraph gone, an unknown citation and an unretrieved link added
    first, second = cited_line(old, 0), cited_line(old, 1)
    edited = old.replace(first + "\n\n", "", 1).replace(
        second, second + " Also see [7] and [x](https://evil.example/a).", 1
    )
    request = session.send({"action": "sync", "report": edited})
    new = session.values["report"]
    assert first not in new and "evil.example" not in new and "[7]" not in new
    assert citations_resolve(session.values)  # renumbered from [1], every listed source cited
    assert "[1]" in new.split("\n\n## Sources")[0]
    history = session.values["rewrite_history"]
    assert [h["action"] for h in history] == ["sync"] and request["round"] == 1
    assert request["last_change"]["action"] == "sync"
    # only the latest 10 sync records are kept
    for i in range(11):
        session.send(
            {
                "action": "sync",
                "report": session.values["report"].replace("# Report", f"# Report {i}", 1)
                if i == 0
                else re.sub(r"^# Report \d+", f"# Report {i}", session.values["report"]),
            }
        )
    history = session.values["rewrite_history"]
    assert len(history) == 10 and all(h["action"] == "sync" for h in history)
    assert session.values["report"].startswith("# Report 10\n")


def test_invalid_requests_are_asked_again_without_using_a_round(session):
    old = session.values["report"]
    text = first_sentence_of(cited_line(old))
    start = old.index(text)
    citation = old.index("[1]")
    sources_at = old.index("## Sources")
    calls = len(session.model.calls)
    bad = [
        "expand",
        {"action": "rewrite"},
        {"action": "expand", "selected_text": text + "x", "start": start, "end": start + len(text)},
        {"action": "expand", "selected_text": "", "start": start, "end": start},
        {"action": "expand", "selected_text": text, "start": start, "end": len(old) + 10},
        {
            "action": "expand",
            "selected_text": old[citation - 5 : citation + 2],
            "start": citation - 5,
            "end": citation + 2,
        },
        {
            "action": "polish",
            "selected_text": old[sources_at : sources_at + 10],
            "start": sources_at,
            "end": sources_at + 10,
        },
        {
            "action": "supplementary_search",
            "selected_text": text,
            "start": start,
            "end": start + len(text),
            "scope": "everything",
        },
        {"action": "sync"},
    ]
    for request in bad:
        answer = session.send(request)
        assert answer["error"], request
        assert answer["round"] == 1, request
        assert session.values["report"] == old
    assert len(session.model.calls) == calls  # nothing was rewritten
    assert not session.values.get("rewrite_history")
    # a valid request after them works, and clears the error
    answer = session.send(session.span(text, "polish"))
    assert "error" not in answer and answer["round"] == 2


def test_max_edits_and_finish_end_the_graph(fake_model):
    s = Session(fake_model, max_edits=2)
    for k in (1, 2):
        text = first_sentence_of(cited_line(s.values["report"], k))
        s.send(s.span(text, "polish"))
    assert s.pending is None  # the second edit was the last: no pause
    snap = s.graph.get_state(s.config)
    assert snap.next == () and s.values["edits"] == 2 and len(s.values["rewrite_history"]) == 2

    s2 = Session(fake_model)
    old = s2.values["report"]
    assert s2.send({"action": "finish"}) is None
    assert s2.graph.get_state(s2.config).next == () and s2.values["report"] == old


def test_an_edit_that_does_not_fit_the_budget_is_refused(session):
    old = session.values["report"]
    used = session.values["usage"]["total_tokens"]
    text = first_sentence_of(cited_line(old))
    calls = len(session.model.calls)
    tight = replace(session.ctx, max_tokens=used + 100)
    answer = session.send(session.span(text, "expand"), ctx=tight)
    assert "token" in answer["error"] and "unchanged" in answer["error"]
    assert answer["round"] == 1 and session.values["report"] == old
    assert len(session.model.calls) == calls  # refused before any call
    assert session.values["usage"]["total_tokens"] <= tight.max_tokens


def test_an_edit_of_a_deep_report(fake_model):
    spec, _ = fake_model(editor(deep_responder(3)))
    ctx = Context(model=spec, edit_after_report=True, max_iterations=1, max_sections=3)
    graph = build_deep(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
    values, _events, requests = run_deep(graph, ctx, config, {"question": "Tell me about the Eiffel Tower"})
    assert requests[-1]["type"] == "report_feedback"
    registry = graph.get_state(config).values["evidence"]
    old = values["report"]
    before = values["sources"]
    text = first_sentence_of(cited_line(old, 1))
    start = old.index(text)
    values, _events, requests = run_deep(
        graph,
        ctx,
        config,
        Command(
            resume={
                "action": "supplementary_search",
                "selected_text": text,
                "start": start,
                "end": start + len(text),
                "query": "Statue of Liberty copper framework",
            }
        ),
    )
    change = requests[-1]["last_change"]
    assert_only_span_changed(old, values["report"], change)
    assert values["sources"][: len(before)] == before and len(values["sources"]) > len(before)
    assert citations_resolve(values)
    grown = graph.get_state(config).values["evidence"]  # the run's registry, with the new sources added
    assert grown[: len(registry)] == registry and len(grown) > len(registry)
    assert [s["title"] for s in values["sections"]] == [s["title"] for s in graph.get_state(config).values["sections"]]


def test_a_sources_own_sentence_is_quoted_as_data():
    """The fallbacks quote the sources' sentences: nothing in them becomes a link, an image,
    HTML, a heading or a citation of another source."""
    from deepresearch.edit.actions import quoted

    hostile = (
        "## The tower [3] was built [click](https://evil.example/x) ![p](https://evil.example/p.png) "
        "<script>alert(1)</script> by Eiffel, see www.evil.example/login."
    )
    line = quoted(hostile, 2)
    assert line.endswith(" [2].") and re.findall(r"\[\d+\]", line) == ["[2]"]
    for bad in ("evil.example", "<script", "![", "](", "##", "[3]"):
        assert bad not in line, (bad, line)
    assert "The tower" in line and "by Eiffel" in line
    assert quoted("[4] ## !", 1) == ""
