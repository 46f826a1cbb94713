"""The report's language: detected from the question (or named), in every writing prompt, the
outline, the clarifying questions, the closing line, the output and the `started` event."""

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch import language
from deepresearch.config import Context
from deepresearch.graphs import deep, iterative
from deepresearch.llm.budget import recursion_limit
from tests.clarify_helpers import clarifier, deep_clarifier, long_writer, prompts
from tests.deep_helpers import citations_resolve, run_deep

FR = "Qui a conçu la tour Eiffel, et pourquoi a-t-elle été construite ?"
FRENCH = "Write in French"


def setup(graph_module, fake_model, respond, **ctx):
    spec, model = fake_model(respond)
    c = Context(model=spec, max_iterations=2, **ctx)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(c) + 20}
    return graph_module.build(checkpointer=InMemorySaver()), c, config, model


def test_detection():
    assert language.detect(FR) == "fr"
    assert language.detect("Wer hat den Eiffelturm entworfen?") == "de"
    assert language.detect("¿Quién diseñó la Torre Eiffel?") == "es"
    assert language.detect("Who was the engineer behind the Eiffel Tower, and what was it for?") == "en"
    assert language.detect("Eiffel Tower") == "en"  # too short to tell: English
    assert language.resolve("French", "Who designed it?") == "fr" and language.resolve("de", FR) == "de"
    with pytest.raises(ValueError, match="unknown language 'Klingon'"):
        Context(language="Klingon")


def test_a_text_is_classified_once(monkeypatch):
    """A run reads its question's language twice (the report's language, the concept reader's
    rules): py3langid classifies each text once, and a text told apart by its spaces only is
    the same text."""
    kind = type(language._identifier())  # py3langid's class (its instances take no attributes)
    seen = []
    classify = kind.classify
    monkeypatch.setattr(kind, "classify", lambda self, text: seen.append(text) or classify(self, text))
    question = f"Qui a conçu la tour Eiffel, et pourquoi {uuid.uuid4().hex} ?"
    assert language.detect(question) == language.detect(f"  {question}\n") == language.resolve("auto", question) == "fr"
    assert seen == [question]
    assert language.detect(question + " Et quand ?") == "fr" and len(seen) == 2


def test_french_question_deep(fake_model):
    """Every writing prompt (clarifying questions, outline, section writers, synthesis, polish)
    carries the French instruction; the output and the events say "fr"."""
    graph, ctx, config, model = setup(
        deep,
        fake_model,
        long_writer(deep_clarifier([["Quelle période ?"]])),
        clarify=True,
        writer="single",
        max_sections=2,
    )
    final, events, asked = run_deep(
        graph, ctx, config, {"question": FR}, [{"action": "answer", "answers": "La construction, 1887-1889"}]
    )
    assert asked[0]["questions"] == ["Quelle période ?"]
    writing = {
        "clarify": prompts(model, "Clarification"),
        "outline": prompts(model, "ReportPlan"),
        "sections": [p for p in prompts(model, "text") if "Write the section body" in p],
        "synthesis": prompts(model, "Synthesis"),
        "polish": [p for p in prompts(model, "text") if "Improve the flow" in p],
    }
    for what, ps in writing.items():
        assert ps, what
        assert all(FRENCH in p for p in ps), what
    # searching and judging are not writing: the gap judgement carries no instruction
    assert not any(FRENCH in p for p in prompts(model, "KnowledgeGapOutput"))
    assert final["language"] == "fr"
    started = [e for e in events if e["type"] == "started"]
    assert started and all(e["language"] == "fr" for e in started)
    assert final["report"].rstrip().splitlines()[-1].startswith("_Vérification : ")
    assert citations_resolve(final)


def test_french_question_iterative(fake_model):
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([[]]))
    final, events, asked = run_deep(graph, ctx, config, {"question": FR})
    writer = [p for p in prompts(model, "text") if "Write the report" in p]
    assert len(writer) == 1 and FRENCH in writer[0]
    assert final["language"] == "fr"
    assert [e["language"] for e in events if e["type"] == "started"] == ["fr"]


def test_english_question_and_a_named_language(fake_model):
    q = "Who was the engineer behind the Eiffel Tower, and what was it for?"
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([[]]), writer="per_source")
    final, events, asked = run_deep(graph, ctx, config, {"question": q})
    assert final["language"] == "en" and not any("Write in" in c["prompt"] for c in model.calls)
    assert final["report"].rstrip().splitlines()[-1].startswith("_Verification: ")
    graph, ctx, config, model = setup(iterative, fake_model, clarifier([[]]), writer="per_source", language="German")
    final, events, asked = run_deep(graph, ctx, config, {"question": q})
    per_source = [p for p in prompts(model, "text") if "what this source tells us" in p]
    assert per_source and all("Write in German" in p for p in per_source)
    assert final["language"] == "de" and "Prüfung: " in final["report"]
