"""Research that explores and generalizes, on questions outside the evaluation sets: broad
questions explore past the main article, the deep graph researches in breadth, compared things
are the sections, described subjects keep their kind and order, a role that asks for a person
lands on a person, a name without a title stays a name, a quoted sentence names its subject,
and a capable model's analysis leads (also in French) while the rules check it. Fake model at
the chat-model boundary, the offline encyclopedia as the backend."""

from __future__ import annotations

import re
import uuid

from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.graphs.deep import build as build_deep
from deepresearch.llm.budget import recursion_limit
from deepresearch.research import bridges as bridge_lib
from deepresearch.research.explore import related_titles
from deepresearch.text.safe import md_text
from deepresearch.tools import get_search
from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.question import is_broad, relations_of
from deepresearch.understanding.embedded.reader import rules_reading
from tests.fakes import researcher
from tests.helpers import of_type, run_iterative

JAZZ = "Tell me about jazz."


def sim():
    """Sentences compared by meaning as the product compares them (the embedded model)."""
    return similarity_for(embedder_for("local"))


def _body(report: str) -> str:
    return report.split("\n## Sources")[0]


def test_broad_questions_are_told_from_short_answer_ones():
    for q in (JAZZ, "How does a rainbow form?", "Explain photosynthesis.", "What is the history of the Roman Empire?"):
        assert is_broad(q), q
    for q in (
        "When was the author of Moby-Dick born?",
        "What is the tallest mountain on Earth?",
        "How many moons does Mars have?",
        "Which city is the capital of France?",
    ):
        assert not is_broad(q), q


