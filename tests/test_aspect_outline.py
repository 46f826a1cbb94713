"""A deep outline's material and names, on invented entries: the related articles take in those
closest in meaning to the subject (not only the places its few sentences happen to name), a pool too thin for
aspects takes the less close articles too, material too thin even then gives one section on the
subject (never a section per article), and an aspect's name is a noun phrase as the corpus uses its
words (never a verb such as "refers"). Meaning by the embedded model, as the product reads it."""

from __future__ import annotations

import re

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.aspects import Sentence, name_groups
from deepresearch.research.explore import aspect_outline, explored_outline, related_titles
from deepresearch.research.nouns import word_use
from deepresearch.text.sentences import STOP
from deepresearch.tools.base import SearchResult
from tests.test_aspects import Library


def sim():
    return similarity_for(embedder_for("local"))


def _subject(name: str) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": name.lower(), "origin": "question"}


# an archbishop whose three sentences name the two cities he served in; the article closest to
# what he is (the campaign he led) is one his text does not name
CHURCH = {
    "Orvin Tessaly": "Orvin Tessaly (Archbishop). Orvin Tessaly was an Osterland archbishop and theologian, known "
    "for his campaign against the laws that kept its peoples apart and for human rights. He was bishop of "
    "Harlburg and then archbishop of Kessport. He preached forgiveness between the peoples of Osterland.",
    "Harlburg": "Harlburg (City). Harlburg is the largest city of Osterland and a centre of the gold trade. "
    "The city has a stock exchange, a busy airport and tall office towers. Its population is four million.",
    "Kessport": "Kessport (City). Kessport is a port city on the southern coast of Osterland. "
    "Its harbour ships wine and fruit, and the city is the seat of the parliament.",
    "Separation laws": "Separation laws (Policy). The separation laws of Osterland kept its peoples apart by race "
    "from 1948 until 1991. Churches, activists and preachers campaigned against them and for equal human rights, "
    "and their leaders were honoured for the peaceful end of the system.",
}


class Search(Library):
    """A library whose search finds only the entries that share a word with the query."""

    def search(self, query: str, k: int) -> list[SearchResult]:
        words = set(re.findall(r"\w+", query.lower())) - STOP
        return [r for r in super().search(query, k) if words & set(re.findall(r"\w+", r.text.lower()))]


def test_related_articles_take_in_those_closest_in_meaning_to_the_subject_not_only_the_places_it_names():
    lib = Search(CHURCH)
    q = "Tell me about Orvin Tessaly."
    found = related_titles(q, "Orvin Tessaly", CHURCH["Orvin Tessaly"], lib, set(), sim(), by_meaning=True)
    assert "Separation laws" in found, found
    # the question's own search and what the text names alone: the cities
    named = related_titles(q, "Orvin Tessaly", CHURCH["Orvin Tessaly"], lib, set(), sim())
    assert "Separation laws" not in named, named


# a lake with little to say, one entry close to it and one less close (the fish caught in it)
LAKE = {
    "Vormsee": "Vormsee (Lake). Vormsee is a cold mountain lake in the Kettle range of Osterland. "
    "Its water is clear and deep, and ice covers the lake from November until April. "
    "Fishermen catch trout and char in the lake during the short summer.",
    "Kettle range": "Kettle range (Mountains). The Kettle range is a chain of granite peaks in the north. "
    "Glaciers carved its valleys during the last ice age, leaving steep walls and hanging valleys. "
    "Shepherds drive their flocks to the high pastures of the range in early summer.",
    "Char (fish)": "Char (fish) (Fish). Char are cold-water fish related to trout and salmon. "
    "They spawn over gravel in autumn, and their eggs hatch under the winter ice. "
    "Anglers prize char for their red flesh and their fight on a light line.",
}


def test_a_pool_too_thin_for_aspects_takes_the_less_close_articles_too():
    sections = aspect_outline("What is the history of Vormsee?", _subject("Vormsee"), Library(LAKE), set(), 3, sim())
    assert len(sections) >= 2, sections  # aspects, from the lake's and the less close articles together
    sources = {t for s in sections for t, _pos in s["aspect"]["members"]}
    assert "Char (fish)" in sources, sources
    assert not {s["title"] for s in sections} & set(LAKE)


