"""A role said with a clause ("the chemist who isolated X") is filled by a retrieved person whose own
text names X and says the clause in other words, without the role's noun; a lone capital letter in the
subject's text ("vellmarine K") is a mark, never a link to a person whose initials hold it. Invented
entries throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.bridges import bridges
from deepresearch.research.persons import linked_title
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.linking import linker_for
from tests.test_asked import Encyclopedia

ENTRIES = {
    "Vellmarine": "Salt of the northern seas",
    "Pell Varo": "Osterland physician and chemist (1881-1955)",
    "Ida Roon": "Osterland poet (1861-1930)",
    "K. L. Strand": "Osterland mathematician (1877-1947)",
}
QUESTION = "When did the chemist who isolated vellmarine die?"
SALT = {
    "name": "Vellmarine",
    "query": "Vellmarine",
    "title": "Vellmarine",
    "phrase": "vellmarine",
    "origin": "question",
}
OWN = {
    "key": "a",
    "title": "Vellmarine",
    "snippet": "Vellmarine is a pale salt taken from the northern seas. Two purified forms are sold: vellmarine K "
    "and vellmarine L. It keeps fish from spoiling.",
}
POEM = {
    "key": "b",
    "title": "Ida Roon",
    "snippet": "Ida Roon was a poet. Her best-known poem praises the vellmarine lamps of the harbour.",
}
ISOLATED = {
    "key": "c",
    "title": "Pell Varo",
    "snippet": "Pell Varo was a physician. He shared the Orm Prize in 1931 for the isolation of pure vellmarine "
    "from sea water.",
}


def _text(s):
    return s["snippet"]


def _bridges(evidence):
    backend = Encyclopedia(ENTRIES)
    reading = rules_reading(QUESTION, [SALT])
    return bridges(
        reading, [SALT], evidence, _text, similarity_for(embedder_for("local")), backend, by_description=False
    )


def test_a_person_whose_own_text_says_the_roles_clause_fills_the_role():
    assert _bridges([OWN, POEM]) == []  # a poem about vellmarine lamps says nothing of who isolated it
    found = _bridges([OWN, POEM, ISOLATED])
    assert [b["title"] for b in found] == ["Pell Varo"] and found[0]["via"] == "Vellmarine"
    assert "isolation" in found[0]["sentence"]


def test_a_lone_letter_links_to_no_title_that_merely_holds_it():
    linker = linker_for(Encyclopedia(ENTRIES))
    assert linked_title("K", ["k"], linker) == (None, False)
    assert all(b["title"] != "K. L. Strand" for b in _bridges([OWN]))


WIFE = "Who was the wife of the chemist who isolated vellmarine?"
VARO = {
    "name": "Pell Varo",
    "query": "Pell Varo",
    "title": "Pell Varo",
    "phrase": "pell varo",
    "origin": "bridge",
    "via": "Vellmarine",
    "sentence": ISOLATED["snippet"],
}


def _open(own_text: str) -> list:
    from deepresearch.research.asked import open_asked

    backend = Encyclopedia(
        {**ENTRIES, **{f"Weather note {i}": f"Note {i} on Osterland weather and Osterland tides" for i in range(3)}}
    )
    reading = rules_reading(WIFE, [SALT])
    varo = {"key": "c", "title": "Pell Varo", "snippet": own_text}
    sim = similarity_for(embedder_for("local"))
    _, unanswered = open_asked(reading, [SALT, VARO], [OWN, varo], _text, sim, backend)
    return unanswered


def test_what_is_asked_of_a_filler_found_on_the_way_is_not_the_way_there():
    """The filler's text says how it was reached (the isolation), under a longer name and with a
    people's word: none of it names a wife. A sentence that does answers."""
    said = (
        "Sir Pell Varo was an Osterland physician and chemist. He won the Orm Prize for the isolation of "
        "pure vellmarine from sea water."
    )
    assert [a.role for a in _open(said)] == ["wife"]
    assert _open(f"{said} In 1915 he married the nurse Mara Lind.") == []


def test_a_peoples_word_and_the_subjects_longer_name_name_no_other_person():
    from deepresearch.research.persons import names_a_person

    bulk = {f"Entry {i}": f"Note number {i} on tides" for i in range(800)}  # "Osterland" in few of them
    backend = Encyclopedia(
        {
            **ENTRIES,
            **bulk,
            **{f"Weather note {i}": f"Note {i} on Osterland weather and Osterland tides" for i in range(3)},
        }
    )
    skip = {"wife", "pell", "varo"}
    assert not names_a_person("He was an Osterland physician.", skip, backend, "Pell Varo")
    assert not names_a_person("Sir Pell Varo was a physician.", skip, backend, "Pell Varo")
    assert names_a_person("He married the nurse Mara Lind.", skip, backend, "Pell Varo")
