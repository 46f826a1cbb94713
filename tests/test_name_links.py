"""Linking a question's words to titles: a title's own qualifier ("Brannock (harpist)") is no other
name of its document, a word of one name links to a longer title only where it opens or ends it
("Vellmark" of "Orin Vellmark", not "Age" of "20th-age glasswork"), and a role word capitalized inside
the question is part of a name ("the Founder of the Year prize"), no role. Invented entries."""

import re

from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.question import relations_of
from tools.base import SearchResult

ENTRIES = {
    "Brannock (harpist)": "Valdorian harpist",
    "Orin Vellmark": "Valdorian glassmaker",
    "20th-age glasswork": "Art movement of Valdor",
    "Cortha": "Capital city of Valdor",
    "Eastern lands": "Region of Valdor",
    "Tarn pickle": "Food of Valdor",
    "Ida of Sarnia": "Queen of Sarnia (1501–1550)",
    "Kingdom of Sarnia": "Kingdom in the north from 1035 to 1707",
    "Sea squall": "Storm over water",
}
TEXTS = {
    "Brannock (harpist)": "Brannock (harpist) (Valdorian harpist). Ada Brannock is a harpist of Cortha.",
    "Orin Vellmark": "Orin Vellmark (Valdorian glassmaker). Orin Vellmark made glass in Cortha.",
    "20th-age glasswork": "20th-age glasswork (Art movement of Valdor). It was glass made in the new age.",
    "Cortha": "Cortha (Capital city of Valdor). Cortha is the capital of Valdor.",
    "Eastern lands": "Eastern lands (Region of Valdor). The Eastern lands, also called the East, lie past the hills.",
    "Tarn pickle": "Tarn pickle (Food of Valdor). A tarn pickle, or a brinelet, is a pickle made in Cortha.",
    "Ida of Sarnia": "Ida of Sarnia (Queen of Sarnia (1501–1550)). Ida of Sarnia was queen of Sarnia.",
    "Kingdom of Sarnia": "Kingdom of Sarnia (Kingdom in the north). The Kingdom of Sarnia was a realm by the sea.",
    "Sea squall": "Sea squall (Storm over water). A sea squall is a storm over water. A tarnwind is a strong sea "
    "squall that blows over Valdor.",
}
for i in range(40):
    ENTRIES[f"Entry {i}"] = f"Note number {i} on weather"
    TEXTS[f"Entry {i}"] = f"Note number {i} on weather and tides in Valdor."


class Encyclopedia:
    def titles(self):
        return list(ENTRIES)

    def link_texts(self):
        return [TEXTS[t] for t in ENTRIES]

    def description(self, title):
        return ENTRIES.get(title, "")

    def describe(self, title):
        return self.description(title)

    def search(self, query, k=5):
        words = set(re.findall(r"\w+", query.lower()))
        hits = [t for t in ENTRIES if words & set(re.findall(r"\w+", TEXTS[t].lower()))]
        return [SearchResult(t, f"https://example.org/{i}", TEXTS[t], "test") for i, t in enumerate(hits[:k])]


def names(question: str) -> list[str]:
    return [c.get("title") or c["name"] for c in extract(question, Encyclopedia())]


def test_a_titles_own_qualifier_is_no_other_name():
    assert "Brannock (harpist)" not in names("When was the harpist who played in Cortha born?")


def test_one_word_links_to_a_longer_title_only_where_it_opens_or_ends_it():
    assert "Orin Vellmark" in names("When did Vellmark first make glass?")
    assert "20th-age glasswork" not in names("Who won the Glass of the Age medal in Cortha?")


def test_a_role_word_capitalized_inside_the_question_is_part_of_a_name():
    assert relations_of("Who was the harpist who won the Founder of the Year prize with Cortha?", ["cortha"]) == [
        "harpist"
    ]
    assert "harpist" in relations_of("Who was the harpist of Cortha?", ["cortha"])


def test_a_word_a_cased_question_writes_in_lower_case_is_no_name_a_document_capitalizes():
    # "the East" is the Eastern lands' other name, written as a name; "to the east" is a direction
    from deepresearch.understanding.embedded.concepts import key_phrases

    def linked(question: str) -> list[str]:
        return [c.get("title") or c["name"] for c in key_phrases(question, Encyclopedia())]

    assert "Eastern lands" not in linked("Which town lies to the east of Cortha?")
    assert "Eastern lands" in linked("Which town lies in the East beside Cortha?")
    # a common noun the document writes in lower case is still its other name
    assert "Tarn pickle" in linked("Where is a brinelet made in Cortha?")


def test_a_name_after_of_in_a_persons_title_is_a_place_not_a_surname():
    # "Sarnia" ends "Ida of Sarnia" as her realm, not as her surname
    from deepresearch.understanding.embedded.concepts import key_phrases

    found = key_phrases("Which river runs through the capital of Sarnia?", Encyclopedia())
    assert "Ida of Sarnia" not in [c.get("title") for c in found]


def test_a_word_the_opening_of_a_document_defines_as_a_kind_of_it_links_to_it():
    assert "Sea squall" in names("How does a tarnwind start over Cortha?")
