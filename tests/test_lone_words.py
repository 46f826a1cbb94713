"""A question of common words only links each word to a document; a word whose document is far less
close in meaning to the whole question than the closest one's ("pipe": *Pipe organ* in a question on
digestion) is no topic of it and is dropped. Invented entries."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.understanding.embedded.concepts import coherent

ENTRIES = {
    "Pipe organ": "Musical instrument played in churches and concert halls",
    "Digestion": "Breakdown of food into small molecules the body can absorb",
    "Starch": "Carbohydrate that plants store as an energy reserve",
}


class Shelf:
    embedder = embedder_for("local")

    def titles(self):
        return list(ENTRIES)

    def link_texts(self):
        return [f"{t} {d}" for t, d in ENTRIES.items()]

    def description(self, title):
        return ENTRIES.get(title, "")

    def describe(self, title):
        return self.description(title)


def linked(word: str, title: str) -> dict:
    return {"name": title, "query": title, "title": title, "phrase": word, "origin": "question"}


QUESTION = "where along the gut pipe does the digestion of starch begin"


def test_a_lone_words_document_far_from_the_question_in_meaning_is_dropped():
    found = [linked("pipe", "Pipe organ"), linked("digestion", "Digestion"), linked("starch", "Starch")]
    assert [c["title"] for c in coherent(found, QUESTION, Shelf())] == ["Digestion", "Starch"]


def test_documents_near_the_question_all_stay():
    found = [linked("digestion", "Digestion"), linked("starch", "Starch")]
    assert [c["title"] for c in coherent(found, QUESTION, Shelf())] == ["Digestion", "Starch"]
