"""An asked thing still open once every way of saying it was searched gets the next page of its
first search's results (nodes.tool_selector.asked_tasks, tools.searching): results the first page
did not hold, recorded as a search of its own, never the same page again. Invented documents in a
folder searched by words."""

from __future__ import annotations

from deepresearch.config import Context
from deepresearch.llm.budget import Budget
from deepresearch.nodes.tool_selector import MAX_PAGES, asked_tasks
from deepresearch.tools.searching import run_searches

OPEN = {"gap": "lamplighter of Orrin Quay", "subject": "Orrin Quay", "words": "lamplighter", "text": "x"}


def test_an_open_thing_searched_every_way_gets_the_next_pages_then_nothing():
    first = asked_tasks(OPEN, [], "docs")
    queries = [t["query"] for t in first]
    assert queries and all("page" not in t for t in first)
    done = list(queries)
    pages = []
    while tasks := asked_tasks(OPEN, done, "docs"):
        assert len(tasks) == 1 and tasks[0]["query"] == queries[0]
        pages.append(tasks[0]["page"])
        done.append(f"{queries[0]} (page {tasks[0]['page'] + 1})")
    assert pages == list(range(1, MAX_PAGES + 1))


def test_a_later_page_holds_the_results_after_the_first_page(tmp_path):
    for n in range(1, 8):  # "lamplighter" said n times: the more often, the higher it ranks
        (tmp_path / f"quay{n}.md").write_text(f"# Quay {n}\n\n" + "The lamplighter walks. " * n + f"Note {n}.\n")
    ctx = Context(search=f"docs:{tmp_path}", embeddings="none", results_per_query=3)
    budget = Budget(max_tokens=10**6, max_seconds=60, max_iterations=3)
    found, errors, done = run_searches(ctx, budget, [{"query": "lamplighter walks"}], [], round_no=1)
    assert not errors and len(found) == 3
    more, errors, done_more = run_searches(ctx, budget, [{"query": "lamplighter walks", "page": 1}], found, round_no=2)
    assert not errors and len(more) == 3
    assert not {s["title"] for s in more} & {s["title"] for s in found}  # what the first page did not hold
    assert done == ["lamplighter walks"] and done_more == ["lamplighter walks (page 2)"]
