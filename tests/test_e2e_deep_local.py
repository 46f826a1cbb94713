"""The deep graph end to end on the embedded defaults: local model, offline encyclopedia."""

import re

from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from tests.deep_helpers import citations_resolve, run_deep

MINE = {
    "title": "Paris landmarks",
    "sections": [
        {"title": "Eiffel Tower", "key_question": "Who built the Eiffel Tower?"},
        {"title": "Louvre", "key_question": "What is the Louvre museum?"},
        {"title": "Notre-Dame", "key_question": "What is Notre-Dame de Paris?"},
    ],
}


def test_review_revise_replace_accept_offline():
    graph = build(checkpointer=InMemorySaver())
    ctx = Context(outline_review=True, max_iterations=1, max_sections=3)
    config = {"configurable": {"thread_id": "e2e-deep"}, "recursion_limit": 60}
    final, events, asked = run_deep(
        graph,
        ctx,
        config,
        {"question": "Give an overview of famous landmarks of Paris"},
        [
            {"action": "revise", "comment": "Focus on three famous buildings"},
            {"action": "replace", "outline": MINE},
            {"action": "accept"},
        ],
    )
    assert [a["round"] for a in asked] == [1, 2, 3]
    assert asked[2]["outline"] == MINE
    body = final["report"].split("## Sources")[0]
    parts = re.findall(r"^## (.+)$", body, re.MULTILINE)
    # the extractive report opens with its answer: an overview, for a question without a short answer
    assert parts == ["Overview", "Eiffel Tower", "Louvre", "Notre-Dame"]
    assert final["report"].startswith("# Paris landmarks")
    assert [s["status"] for s in final["sections"]] == ["done"] * 3
    assert citations_resolve(final)
    titles = {s["title"] for s in final["sources"]}
    assert {"Eiffel Tower", "Louvre"} <= titles
