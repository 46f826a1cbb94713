"""Research quality: concepts, coverage-driven gaps, grounded writing, the outline guard, eval."""

import importlib.util
import re
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.nodes.planner import concept_plan, guard_outline
from deepresearch.research.coverage import coverage
from deepresearch.tools import get_search
from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.reader import rules_reading
from tests.deep_helpers import run_deep
from tests.fakes import first_sentence, researcher, sources_in
from tests.helpers import citations_resolve, run_iterative


def run(question, ctx):
    return run_iterative(ctx, question)


def body_sentences(report):
    body = report.split("## Sources")[0]
    out = []
    for line in body.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ">", "|")):  # a table's cells are checked one by one
            out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line) if s.strip()]
    return out


# --- concepts ---------------------------------------------------------------------------


def test_concepts_are_linked_to_the_encyclopedia():
    wiki = get_search("wiki")
    found = extract("How did astronomy change with Galileo's telescope?", wiki)
    assert [c["title"] for c in found] == ["Astronomy", "Galileo Galilei", "Telescope"]
    # a word the encyclopedia's article names itself by ("A car, or an automobile, is ...")
    names = [c["title"] for c in extract("Compare the bicycle with the automobile", wiki)]
    assert names == ["Bicycle", "Car"]  # "history" and "compare" shape the question; they are no concepts
    # overlapping names: both titles are found
    titles = {c["title"] for c in extract("How does Isaac Newton's law of universal gravitation explain orbits?", wiki)}
    assert titles == {"Isaac Newton", "Newton's law of universal gravitation", "Orbit"}


def test_concepts_without_titles_are_key_phrases():
    found = extract("How do honey bees and dolphins navigate?", None)
    assert [c["name"] for c in found] == ["honey bees", "dolphins navigate"]
    assert all(c["title"] is None for c in found)


def test_fold_lowers_and_drops_accents_and_plain_ascii_takes_the_short_way():
    import random
    import unicodedata

    from deepresearch.text.words import fold

    def reference(text: str) -> str:
        text = unicodedata.normalize("NFKD", text)
        return "".join(c for c in text if not unicodedata.combining(c)).lower()

    assert fold("Hernán Cortés") == "hernan cortes" and fold("Ǆemal ﬁle") == reference("Ǆemal ﬁle") == "dzemal file"
    rnd = random.Random(16)
    for text in ["".join(chr(c) for c in range(128))] + [
        "".join(rnd.choice("AbZz09 '’-.,éÅİıßﬁ\u0301") for _ in range(rnd.randint(0, 40))) for _ in range(300)
    ]:
        assert fold(text) == reference(text), text


def test_coverage_by_title_or_by_words():
    concepts = [
        {"name": "Telescope", "title": "Telescope", "phrase": "telescope", "query": "Telescope"},
        {"name": "honey bees", "title": None, "phrase": "honey bees", "query": "honey bees"},
    ]
    evidence = [
        {"title": "Radio telescope", "snippet": "A telescope for radio waves."},
        {"title": "Bee", "snippet": "Honey bees live in hives."},
    ]
    covered, missing = coverage(concepts, evidence)
    assert [c["name"] for c in covered] == ["honey bees"]  # a linked concept needs its own article
    assert [c["name"] for c in missing] == ["Telescope"]


