"""An asked thing no sentence answers is led on by the thing the subject's closest sentence names: its
document is researched next (once per run), so "who built the first wall" reaches the dynasty the
wall's text says joined it, and from there its founder. Invented entries."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.leads import leads
from tests.test_asked import Encyclopedia

ENTRIES = {
    "Vellmark Wall": "Series of forts in Osterland",
    "Orm dynasty": "Ruling house of Osterland (300-200 BC)",
    "Tarn River": "River in Osterland",
    "Kel Orm": "First king of Osterland (born 330 BC)",
}
WALL = {"name": "Vellmark Wall", "query": "Vellmark Wall", "title": "Vellmark Wall", "phrase": "vellmark wall"}
TEXT = (
    "The Vellmark Wall is a line of forts along the Tarn River. The first walls were joined together under "
    "the Orm dynasty. Its towers are made of grey stone."
)
ASKED = {
    "text": "who built the first Vellmark Wall",
    "kind": "person",
    "role": "built",
    "via": "Vellmark Wall",
    "words": "",
    "gap": "built of Vellmark Wall",
}


def _leads(concepts, unanswered=(ASKED,)):
    source = {"key": "a", "title": "Vellmark Wall", "snippet": TEXT}
    sim = similarity_for(embedder_for("local"))
    backend = Encyclopedia(ENTRIES)
    return leads(list(unanswered), concepts, [source], lambda s: s["snippet"], sim, backend, ASKED["text"])


def test_the_thing_the_closest_sentence_names_is_the_next_lead():
    found = _leads([{**WALL, "origin": "question"}])
    assert [c["title"] for c in found] == ["Orm dynasty"]
    assert found[0]["origin"] == "lead" and "joined together" in found[0]["sentence"]


def test_one_lead_per_run_and_none_without_an_open_question():
    lead = {"name": "Tarn River", "title": "Tarn River", "origin": "lead"}
    assert _leads([{**WALL, "origin": "question"}, lead]) == []
    assert _leads([{**WALL, "origin": "question"}], unanswered=()) == []


def test_the_loop_researches_the_lead_next():
    """The node between rounds adds the lead to the concepts the next round searches (the encyclopedia's
    titles; the entries of this run invented)."""
    from langgraph.runtime import Runtime

    from deepresearch.config import Context
    from deepresearch.nodes.follow_leads import follow_leads

    question = "Who laid the first stones of the Vellmark Wall?"
    asked = {**ASKED, "text": question}
    source = {"id": 1, "key": "a", "title": "Vellmark Wall", "url": "", "snippet": TEXT.replace("Orm", "Qin")}
    state = {
        "question": question,
        "iteration": 2,
        "concepts": [{**WALL, "title": None, "origin": "question"}],
        "evidence": [source],
        "unanswered": [asked],
    }
    out = follow_leads(state, Runtime(context=Context(model="local", search="wiki")))
    assert [(c["title"], c["origin"]) for c in out["concepts"] if c["origin"] == "lead"] == [("Qin dynasty", "lead")]


def test_the_answer_quotes_what_led_the_research_on():
    from deepresearch.research.answer import answer_paragraph, answer_picks
    from deepresearch.understanding.embedded.reader import rules_reading

    wall = {**WALL, "origin": "question"}
    lead = {"name": "Orm dynasty", "query": "Orm dynasty", "title": "Orm dynasty", "phrase": "orm dynasty"}
    lead |= {
        "origin": "lead",
        "via": "Vellmark Wall",
        "sentence": "The first walls were joined together under the Orm dynasty.",
    }
    own = {"id": 1, "key": "a", "title": "Vellmark Wall", "snippet": TEXT}
    founded = "The Orm dynasty was founded by Kel Orm, the first king."
    dynasty = {"id": 2, "key": "b", "title": "Orm dynasty", "snippet": founded}
    king = {
        "id": 3,
        "key": "c",
        "title": "Kel Orm",
        "snippet": "Kel Orm was the first king of Osterland. He died in 290 BC.",
    }
    kel = {"name": "Kel Orm", "query": "Kel Orm", "title": "Kel Orm", "phrase": "kel orm", "origin": "bridge"}
    kel |= {"via": "Orm dynasty", "source": "b", "sentence": founded}
    reading = rules_reading(ASKED["text"], [wall])
    sim = similarity_for(embedder_for("local"))
    picks = answer_picks(reading, [wall, lead, kel], [own, dynasty, king], lambda s: s["snippet"], sim)
    said = [p.sentence for p in picks]
    assert said.index(lead["sentence"]) < said.index(founded)  # the chain in its order
    # before what the gap check took for the answer, too
    checked = [("Kel Orm was the first king of Osterland.", king)]
    text, _ = answer_paragraph(reading, [wall, lead, kel], [own, dynasty, king], lambda s: s["snippet"], sim, checked)
    assert text.index("joined together") < text.index("Kel Orm was the first king")
