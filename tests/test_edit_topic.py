"""Expand keeps to its paragraph's topic: a retrieved source that only shares a word with the
paragraph ("tower") adds nothing to it, however well its own sentence is supported.

Invented text throughout: a paragraph on an engineer, a source on her, a source on the tower
she designed, one on another engineer's tower (close in meaning, sentence by sentence: a steel
lattice tower designed by an engineer), one on her foundation (whose sentence is on its cafe)
and one on a card game called Tower."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command

from deepresearch.config import Context
from deepresearch.nodes.report_feedback import report_feedback, route_after_feedback
from deepresearch.state.iterative import IterativeState
from tests.fakes import editor

ENGINEER = (
    "Ilse Varga was a Hungarian structural engineer who designed the Korvel radio tower in 1931. "
    "She later taught steel construction at the Budapest Technical University."
)
MAST = (
    "The Korvel radio tower is a 190-metre steel lattice mast near Szeged, designed by the engineer Ilse Varga. "
    "Its riveted frame was assembled in eleven months."
)
CARDS = (
    "Tower is a patience card game in which the player builds a tower of cards in suit from ace to king. "
    "The player may move the top card of a tower onto a foundation."
)
TV_TOWER = (
    "The Danube Tower is a steel lattice television tower in Vienna, designed by the engineer Hans Lintl. "
    "It was opened in 1964."
)
CAFE = "The foundation's cafe in Szeged serves coffee and poppy-seed cakes on weekends. It was renovated in 2015."
SELECTED = "Ilse Varga was a Hungarian structural engineer who designed the Korvel radio tower in 1931 [1]."
REPORT = (
    "# Ilse Varga\n\n" + SELECTED + " She later taught steel construction at the Budapest Technical University [1].\n\n"
    "## Sources\n\n1. [Ilse Varga](https://example.org/varga)\n"
)


def source(n: int, title: str, slug: str, text: str) -> dict:
    return {
        "id": n,
        "key": f"key-{slug}",
        "title": title,
        "url": f"https://example.org/{slug}",
        "backend": "web",
        "snippet": text,
    }


def cut_short(instruction: str, passage: str, ids: list[int]) -> str:
    return passage[:15]  # a fragment: expand falls back to the sources' own sentences


def expand(fake_model, rewrite=None, **settings) -> dict:
    """The report after Expand on SELECTED, the model adding each shown source's first
    sentence, cited (tests.fakes.editor), or `rewrite`'s reply."""
    spec, _ = fake_model(editor(rewrite=rewrite))
    graph = StateGraph(IterativeState, context_schema=Context)
    graph.add_node("report_feedback", report_feedback)
    graph.add_edge(START, "report_feedback")
    graph.add_conditional_edges("report_feedback", route_after_feedback)
    app = graph.compile(checkpointer=InMemorySaver())
    ctx = Context(model=spec, edit_after_report=True, max_seconds=10.0**6, **settings)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    evidence = [
        source(1, "Ilse Varga", "varga", ENGINEER),
        source(2, "Korvel radio tower", "korvel", MAST),
        source(3, "Tower (card game)", "tower-cards", CARDS),
        source(4, "Danube Tower", "danube-tower", TV_TOWER),
        source(5, "Ilse Varga Foundation", "varga-foundation", CAFE),
    ]
    state = {
        "question": "Who was Ilse Varga?",
        "report": REPORT,
        "sources": [{"id": 1, "title": "Ilse Varga", "url": "https://example.org/varga", "backend": "web"}],
        "evidence": evidence,
        "editing": True,
    }
    app.invoke(state, config, context=ctx)
    start = REPORT.index(SELECTED)
    request = {"action": "expand", "selected_text": SELECTED, "start": start, "end": start + len(SELECTED)}
    app.invoke(Command(resume=request), config, context=ctx)
    values = app.get_state(config).values
    assert not values.get("feedback_error"), values.get("feedback_error")
    return values


def test_expand_adds_what_is_on_the_paragraphs_topic_and_not_what_only_shares_a_word(fake_model):
    """The model's rewrite adds the first sentence of every source it was shown: the card
    game's (far in meaning) and the other engineer's tower's (a source on another subject than
    the paragraph's, one it neither cites nor names) are left out, said in `removed`."""
    values = expand(fake_model)
    report = values["report"]
    assert "190-metre steel lattice mast" in report  # the tower she designed: on the topic
    assert "card game" not in report and "Tower (card game)" not in report
    assert "Danube" not in report
    assert "poppy-seed" not in report  # a source on her foundation, but a sentence far from the passage
    left_out = [r["value"] for r in values["removed"] if r.get("kind") == "sentence"]
    assert any("card game" in v for v in left_out) and any("Danube" in v for v in left_out)


def test_the_fallback_of_a_failed_rewrite_keeps_to_the_topic_too(fake_model):
    """The model's reply is a fragment: the sources' own sentences that share the most words
    with the selection stand in, and "tower" is not enough to be one of them."""
    values = expand(fake_model, rewrite=cut_short)
    report = values["report"]
    assert "instead" in values["last_change"]["fallback"]
    assert report.count("[") > REPORT.count("[")  # sentences were added
    assert "card" not in report and "foundation" not in report


@pytest.mark.parametrize("embeddings", ["none"])
def test_without_an_embedder_nothing_is_judged_by_meaning(fake_model, embeddings):
    """The same edit with no embedder: the word-sharing sentence is supported by its source and
    stays (what the meaning check above is there to stop)."""
    report = expand(fake_model, embeddings=embeddings)["report"]
    assert "190-metre steel lattice mast" in report and "card game" in report and "Danube" in report
