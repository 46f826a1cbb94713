""" "Which river ...": a sentence answers only by naming a river. A name no document has is judged by
its own words when they say a kind ("the Grey City" is a city, "the Lune Valley" close to a river), a
word most documents use is no name ("Valdorian"), and a sentence naming a thing of the kind asked
comes before one naming a thing whose kind nothing tells. Invented places throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.asked import answering, open_asked
from deepresearch.understanding.embedded.reader import rules_reading

ENTRIES = {
    "Brannock": "Valdorian city on the western plain",
    "Cortha": "Valdorian city in the hills",
    "Pell": "Valdorian city by the sea",
    "Orvel River": "River in the north of Valdor",
    "Sarn River": "River in the south of Valdor",
    "Kesh River": "River of the eastern marches",
    "Mirren Valley": "Valley in the north of Valdor",
    "Tolle Valley": "Valdorian valley of orchards",
    "Askel Valley": "Valley of the eastern marches",
}
for i in range(60):  # an encyclopedia's bulk: most entries say nothing of Valdor
    ENTRIES[f"Entry {i}"] = f"Note number {i} on weather and tides"


class Atlas:
    def titles(self):
        return list(ENTRIES)

    def link_texts(self):
        return [f"{t} {d}" for t, d in ENTRIES.items()]

    def description(self, title):
        return ENTRIES.get(title, "")

    def describe(self, title):
        return self.description(title)


def sim():
    return similarity_for(embedder_for("local"))


BRANNOCK = {"name": "Brannock", "query": "Brannock", "title": "Brannock", "phrase": "brannock", "origin": "question"}
QUESTION = "Which river flows past Brannock?"
text_of = lambda s: s["snippet"]  # noqa: E731


def source(*sentences: str) -> dict:
    return {"id": 1, "key": "a", "title": "Brannock", "snippet": " ".join(sentences)}


def check(*sentences: str):
    reading = rules_reading(QUESTION, [BRANNOCK])
    assert reading.focus.noun == "river"
    evidence = [source(*sentences)]
    _, unanswered = open_asked(reading, [BRANNOCK], evidence, text_of, sim(), Atlas())
    said = answering(reading, [BRANNOCK], evidence, text_of, sim(), Atlas())
    return unanswered, [s for s, _ in said]


def test_a_name_whose_own_words_say_another_kind_does_not_answer():
    unanswered, said = check(
        "Brannock is a city on the western plain.",
        "The water flowing past Brannock is known to poets as the Grey City.",
    )
    assert len(unanswered) == 1 and said == []


def test_a_word_most_documents_use_is_no_name():
    unanswered, said = check("Brannock is a city on the western plain.", "Brannock is the oldest Valdorian town.")
    assert len(unanswered) == 1 and said == []


def test_a_name_whose_words_are_close_to_the_kind_answers_before_one_nothing_tells():
    near = "The river that flows past Brannock was bridged by Hollis Tamber."
    valley = "Brannock stands on the banks of the Lune Valley."
    unanswered, said = check("Brannock is a city on the western plain.", near, valley)
    assert unanswered == [] and said == [valley]
