"""A role that is a kind of thing ("the capital of X", "the country where Y stands") is filled only by a
thing the backend describes as one, however close in meaning a neighbour of another kind seems; a
relative clause's last words belong to the role they follow; a sentence that says the role of the
subject by name comes before one that says it of another thing. Invented places throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.asked import open_asked
from deepresearch.research.bridges import filler_by_its_own_text, follow_role
from deepresearch.understanding.analysis import Hop
from deepresearch.understanding.embedded.hops import hops_of
from deepresearch.understanding.embedded.reader import rules_reading

ENTRIES = {
    "Varne Light": "Lighthouse in Valdor",
    "Valdor": "Country in the north",
    "Mernia": "Country in the north",
    "Cortha": "Capital city of Valdor",
    "Pell": "Capital of Sarn province, Valdor",
    "Bresk": "Fishing town in Valdor",
}


class Atlas:
    def __init__(self, entries=ENTRIES):
        self.entries = entries

    def titles(self):
        return list(self.entries)

    def link_texts(self):
        return [f"{t} {d}" for t, d in self.entries.items()]

    def description(self, title):
        return self.entries.get(title, "")

    def describe(self, title):
        return self.description(title)


def sim():
    return similarity_for(embedder_for("local"))


VALDOR = {"name": "Valdor", "query": "Valdor", "title": "Valdor", "phrase": "valdor", "origin": "bridge"}
LIGHT = {
    "name": "Varne Light",
    "query": "Varne Light",
    "title": "Varne Light",
    "phrase": "varne light",
    "origin": "question",
}
QUESTION = "Name the capital of the country where the Varne Light stands."


def test_a_relative_clauses_last_words_belong_to_the_role_it_follows():
    hops = hops_of(QUESTION, [LIGHT])
    assert [h.relation for h in hops] == ["capital", "country"]
    assert "stands" in hops[1].phrase.split() and "stands" not in hops[0].phrase.split()


def test_a_kind_of_thing_is_not_filled_by_a_named_thing_of_another_kind():
    capital = Hop("capital", "the capital of the", False)
    text = "Valdor. Valdor is a country in the north. It borders Mernia, and its coast runs past Bresk."
    asked = {"name", "the", "capital", "of", "country", "where", "varne", "light", "stands"}
    assert follow_role(capital, VALDOR, text, asked, sim(), Atlas(), set()) is None
    named = text + " Ships sail from Cortha."
    found = follow_role(capital, VALDOR, named, asked, sim(), Atlas(), set())
    assert found is not None and found["title"] == "Cortha"


def test_the_subjects_own_text_answers_a_kind_of_thing_only_by_naming_one():
    reading = rules_reading(QUESTION, [LIGHT])
    light = {"id": 1, "key": "a", "title": "Varne Light", "snippet": "The Varne Light is a lighthouse in Valdor."}
    country = {"id": 2, "key": "b", "title": "Valdor", "snippet": "Valdor is a country in the north, beside Mernia."}
    concepts = [LIGHT, {**VALDOR, "sentence": light["snippet"], "via": "Varne Light", "source": "a"}]
    text_of = lambda s: s["snippet"]  # noqa: E731
    _, unanswered = open_asked(reading, concepts, [light, country], text_of, sim(), Atlas())
    assert [a.role for a in unanswered] == ["capital"]  # Mernia is a country, no capital
    country = {**country, "snippet": country["snippet"] + " Its seat of government is Cortha."}
    _, unanswered = open_asked(reading, concepts, [light, country], text_of, sim(), Atlas())
    assert unanswered == []


def test_a_sentence_saying_the_role_of_the_subject_by_name_fills_it_first():
    capital = Hop("capital", "the capital of the", False)
    pell = {"key": "p", "title": "Pell", "snippet": "Pell is the capital of Sarn, Valdor."}
    cortha = {
        "key": "c",
        "title": "Cortha",
        "snippet": "Cortha grew from a fishing village of the Bresk clans into a market of wool and salt, "
        "and is now the capital of Valdor.",
    }
    text_of = lambda s: s["snippet"]  # noqa: E731
    found = filler_by_its_own_text(capital, VALDOR, [pell, cortha], text_of, sim(), Atlas(), set())
    assert found is not None and found["title"] == "Cortha"


def test_a_persons_role_right_before_a_thing_that_is_no_person_is_a_role():
    from deepresearch.understanding.embedded.question import relations_of

    question = "When did the person Vellmark Ring is named after die?"
    assert relations_of(question, ["vellmark ring"], own_kinds={"vellmark ring": {"ring"}}) == ["person"]
    # a person's title before a person's name is that person; unknown kinds tell nothing
    titled = "When did the painter Ada Brannock die?"
    assert relations_of(titled, ["ada brannock"], own_kinds={"ada brannock": {"artist"}}) == []
    assert relations_of(question, ["vellmark ring"]) == []
    # a word for a thing before a name is the name's modifier
    modified = "Which river crossed the east Vellmark Empire?"
    assert relations_of(modified, ["vellmark empire"], own_kinds={"vellmark empire": {"empire"}}) == []


def test_a_role_the_backend_knows_as_a_kind_is_filled_only_by_one():
    # "lighthouse" is no role word of the rules, but three entries say they are one: a kind of thing
    entries = {**ENTRIES, "Orm Light": "Lighthouse on Orm Head", "Sarn Light": "Lighthouse in Mernia"}
    town = {"name": "Bresk", "query": "Bresk", "title": "Bresk", "phrase": "bresk", "origin": "question"}
    hop = Hop("lighthouse", "the lighthouse of", False)
    asked = {"which", "lighthouse", "guards", "bresk"}
    text = "Bresk. Bresk is a fishing town in Valdor. Its boats trade with Mernia."
    assert follow_role(hop, town, text, asked, sim(), Atlas(entries), set()) is None  # Mernia is a country
    found = follow_role(hop, town, text + " The Varne Light guards its harbour.", asked, sim(), Atlas(entries), set())
    assert found is not None and found["title"] == "Varne Light"


def test_a_document_that_says_the_role_only_of_another_thing_or_qualified_does_not_fill_it():
    """'Pell (Capital of Sarn province, Valdor)' is Sarn's capital; 'the old capital of Valdor' and
    'the wool capital of Valdor' name other roles than the capital asked: no filler until a text says
    the role plainly of Valdor ('Cortha ... is the capital and chief port of Valdor')."""
    capital = Hop("capital", "the capital of the", False)
    text_of = lambda s: s["snippet"]  # noqa: E731
    others = [
        {"key": "p", "title": "Pell", "snippet": "Pell (Capital of Sarn province, Valdor). Pell trades wool."},
        {"key": "q", "title": "Pell", "snippet": "Pell is the capital and market town of Sarn, a province of Valdor."},
        {"key": "r", "title": "Cortha", "snippet": "Cortha was the old capital of Valdor and is its wool capital."},
    ]
    for other in others:
        assert filler_by_its_own_text(capital, VALDOR, [other], text_of, sim(), Atlas(), set()) is None, other
    plain = {"key": "c", "title": "Cortha", "snippet": "Cortha is the capital and chief port of Valdor."}
    found = filler_by_its_own_text(capital, VALDOR, [*others, plain], text_of, sim(), Atlas(), set())
    assert found is not None and found["title"] == "Cortha" and "chief port" in found["sentence"]


def test_a_role_qualified_by_a_word_of_the_question_or_a_compound_is_the_role_asked():
    from deepresearch.research.roles import qualified_role

    assert qualified_role("Tarn is the summer capital of Valdor.", "capital", {"capital", "valdor"})
    assert not qualified_role("Tarn is the summer capital of Valdor.", "capital", {"summer", "capital"})
    assert not qualified_role("In 1731 he co-founded the Orrin Works.", "founder", {"founder", "orrin"})
    assert not qualified_role("Valdor's capital is Tarn; Pell is its old capital.", "capital", set())


def test_the_subjects_own_text_naming_a_capital_with_another_role_leaves_the_capital_asked():
    reading = rules_reading(QUESTION, [LIGHT])
    light = {"id": 1, "key": "a", "title": "Varne Light", "snippet": "The Varne Light is a lighthouse in Valdor."}
    country = {
        "id": 2,
        "key": "b",
        "title": "Valdor",
        "snippet": "Valdor is a country in the north. Its old capital is Cortha.",
    }
    concepts = [LIGHT, {**VALDOR, "sentence": light["snippet"], "via": "Varne Light", "source": "a"}]
    text_of = lambda s: s["snippet"]  # noqa: E731
    _, unanswered = open_asked(reading, concepts, [light, country], text_of, sim(), Atlas())
    assert [a.role for a in unanswered] == ["capital"]
    country = {**country, "snippet": "Valdor is a country in the north. Its capital is Cortha."}
    _, unanswered = open_asked(reading, concepts, [light, country], text_of, sim(), Atlas())
    assert unanswered == []


def test_a_sentence_close_to_the_question_restates_it_only_when_it_names_the_thing_the_role_is_of():
    """'To the north it is bounded by the Tarn Sea' is close to 'which sea bounds on the north the
    country where the Varne Light stands', but says it of some other thing: the role is still to follow."""
    reading = rules_reading("Which sea bounds on the north the country where the Varne Light stands?", [LIGHT])
    light = {
        "id": 1,
        "key": "a",
        "title": "Varne Light",
        "snippet": "The Varne Light is a tall lighthouse of white stone.",
    }
    text_of = lambda s: s["snippet"]  # noqa: E731
    other = {"id": 2, "key": "b", "title": "Grey Ocean", "snippet": "To the north it is bounded by the Tarn Sea."}
    _, unanswered = open_asked(reading, [LIGHT], [light, other], text_of, sim(), Atlas())
    assert [a.role for a in unanswered] == ["country"]
    said = {**other, "snippet": "The Varne Light stands in a country bounded on the north by the Tarn Sea."}
    _, unanswered = open_asked(reading, [LIGHT], [light, said], text_of, sim(), Atlas())
    assert unanswered == []
    # a sentence that names its own subject may restate the question without naming the lighthouse
    named = {**other, "snippet": "The Tarn Sea bounds Valdor on the north."}
    _, unanswered = open_asked(reading, [LIGHT], [light, named], text_of, sim(), Atlas())
    assert unanswered == []
