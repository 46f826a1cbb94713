"""What the asked-thing check takes for the answer, and where a role's filler is read: a number the
question states picks the sentence that says it; the clearly closest sentence answers a thing asked
for that is no name; "what kind of N" is answered by the word narrowing N; a role said by its verb
("directed by") names its filler before a sentence merely near the role's word; the role's word said
right before a name names it whatever else the word names; a footnote mark after a sentence's stop
leaves the sentence whole. Invented entries throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.report.grounding import source_sentences
from deepresearch.research.asked import answering
from deepresearch.research.bridges import bridges
from deepresearch.research.sentences import sort_said
from deepresearch.understanding.embedded.forms import fronted
from deepresearch.understanding.embedded.reader import rules_reading
from tests.test_asked import Encyclopedia


def sim():
    return similarity_for(embedder_for("local"))


def text(s):
    return s["snippet"]


ADA = {"name": "Ada Brannock", "query": "Ada Brannock", "title": "Ada Brannock", "phrase": "ada brannock"}
WORKS = {
    "id": 1,
    "key": "a",
    "title": "Ada Brannock",
    "snippet": "Ada Brannock was an Osterland novelist who wrote books about the sea and its harbours. "
    "She is considered one of the founders of modern political economy. "
    "Her works include Salt Lanes (1898), Grey Harbour (1904) and The Tarn (1911). "
    "She was known for her low contralto voice at public readings.",
}
BACKEND = Encyclopedia({"Ada Brannock": "Osterland novelist (1870-1940)", "Osterland": "Country in Europe"})


def _answer(question):
    reading = rules_reading(question, [{**ADA, "origin": "question"}], "en", fronted(question))
    return [x for x, _ in answering(reading, [{**ADA, "origin": "question"}], [WORKS], text, sim(), BACKEND)]


def test_a_number_the_question_states_picks_the_sentence_that_says_it():
    assert _answer("Which 1904 book did Ada Brannock write?") == [
        "Her works include Salt Lanes (1898), Grey Harbour (1904) and The Tarn (1911)."
    ]


def test_the_clearly_closest_sentence_answers_a_thing_that_is_no_name():
    assert _answer("Ada Brannock is considered one of the founders of what?") == [
        "She is considered one of the founders of modern political economy."
    ]


def test_what_kind_of_thing_is_answered_by_the_word_that_narrows_it():
    assert _answer("What kind of voice was Ada Brannock known for?") == [
        "She was known for her low contralto voice at public readings."
    ]
    asked = frozenset({"what", "kind", "of", "voice", "was", "ada", "brannock", "known", "for"})
    question = "What kind of voice was Ada Brannock known for?"
    assert sort_said(question, "Critics praised her contralto voice.", asked)
    assert not sort_said(question, "Critics praised her voice.", asked)  # the noun alone says no kind
    assert not sort_said("Where was Ada Brannock born?", "Critics praised her contralto voice.", asked)


FILM = {"name": "Gull Harbour", "query": "Gull Harbour", "title": "Gull Harbour", "phrase": "gull harbour"}
FILM_TEXT = {
    "id": 1,
    "key": "f",
    "title": "Gull Harbour",
    "snippet": "Gull Harbour is a 1931 Osterland drama film directed and written by Pell Varo. "
    "The film's story follows the life of the shipping magnate Dara Quill, a portrait of the harbour's old masters. "
    "It also stars Ida Roon and Tam Osk.",
}
FILMS = Encyclopedia(
    {
        "Gull Harbour": "1931 film based on the novel by Ada Brannock",
        "Pell Varo": "Osterland film director (1890-1961)",
        "Dara Quill": "Osterland shipping magnate (1850-1920)",
        "Ida Roon": "Osterland actress (1901-1980)",
        "Tam Osk": "Osterland actor (1899-1970)",
        "Blue star": "Star of the northern sky",
        "Red star": "Star of the southern sky",
        "Pale star": "Star seen at dawn",
    }
)


def _filler(question):
    concepts = [{**FILM, "origin": "question"}]
    reading = rules_reading(question, concepts, kinds={"film", "star", "director", "actress", "actor"})
    found = bridges(reading, concepts, [FILM_TEXT], text, sim(), FILMS, by_description=False)
    return [b["title"] for b in found]


def test_a_role_said_by_its_verb_names_its_filler():
    assert _filler("When was the director of Gull Harbour born?") == ["Pell Varo"]


def test_the_roles_word_right_before_a_name_names_the_filler_whatever_else_the_word_names():
    """ "star" is a kind of thing the backend describes (stars of the sky); "It also stars Ida Roon"
    still names the film's star."""
    assert _filler("When was the star of Gull Harbour born?") == ["Ida Roon"]


def test_a_footnote_mark_after_a_sentences_stop_leaves_the_sentence_whole():
    said = (
        "Her works include Salt Lanes (1898) and The Tarn (1911).[a] She died in Osterby in 1940.[12] "
        "Her house by the harbour is kept as a museum."
    )
    assert source_sentences(said) == [
        "Her works include Salt Lanes (1898) and The Tarn (1911).",
        "She died in Osterby in 1940.",
        "Her house by the harbour is kept as a museum.",
    ]


SKY = Encyclopedia(
    {
        **FILMS.entries,
        "Star": "Ball of glowing gas in space",
        "Star cluster": "Group of stars bound together",
        "Orm Festival": "Film festival in Osterby",
        # villages enough that "stars", in a few descriptions only, is a word the texts may link
        **{f"Vell {a}{b}": "Village in Osterland" for a in "abcdefgh" for b in "abcdefghij"},
    }
)


def test_a_role_of_one_named_thing_is_not_looked_for_among_what_every_named_text_names():
    """ "the star of Gull Harbour" is Gull Harbour's: that the film's text and the festival's both say
    "stars", which links to the sky's stars, makes no star of the sky its filler (the one thing each
    text names is for a clause that names several: "the country that shares X with Y")."""
    said = "Gull Harbour is a drama film of 1931. It also stars Ida Roon and Tam Osk, under the stars of Osterby."
    festival = {"name": "Orm Festival", "query": "Orm Festival", "title": "Orm Festival", "phrase": "orm festival"}
    concepts = [{**FILM, "origin": "question"}, {**festival, "origin": "question"}]
    reading = rules_reading("How many prizes did the star of Gull Harbour win at the Orm Festival?", concepts)
    night = {"id": 2, "key": "o", "title": "Orm Festival", "snippet": "The Orm Festival is held under the stars."}
    film = {**FILM_TEXT, "snippet": said}
    found = bridges(reading, concepts, [film, night], text, sim(), SKY, by_description=False)
    assert all(b["title"] not in ("Star", "Star cluster") for b in found)