def test_material_too_thin_for_aspects_gives_one_section_on_the_subject_not_one_per_article():
    two = {t: LAKE[t] for t in ("Vormsee", "Kettle range")}
    lib = Library(two)
    q = "What is the history of Vormsee?"
    assert aspect_outline(q, _subject("Vormsee"), lib, set(), 3, sim()) == []  # one related article: no aspects
    (section,) = explored_outline(q, _subject("Vormsee"), lib, set(), 3, sim())
    assert section["title"] == "Vormsee"  # the question names it
    assert [c["title"] for c in section["concepts"]] == ["Vormsee", "Kettle range"]  # searched, cited where it adds


# a corpus that uses "refers" as a verb and "word" and "names" as nouns
USAGE = [
    "The word refers to a river. It refers to the old ford. Which refers to the crossing.",
    "A name of the valley is old. The names of the towns are older. In the word there is a story.",
    "The term refers to a coin, and the word is Latin. It refers to silver.",
    "The greatest of the towns is on the greater river, and the forest of the valley is old.",
]


def test_word_use_tells_nouns_from_verbs_and_modifiers_by_the_corpus():
    use = word_use(USAGE * 2)
    assert use.head_noun("word") is True and use.head_noun("refers") is False
    assert use.head_noun("unheard") is None  # too rare to say
    # an adjective's "-est" form beside its "-er" form, and a possessive, go before a noun
    assert use.head_noun("greatest") is False and use.head_noun("forest") is not False
    assert use.head_noun("Osterby's") is False
    assert use.noun_phrase(["old", "word"]) and not use.noun_phrase(["word", "refers"])


def test_an_aspects_name_is_a_noun_phrase_not_a_verb():
    sentences = [
        Sentence("The lake's name refers to a hollow in the old Kettle speech.", "Vormsee", 0),
        Sentence("In the valley the name refers to any hollow the ice carved.", "Kettle range", 0),
        Sentence("On Osterland maps the name refers to the lake alone.", "Osterland", 0),
    ]
    args = ([[0, 1, 2]], sentences, "What is the history of Vormsee?", "Vormsee", [])
    assert "refers" in name_groups(*args)[0].name.lower()  # "name refers", in every sentence, leads the words
    named = name_groups(*args, phrase=word_use(USAGE * 2).noun_phrase)[0]
    assert "refers" not in named.name.lower() and named.terms, named.name


# entries whose sentences share "name refers", in a corpus that says "it refers" (a verb)
SPEECH = {
    "Vormsee": "Vormsee (Lake). Vormsee is a cold lake in the Kettle range. Its name refers to a hollow in the old "
    "Kettle speech. Its water is clear and deep, and ice covers it all winter. Fishermen catch char in the lake "
    "during the summer.",
    "Kettle speech": "Kettle speech (Language). Kettle speech is the old language of the Kettle range. Every lake's "
    "name refers to the shape of its hollow in this speech. Its grammar has three genders. Shepherds still speak "
    "it in the high pastures.",
    "Vorm": "Vorm (Word). Vorm is a word of the Kettle speech. It refers to a hollow, and in place names it refers "
    "to a lake. Its plural is vormen, and it is an old word.",
    "Char (fish)": LAKE["Char (fish)"] + " The fish's name refers to its red belly in the Kettle speech.",
    "Kettle range": LAKE["Kettle range"] + " The range's name refers to the round hollows of its valleys.",
}


def test_the_outlines_aspects_are_named_by_noun_phrases_as_the_backends_documents_use_the_words():
    sections = aspect_outline("What is the history of Vormsee?", _subject("Vormsee"), Library(SPEECH), set(), 5, sim())
    assert len(sections) >= 3
    assert not any("refers" in s["title"].lower() for s in sections), [s["title"] for s in sections]
