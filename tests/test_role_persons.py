"""'Who carved X?' is answered by a sentence that names a person, not by one that names only a
dynasty or a place the backend's documents describe as no person (deepresearch.research.persons);
what stays open is said in the question's own grammar. Invented entries throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.asked import open_asked
from deepresearch.research.compose import unanswered_said
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_asked import Encyclopedia

CHALICE = {
    "name": "Orrin Chalice",
    "query": "Orrin Chalice",
    "title": "Orrin Chalice",
    "phrase": "orrin chalice",
    "origin": "question",
}
BACKEND = Encyclopedia(
    {
        "Orrin Chalice": "Goblet kept in Vellmark",
        "Tarvo dynasty": "Ruling house of Osterland",
        "Tarvo Quay": "Harbour in Osterland",
        "Tarvo Ensi": "King of Osterland (702-660 BC)",  # "Tarvo" alone may be him: "the Tarvo dynasty" is not
        "Pell Varo": "Venetian glassblower (1701-1760)",
        # enough other documents that a name in three of them is no word most documents use
        **{f"Hamlet {n}": "Village in the hills" for n in range(400)},
    }
)


def text(source):
    return source["snippet"]


def test_a_sentence_naming_only_a_dynasty_does_not_say_who_made_a_thing():
    reading = rules_reading("Who carved the Orrin Chalice?", [CHALICE])
    sim = similarity_for(embedder_for("local"))
    own = {
        "id": 1,
        "key": "a",
        "title": "Orrin Chalice",
        "snippet": "The Orrin Chalice is a goblet of green glass. It was carved under the Tarvo dynasty, near Tarvo Quay.",
    }
    _, unanswered = open_asked(reading, [CHALICE], [own], text, sim, BACKEND)
    assert [a.role for a in unanswered] == ["carved"]
    maker = {**own, "snippet": own["snippet"] + " Pell Varo carved the Orrin Chalice for a wedding."}
    _, unanswered = open_asked(reading, [CHALICE], [maker], text, sim, BACKEND)
    assert unanswered == []


def test_what_stays_open_is_said_with_the_questions_verb_or_noun():
    verb = {"text": "Who carved the Orrin Chalice?", "role": "carved", "via": "Orrin Chalice"}
    assert unanswered_said(verb).endswith("(no source says who carved Orrin Chalice)")
    noun = {"text": "When did the carver of the Orrin Chalice die?", "role": "carver", "via": "Orrin Chalice"}
    assert unanswered_said(noun).endswith("(no source names the carver of Orrin Chalice)")
