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
