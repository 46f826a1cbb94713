"""A whole report quotes, of each source, the sentences closest in meaning to the question (up to
five): "the biggest urban area" finds "its largest city" though they share no word, and sentences
not close enough stay out. Invented entries."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.report.grounding import extract_sentences

TEXT = (
    "Ostria is a country on the northern sea. Vellmark is its capital and by far its largest city, home to "
    "half the nation. The Ostrian navy keeps ships at Tarn. Many people admire the old tide mills of the "
    "coast. Its flag is green and white."
)


def test_sentences_are_chosen_by_meaning_when_an_embedder_is_given():
    question = "what is the biggest urban area"
    sim = similarity_for(embedder_for("local"))
    by_meaning = extract_sentences(TEXT, question, limit=3, sim=sim)
    assert [x.split()[0] for x in by_meaning] == ["Ostria", "Vellmark"]  # what the thing is, always first
    by_words = extract_sentences(TEXT, question, limit=3)
    assert [x.split()[0] for x in by_words] == ["Ostria"]  # no word in common with the question


def test_the_extractive_writer_quotes_by_meaning():
    from deepresearch.config import Context
    from deepresearch.nodes.writer import write_extractive

    source = {"id": 1, "key": "a", "title": "Ostria", "url": "", "snippet": TEXT}
    concept = {"name": "Ostria", "query": "Ostria", "title": None, "phrase": "ostria", "origin": "question"}
    state = {
        "question": "what is the biggest urban area",
        "section": "Towns",
        "evidence": [source],
        "concepts": [concept],
    }
    text = write_extractive(state, [(source, 1.0)], Context(model="local", search="wiki"))
    assert "Vellmark is its capital" in text and "flag" not in text