def test_a_broad_question_explores_the_things_its_subject_names(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, events = run_iterative(Context(model=spec, search="wiki", writer="extractive", max_iterations=3), JAZZ)
    related = [e for e in of_type(events, "concepts") if e.get("origin") == "related"]
    assert len(related) == 1 and related[0]["via"] == "Jazz" and len(related[0]["concepts"]) >= 3
    wiki = get_search("wiki")  # the related articles are about jazz: most say so in their own summary
    about = [t for t in related[0]["concepts"] if "jazz" in wiki.describe(t).lower()]
    assert len(about) >= 3 and "Music" not in related[0]["concepts"], related[0]["concepts"]
    cited = [s["title"] for s in final["sources"]]
    assert cited[0] == "Jazz" and set(related[0]["concepts"]) <= set(cited)
    body = _body(final["report"])
    assert body.split("\n\n")[1] == "## Overview" and "Not found" not in body
    assert 250 <= len(body.split()) <= 600


def test_a_broad_question_gets_an_overview_not_a_not_found(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, _ = run_iterative(Context(model=spec, search="wiki", writer="extractive"), "How do honey bees navigate?")
    body = _body(final["report"])
    assert "## Overview" in body and "Not found" not in body
    overview = body.split("## Overview", 1)[1].split("\n## ", 1)[0]
    assert "honey bee" in overview.lower()
    assert "Bearing (mechanical)" not in [s["title"] for s in final["sources"]]  # "honey-bearing" names no bearing


def _deep(spec, question: str, **kw):
    graph = build_deep(checkpointer=InMemorySaver())
    ctx = Context(
        model=spec, search="wiki", writer="extractive", planner="concepts", max_iterations=2, max_sections=4, **kw
    )
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(ctx)}
    return graph.invoke({"question": question}, config, context=ctx)


def test_the_deep_graph_researches_a_one_subject_question_in_breadth(fake_model):
    """Its sections are aspects found in the subject's and related articles (not the articles),
    each written from two sources or more, no sentence in two of them, between an overview with a
    note on what the report covers and a conclusion on where the sources agree."""
    spec, _ = fake_model(researcher(complete_after=1))
    final = _deep(spec, JAZZ)
    sections = final["sections"]
    cited = {s["title"] for s in final["sources"]}
    assert len(sections) >= 3 and len(cited) >= 8
    titles = [s["title"] for s in sections]
    assert not set(titles) & cited, titles  # no section is one article
    body = _body(final["report"])
    assert body.split("\n\n")[1] == "## Overview" and "> **What this report covers:**" in body
    for t in titles:
        heading = f"\n## {md_text(t, 100)}\n"
        assert heading in body, t
        text = body.split(heading, 1)[1].split("\n## ", 1)[0]
        assert len(set(re.findall(r"\[(\d+)\]", text))) >= 2, t  # every section from two sources or more
    assert "\n## Conclusion\n" in body
    sentences = [x for x in re.split(r"(?<=\.) ", re.sub(r"\[\d+\]", "", body)) if len(x.split()) > 5]
    assert len(sentences) == len(set(sentences))


def test_a_comparisons_sections_compare_the_things_on_aspects_they_share(fake_model):
    """Not a section per thing citing only its own article: each section an aspect, from two
    sources or more, every compared thing cited, no sentence in two sections."""
    found = extract("Compare the sports cricket and baseball.", get_search("wiki"))
    assert [c["name"] for c in found] == ["Cricket", "Baseball"]  # "sports" names their kind
    spec, _ = fake_model(researcher(complete_after=1))
    final = _deep(spec, "Compare the sports cricket and baseball.")
    titles = [s["title"] for s in final["sections"]]
    assert len(titles) >= 2 and not {"Cricket", "Baseball"} & set(titles), titles
    cited = {s["title"] for s in final["sources"]}
    assert {"Cricket", "Baseball"} <= cited
    body = _body(final["report"])
    for t in titles:
        text = body.split(f"\n## {md_text(t, 100)}\n", 1)[1].split("\n## ", 1)[0]
        assert len(set(re.findall(r"\[(\d+)\]", text))) >= 2, (t, text)
    assert "\n## Conclusion\n" in body
    sentences = [x for x in re.split(r"(?<=\.) ", re.sub(r"\[\d+\]", "", body)) if len(x.split()) > 5]
    assert len(sentences) == len(set(sentences))


def test_a_described_subject_keeps_its_kind_and_its_order():
    wiki = get_search("wiki")
    assert [c["name"] for c in extract("Which planet is the largest in the Solar System?", wiki)] == ["Jupiter"]
    assert [c["name"] for c in extract("What is the tallest mountain on Earth?", wiki)] == ["Mount Everest"]
    # "the fourth-longest river in Africa" and "the longest river in South Africa" are no answer
    assert [c["name"] for c in extract("What is the longest river in Africa?", wiki)] == ["Nile"]
    second = extract("What is the second largest planet in the Solar System?", wiki)
    assert [c["name"] for c in second] == ["Saturn"]


def test_a_role_that_asks_for_a_person_lands_on_a_person():
    wiki = get_search("wiki")
    text = wiki.search("Hagia Sophia", 1)[0].text  # names the Eastern Roman Empire, no architect
    subject = {"name": "Hagia Sophia", "title": "Hagia Sophia", "phrase": "hagia sophia", "origin": "question"}
    evidence = [{"id": 1, "key": "h", "title": "Hagia Sophia", "text": text}]
    q = "Who was the architect of Hagia Sophia?"
    assert bridge_lib.bridges(rules_reading(q, [subject]), [subject], evidence, lambda s: s["text"], sim(), wiki) == []


def test_a_hyphenated_title_keeps_its_relation():
    assert relations_of("When was the author of Moby-Dick born?", ["moby dick"]) == ["author"]


def test_a_name_without_a_title_stays_a_name():
    found = extract("How many bridges did Project Heron inspect, and who leads it?", get_search("wiki"))
    assert [(c["name"], c["title"]) for c in found] == [("Project Heron", None)]  # not Heron, Lead or Bridge


def test_the_answer_paragraph_does_not_open_with_a_pronoun(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, _ = run_iterative(
        Context(model=spec, search="wiki", writer="extractive"), "What language is spoken in Brazil?"
    )
    answer = final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0].strip()
    assert answer.startswith("Portuguese")


def _analyst(concepts: list[str], compared: list[str] = ()):
    base = researcher(complete_after=1)

    def respond(kind, prompt, n):
        if kind == "ConceptProposal":
            return {"concepts": concepts, "kind": "short", "compared": list(compared), "aspects": []}
        return base(kind, prompt, n)

    return respond


def test_a_capable_models_analysis_leads_in_french(fake_model):
    q = "En quelle année est né l'auteur de Don Quichotte ?"
    spec, model = fake_model(_analyst(["Don Quixote", "Miguel de Cervantes", "Banane"]))
    final, events = run_iterative(Context(model=spec, search="wiki", writer="extractive", max_iterations=2), q)
    first = of_type(events, "concepts")[0]
    # the model's reading, checked against the encyclopedia; no English rule adds "Don (river)"
    assert first["concepts"] == ["Don Quixote", "Miguel de Cervantes"]
    assert {"Don Quixote", "Miguel de Cervantes"} <= set(e["query"] for e in of_type(events, "searching"))
    assert "Miguel de Cervantes" in [s["title"] for s in final["sources"]]
    assert any(c["kind"] == "ConceptProposal" for c in model.calls)


def test_a_capable_models_proposals_must_be_about_the_question(fake_model):
    spec, _ = fake_model(_analyst(["Moby-Dick", "Herman Melville", "Photosynthesis"]))
    _final, events = run_iterative(
        Context(model=spec, search="wiki", writer="extractive", max_iterations=2),
        "When was the author of Moby-Dick born?",
    )
    first = of_type(events, "concepts")[0]
    assert first["concepts"][:2] == ["Moby-Dick", "Herman Melville"] and "Photosynthesis" not in first["concepts"]


class _TwoBodies:
    """A backend without titles: two documents that state the same superlative, one of them of
    another kind than the question asks for (and ranked first)."""

    name = "bodies"

    def search(self, query: str, k: int):
        from deepresearch.tools.base import SearchResult

        return [
            SearchResult(
                title="Zorb",
                url="https://bodies.example/zorb",
                backend="bodies",
                text="Zorb is a moon of Blix. It is the largest in the Quorl system.",
            ),
            SearchResult(
                title="Blix",
                url="https://bodies.example/blix",
                backend="bodies",
                text="Blix is a planet. It is the largest in the Quorl system.",
            ),
        ][:k]


def test_a_described_subject_is_of_the_kind_asked_for():
    from deepresearch.understanding.embedded.described import described_subject

    found = described_subject("largest quorl system", _TwoBodies(), set(), "planet")
    assert found and found["name"] == "Blix"  # Zorb says the same, but it is a moon


def test_the_history_of_one_thing_is_researched_in_breadth(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final = _deep(spec, "What is the history of the Silk Road?")
    assert len(final["sections"]) >= 3 and all(s["sources"] for s in final["sections"])


def test_a_description_ending_in_a_role_noun_is_a_persons():
    from deepresearch.understanding.embedded.question import is_person_text

    wiki = get_search("wiki")
    for title in ("Margaret Mead", "Frederick Sanger", "Peter Kropotkin"):  # "... anthropologist (1901–1978)"
        assert is_person_text(wiki.describe(title)), title
    for title in ("German Confederation", "Rhine", "Ottoman Empire"):  # dates or a people's name, no role
        assert not is_person_text(wiki.describe(title)), title


def test_a_question_that_asks_what_a_description_is_called_describes_its_subject():
    from deepresearch.understanding.embedded.question import description_of

    assert description_of("What do we call the structured system of communication?", [])
    assert description_of("What is the structured system of communication called?", [])
    assert description_of("What is Paris called?", []) is None  # it names its subject
    found = extract("What do we call the structured system of communication?", get_search("wiki"))
    assert [c["name"] for c in found] == ["Language"]


def test_an_ambiguous_name_takes_the_reading_its_companions_support():
    wiki = get_search("wiki")
    # one word with several readings, none of which the question's own words support
    assert [c["name"] for c in extract("Compare Mercury and Venus.", wiki)] == ["Mercury (planet)", "Venus"]
    assert [c["name"] for c in extract("Compare Mercury and Gold.", wiki)] == ["Mercury (element)", "Gold"]
    # a kind in parentheses shared with the other compared thing
    assert [c["name"] for c in extract("How do Rail and Tit differ?", wiki)] == ["Rail (bird)", "Tit (bird)"]


def test_related_topics_are_close_in_meaning_to_the_subject_not_to_its_names_word_pieces():
    """A rare name's word pieces make look-alike titles seem close ("Thucydides" and "Thulium"): the
    name is left out when candidates are compared with the question and the subject's opening."""
    wiki = get_search("wiki")
    text = next(r.text for r in wiki.search("Thucydides", 3) if r.title == "Thucydides")
    sim = similarity_for(embedder_for("local"))
    found = related_titles("Give me an overview of Thucydides.", "Thucydides", text, wiki, set(), sim)
    assert "Sparta" in found and not {"Thulium", "Tertullian"} & set(found), found


def test_an_order_before_a_superlative_says_another_rank():
    """'the third to last king' is no 'last king', as 'the second largest' is no 'largest'."""
    from deepresearch.understanding.embedded.described import _said_of

    assert _said_of("last king of osterland", "Dara Quill was the last king of Osterland.")
    assert not _said_of("last king of osterland", "Pell Varo was the third to last king of Osterland.")
    assert not _said_of("largest lake of osterland", "The Tarn is the second largest lake of Osterland.")