def test_concepts_event_and_first_round_searches_each_concept(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, events = run("How did astronomy change with Galileo's telescope?", Context(model=spec, max_iterations=3))
    concepts = next(e for e in events if e["type"] == "concepts")
    assert concepts["linked"] == ["Astronomy", "Galileo Galilei", "Telescope"]
    first = [e["query"] for e in events if e["type"] == "searching"]
    assert set(first) >= {"Galileo Galilei", "Telescope", "Astronomy"}
    # a broad question ("how did ...") explores once the subjects' articles are in: a second round
    related = [e for e in events if e["type"] == "concepts" and e.get("origin") == "related"]
    assert len(related) == 1 and related[0]["via"] == "Astronomy"
    assert final["stopped_by"] == "complete" and final["usage"]["iterations"] == 2
    assert final["covered"][:3] == ["Astronomy", "Galileo Galilei", "Telescope"]
    assert set(final["covered"][3:]) == set(related[0]["concepts"])


# --- coverage-driven gaps -----------------------------------------------------------------


@pytest.fixture
def bee_docs(tmp_path):
    (tmp_path / "bees.md").write_text(
        "# Honey bees\n\nHoney bees navigate by the sun and dance to share directions with the hive.\n",
        encoding="utf-8",
    )
    (tmp_path / "ants.md").write_text("# Ants\n\nAnts follow pheromone trails.\n", encoding="utf-8")
    return tmp_path


def test_model_says_complete_but_a_concept_is_uncovered_the_loop_goes_on(fake_model, bee_docs):
    spec, model = fake_model(researcher(complete_after=1))  # judges complete every time
    final, events = run(
        "How do honey bees and dolphins navigate?", Context(model=spec, search=f"docs:{bee_docs}", max_iterations=3)
    )
    assert final["stopped_by"] == "max_iterations"  # not "complete": dolphins were never covered
    assert final["usage"]["iterations"] == 3
    loops = [e for e in events if e["type"] == "looping"]
    assert loops and all(e["uncovered"] == ["dolphins navigate"] and e["model_complete"] for e in loops)
    queries = [e["query"] for e in events if e["type"] == "searching"]
    assert "dolphins navigate" in queries  # a targeted query for the concept, not the question again
    assert "Not found" in final["report"] and "dolphins navigate" in final["report"]


def test_uncovered_concept_but_budget_spent_stops(fake_model, bee_docs):
    spec, _ = fake_model(researcher(complete_after=1))
    final, events = run(
        "How do honey bees and dolphins navigate?",
        Context(model=spec, search=f"docs:{bee_docs}", max_iterations=50, max_tokens=1500),
    )
    assert final["stopped_by"] == "max_tokens"
    assert final["usage"]["total_tokens"] <= 1500
    assert [e["reason"] for e in events if e["type"] == "budget"][:1] == ["max_tokens"]


def test_a_capable_models_gaps_are_searched_while_budget_remains(fake_model):
    """The model's verdict leads: its gaps are searched, whether or not they share a word with the
    question (the checks are only its floor)."""

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput":
            return {"research_complete": False, "outstanding_gaps": ["divination and riddles"]}
        return researcher()(kind, prompt, n)

    spec, _ = fake_model(respond)
    final, events = run("When did astronomy change with Galileo's telescope?", Context(model=spec, max_iterations=3))
    assert final["stopped_by"] in ("max_iterations", "no_new_sources") and final["usage"]["iterations"] >= 2
    assert any("divination and riddles" in e["gaps"] for e in events if e["type"] == "looping")


def test_grounded_writer_keeps_only_cited_supported_sentences(fake_model):
    def cite(ids):
        return (
            "# Report\n\nThe source provides a comprehensive overview of the tower's role in tourism [1].\n\n"
            "The Eiffel Tower was designed by Horace Jones [1]. It is the tallest building in Peru.\n\n"
            "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France."
        )

    spec, _ = fake_model(researcher(complete_after=1, cite=cite))
    final, events = run("Who built the Eiffel Tower, and for which event?", Context(model=spec, writer="single"))
    report = final["report"]
    for invented in ("comprehensive overview", "Horace Jones", "Peru"):
        assert invented not in report
    assert "lattice tower on the Champ de Mars in Paris, France [" in report  # uncited but supported: cited
    sentences = body_sentences(report)
    assert sentences and all(re.search(r"\[\d+\]", s) for s in sentences)
    assert all(c["verdict"] == "supported" for c in final["citations"])
    assert any(e["type"] == "grounding" and e["dropped"] == 3 for e in events)
    assert citations_resolve(final)


def test_extractive_writer_quotes_its_sources(fake_model):
    spec, model = fake_model(researcher(complete_after=1))
    final, _ = run("How did astronomy change with Galileo's telescope?", Context(model=spec, writer="extractive"))
    writer_calls = [c for c in model.calls if "Write the report" in c.get("prompt", "")]
    assert not writer_calls
    from deepresearch.store import TEXTS
    from deepresearch.text.urls import source_key

    texts = " ".join(" ".join(TEXTS.get(source_key(s["url"])).split()) for s in final["sources"])
    assert {"Galileo Galilei", "Telescope", "Astronomy"} <= {s["title"] for s in final["sources"]}
    sentences = body_sentences(final["report"])
    assert len(sentences) >= 3
    for sentence in sentences:  # every sentence is one of its sources' own sentences, cited
        assert re.search(r"\[\d+\]", sentence)
        quoted = re.sub(r"\s*\[\d+\]", "", sentence).rstrip(".")
        # an opening pronoun may have been given its subject's name ("He was born" -> "Galileo Galilei was born")
        tail = re.sub(r"^(?:[A-Z][\w'-]*\s+)+", "", quoted)
        assert quoted in texts or re.search(r"\b(?:He|She|It|They|His|Her|Its|Their) " + re.escape(tail), texts), quoted


# --- outlines -----------------------------------------------------------------------------

BAD_PLAN = {
    "title": "Report",
    "background": "",
    "sections": [
        {
            "title": "Background",
            "key_question": "The answer to this question will be answered in detail with a detailed report.",
        },
        {"title": "Key Question", "key_question": "What are divination, quizzes and riddles?"},
    ],
}


def test_outline_guard_replaces_sections_off_the_question_and_covers_every_compared_thing():
    q = "Compare the bicycle with the automobile"
    concepts = extract(q, get_search("wiki"))
    plan, notes = guard_outline(BAD_PLAN, rules_reading(q, concepts), concepts, 5)
    assert [s["title"] for s in plan["sections"]] == ["Bicycle", "Car"]
    assert all(s["key_question"].endswith("?") for s in plan["sections"])
    assert len(notes) == 2
    good = {"title": "R", "sections": [{"title": "Bikes", "key_question": "How did the bicycle develop?"}]}
    plan, notes = guard_outline(good, rules_reading(q, concepts), concepts, 5)
    assert [s["title"] for s in plan["sections"]] == ["Bikes", "Car"]  # the automobile was missing
    assert notes == ["the comparison needs 'Car': section added"]


def test_concept_outline_one_section_per_concept_or_aspect():
    wiki = get_search("wiki")
    q = "The causes and effects of the French Revolution"
    plan = concept_plan(rules_reading(q, extract(q, wiki)), extract(q, wiki), 5)
    assert [s["title"] for s in plan["sections"]] == ["French Revolution: causes", "French Revolution: effects"]


def test_deep_run_with_a_bad_planner_still_covers_the_comparison(fake_model):
    def respond(kind, prompt, n):
        if kind == "ReportPlan":
            return BAD_PLAN
        if kind == "text" and "<source" in prompt and "Write the" in prompt:
            return " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in sources_in(prompt)[:2])
        return researcher()(kind, prompt, n)

    spec, _ = fake_model(respond)
    graph = build_deep(checkpointer=InMemorySaver())
    ctx = Context(model=spec, writer="single", max_iterations=1, max_sections=3)
    final, events, _ = run_deep(
        graph, ctx, {"configurable": {"thread_id": "cmp"}}, {"question": "Compare the bicycle with the automobile"}
    )
    assert [s["title"] for s in final["outline"]["sections"]] == ["Bicycle", "Car"]
    cited = {s["title"] for s in final["sources"]}
    assert {"Bicycle", "Car"} <= cited
    assert all(re.search(r"\[\d+\]", s) for s in body_sentences(final["report"]))
    assert citations_resolve(final)


# --- make eval ------------------------------------------------------------------------------


def _eval_module(name: str):
    """eval/run.py, loaded as a module (it is a script, not part of the package)."""
    path = Path(__file__).resolve().parent.parent / "eval" / "run.py"
    spec_obj = importlib.util.spec_from_file_location(name, path)
    ev = importlib.util.module_from_spec(spec_obj)
    spec_obj.loader.exec_module(ev)
    return ev


def test_eval_code_runs_on_two_questions(fake_model, capsys):
    ev = _eval_module("deepresearch_eval")
    spec, _ = fake_model(researcher(complete_after=1))
    assert (
        ev.main(
            [
                "--limit",
                "1",
                "--deep-limit",
                "1",
                "--model",
                spec,
                "--sections",
                "2",
                "--writer",
                "extractive",
                "--only",
                "coverage",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("| iterative |", "| deep |"))]
    rows = [line for line in rows if "| hand-written |" not in line]  # the report-shape table's row
    assert len(rows) == 2
    iterative = [x.strip() for x in rows[0].split("|")]
    assert iterative[2] == "1" and float(iterative[3]) == 1.0  # gold recall of the Galileo question
    deep = [x.strip() for x in rows[1].split("|")]
    assert deep[9] == "1/1"  # the bicycle and the car are both covered


def test_eval_measures_answers(fake_model, capsys):
    """The answers set: a row per kind with the report's answer accuracy beside the search box."""
    ev = _eval_module("deepresearch_eval_answers")
    spec, _ = fake_model(researcher(complete_after=1))
    assert ev.main(["--answers-limit", "1", "--model", spec, "--writer", "extractive", "--only", "answers"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| iterative")]
    fact = [x.strip() for x in rows[0].split("|")]
    assert fact[2] == "fact" and fact[3] == "1" and float(fact[4]) == 1.0  # the Berlin Wall's 1961 is stated
