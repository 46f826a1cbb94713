"""The generated evaluation (eval/generate.py): seeded, five kinds, answers the encyclopedia states.

No model runs here: the generator reads the corpus only, and the run's bookkeeping is fed a fixed
result in place of the research.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import generate  # noqa: E402
import generated as generated_eval  # noqa: E402


@pytest.fixture(scope="module")
def seed_a():
    return generate.generate(11)


def test_a_seed_makes_the_same_300_questions_of_five_kinds(seed_a):
    assert generate.generate(11) == seed_a
    assert len(seed_a) >= 300
    kinds = {x["kind"] for x in seed_a}
    assert kinds == set(generate.KINDS)
    for kind in generate.KINDS:  # several phrasings of each kind
        openings = {" ".join(x["q"].split()[:2]) for x in seed_a if x["kind"] == kind}
        assert len(openings) >= 2, kind
    assert len({x["q"] for x in seed_a}) == len(seed_a)


def test_other_seeds_draw_other_questions(seed_a):
    other = {x["q"] for x in generate.generate(12)}
    assert len(other & {x["q"] for x in seed_a}) < 0.2 * len(seed_a)


def test_every_answer_is_stated_by_the_entry_it_comes_from(seed_a):
    by_title = generate.Corpus(generate.load()).by_title

    def text(title):
        e = by_title[title]
        return f"{e['title']} {e.get('description', '')} {e.get('extract', '')}"

    for x in seed_a:
        if x["kind"] == "fact":
            assert x["answers"][0] in text(x["gold"][0]), x
        elif x["kind"] == "bridge":  # B's date, reached through A's sentence that names B
            a, b = x["gold"]
            assert generate.name(b).lower() in text(a).lower() and x["answers"][0] in text(b), x
            assert generate.name(a) in x["q"] and generate.name(b) not in x["q"], x
        elif x["kind"] == "described":  # the name is the answer, and the question does not say it
            assert x["answers"] == [generate.name(x["gold"][0])]
            assert x["answers"][0].lower() not in x["q"].lower(), x
        elif x["kind"] == "compare":
            assert len(x["compare"]) == 2 and all(generate.name(t) in x["q"] for t in x["compare"]), x
            for title, fact in zip(x["compare"], x.get("answers", [])):
                assert fact in text(title), x
        else:
            assert len(x["related"]) >= 2 and x["gold"][0] not in x["related"], x
            for t in x["related"]:
                assert generate.name(t).lower() in text(x["gold"][0]).lower(), x


def test_a_role_is_read_from_the_sentence_that_names_the_person():
    assert generate._role("It was designed by the English architect", "St Paul's") == "the architect of St Paul's"
    assert generate._role("The tower was founded by", "Acme") == "the person who founded Acme"
    assert generate._role("It is a novel by", "Moby-Dick") == "the creator of Moby-Dick"
    assert generate._role("The prize is named after", "Nobel Prize") == "the person Nobel Prize is named after"
    assert generate._role("It lies in the country of", "Acme") is None


def test_the_measures_read_the_answer_paragraph_sections_and_citations():
    report = (
        "# Q\n\n## Answer\n\nIt was built in 1889 [1].\n\n## Tower\n\nThe tower is tall and made of iron [1].\n\n"
        "## Empty\n\n\n## Sources\n\n[1] Tower — https://en.wikipedia.org/wiki/Tower\n"
    )
    result = {"report": report, "sources": [{"title": "Tower"}, {"title": "Iron"}]}

    class Box:
        def search(self, q, k):
            return []

    short = generated_eval.score(result, {"kind": "fact", "q": "q", "answers": ["1889"]}, Box())
    assert short["answered"] and short["in_answer"]
    late = generated_eval.score(result, {"kind": "fact", "q": "q", "answers": ["iron"]}, Box())
    assert late["answered"] and not late["in_answer"]
    broad = generated_eval.score(result, {"kind": "broad", "q": "q", "related": ["Iron", "Steel"]}, Box())
    assert broad["related"] == 0.5 and broad["sources"] == 2
    assert broad["sections"] == 2 and broad["empty_sections"] == 1
    pair = generated_eval.score(result, {"kind": "compare", "q": "q", "compare": ["Tower", "Bridge"]}, Box())
    assert pair["cited_all"] is False


def test_the_test_seeds_questions_are_neither_printed_nor_kept(monkeypatch):
    import run as eval_run
    import subject_check

    monkeypatch.setattr(
        subject_check, "research", lambda q, context, mode: {"report": "## Answer\n\nNothing.\n", "sources": []}
    )
    items = generate.generate(eval_run.TEST_SEED, 10)
    log, kept = io.StringIO(), []
    rows = eval_run.run_generated(items, "iterative", {}, hidden=True, log=log, sink=kept.append)
    shown = log.getvalue() + repr(rows) + repr(kept)
    assert len(rows) == len(kept) == 10
    for x in items:
        assert x["q"] not in shown and not re.search(re.escape(x["q"][:30]), shown)
    dev = eval_run.run_generated(generate.generate(1001, 5), "iterative", {}, hidden=False, log=io.StringIO())
    assert all(r["q"] for r in dev)
