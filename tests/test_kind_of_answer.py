""" "Which river ...": a sentence answers only by naming a river. A name no document has is judged by
its own words when they say a kind ("the Grey City" is a city, "the Lune Valley" close to a river), a
word most documents use is no name ("Valdorian"), and a sentence naming a thing of the kind asked
comes before one naming a thing whose kind nothing tells. Invented places throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.answer import answer_paragraph
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
    "Hesper": "Continent",
    "Orm": "Continent",
    "Lanth": "Continent",
    "Tarn Sea": "Marginal sea of the Grey Ocean",
    "Mira Sea": "Sea in the east",
    "Vell Sea": "Inland sea of Lanth",
    "Orvel": "Longest river of Hesper",
    "Tellin": "Market town and commune in Valdor",
    "Valdorian Merchant Union": "Trade league of Valdorian towns",
}
for i in range(60):  # an encyclopedia's bulk: most entries say nothing of Valdor
    ENTRIES[f"Entry {i}"] = f"Note number {i} on weather, tides and the water of the plain"


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
    valley = "Brannock stands along the Lune Valley."
    unanswered, said = check("Brannock is a city on the western plain.", near, valley)
    assert unanswered == [] and said == [valley]


ORVEL = {"name": "Orvel", "query": "Orvel", "title": "Orvel", "phrase": "orvel", "origin": "question"}


def ask(question: str, subject: dict, *sources: dict):
    reading = rules_reading(question, [subject])
    evidence = [{"id": i, "key": f"k{i}", **x} for i, x in enumerate(sources, 1)]
    _, unanswered = open_asked(reading, [subject], evidence, text_of, sim(), Atlas())
    return unanswered, [x for x, _ in answering(reading, [subject], evidence, text_of, sim(), Atlas())]


def test_a_thing_described_as_another_kind_is_not_of_the_kind_asked():
    own = "Orvel (Longest river of Hesper). The Orvel is the longest river of Hesper."
    unanswered, said = ask("Which sea does the Orvel flow into?", ORVEL, {"title": "Orvel", "snippet": own})
    assert len(unanswered) == 1 and said == []  # Hesper is a continent
    into = own + " Its waters reach the Tarn Sea past the delta."
    unanswered, said = ask("Which sea does the Orvel flow into?", ORVEL, {"title": "Orvel", "snippet": into})
    assert unanswered == [] and said == ["Its waters reach the Tarn Sea past the delta."]


def test_another_sources_sentence_about_its_own_subject_does_not_answer():
    own = {"title": "Brannock", "snippet": "Brannock (Valdorian city on the western plain). Brannock is a city."}
    town = "Tellin (Market town and commune in Valdor). Tellin is a town in Valdor."
    near = " The town lies on the Orvel River, 40 km from Brannock."
    unanswered, said = ask(QUESTION, BRANNOCK, own, {"title": "Tellin", "snippet": town + near})
    assert len(unanswered) == 1 and said == []
    evidence = [{"id": 1, "key": "a", **own}, {"id": 2, "key": "b", "title": "Tellin", "snippet": town + near}]
    paragraph, _ = answer_paragraph(rules_reading(QUESTION, [BRANNOCK]), [BRANNOCK], evidence, text_of, sim())
    assert "Orvel River" not in paragraph  # nor does the answer paragraph quote it
    told = " Brannock stands on the Sarn River, a day's walk away."
    unanswered, said = ask(QUESTION, BRANNOCK, own, {"title": "Tellin", "snippet": town + near + told})
    assert unanswered == [] and said == [told.strip()]


def test_a_word_the_documents_write_as_a_common_noun_says_the_names_kind():
    # "water" is no kind of entry here, but the documents write it in lower case: "the Lune Water" is a
    # water, close to a river, and answers before the closer sentence whose name tells nothing
    near = "The river that flows past Brannock was bridged by Hollis Tamber."
    water = "Brannock stands along the Lune Water."
    unanswered, said = check("Brannock is a city on the western plain.", near, water)
    assert unanswered == [] and said == [water]


def test_another_sources_sentence_opening_on_its_own_person_does_not_answer():
    own = {"title": "Brannock", "snippet": "Brannock (Valdorian city on the western plain). Brannock is a city."}
    miller = "Hob Tarrow (Valdorian miller). Hob Tarrow was a miller of Valdor."
    he = " He built a mill on the Orvel River, a day's ride from Brannock."
    unanswered, said = ask(QUESTION, BRANNOCK, own, {"title": "Hob Tarrow", "snippet": miller + he})
    assert len(unanswered) == 1 and said == []


def test_capitals_in_brackets_after_a_name_shorten_it_and_name_nothing_of_their_own():
    # "(VMU)" is the Valdorian Merchant Union's short name, whose document says it is no river
    unanswered, said = check(
        "Brannock is a city on the western plain.",
        "Brannock is the seat of the Valdorian Merchant Union (VMU) beside the water.",
    )
    assert len(unanswered) == 1 and said == []
