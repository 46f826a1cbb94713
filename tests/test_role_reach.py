"""How a role reaches its filler (deepresearch.research.bridges, .asked): it starts from the thing the
question names right after the role word, not from another thing the question names; a relative
clause's verb says the role when the question goes on after it; a role the question narrows ("the
glass workshop") fits a document whose description says it in other words, by meaning, and the
narrowing words are not asked of the filler. Invented entries throughout."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.asked import asked_things, open_asked
from deepresearch.research.bridges import bridges
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.linking import kinds_for
from tests.test_asked import Encyclopedia

BACKEND = Encyclopedia(
    {
        "Orrin Chalice": "Goblet kept in Vellmark",
        "Ledger": "Book of accounts",
        "Pell Varo": "Venetian glassblower (1701-1760)",
        "Ida Roon": "Bohemian glassblower (1710-1770)",
        "Orm Hask": "Glassblower from Ulm (1700-1750)",
        "Vell Glassworks": "Osterland glassmaking company",
        "Tarn Workshop": "Pottery workshop in Brel",
        "Kess Workshop": "Carpentry workshop in Kess",
        "Brel Looms": "Weaving workshop in Brel",
    }
)
KINDS = kinds_for(BACKEND)


def concept(name: str, phrase: str | None = None) -> dict:
    return {"name": name, "query": name, "title": name, "phrase": phrase or name.lower(), "origin": "question"}


def test_a_role_starts_from_the_thing_named_right_after_it():
    ledger, chalice = concept("Ledger", "ledgers"), concept("Orrin Chalice")
    reading = rules_reading(
        "How many ledgers did the glassblower of the Orrin Chalice keep?", [ledger, chalice], kinds=KINDS
    )
    assert [h.relation for h in reading.hops] == ["glassblower"]
    (asked,) = asked_things(reading, [ledger, chalice])
    assert asked.role == "glassblower" and asked.via == "Orrin Chalice"


def test_a_narrowed_role_with_its_clauses_verb_reaches_a_filler_described_in_other_words():
    varo = concept("Pell Varo")
    question = "Where is the glass workshop that Pell Varo co-founded based?"
    reading = rules_reading(question, [varo], kinds=KINDS)
    (hop,) = reading.hops
    assert hop.relation == "workshop" and "founded" in hop.phrase and "based" not in hop.phrase
    (asked,) = asked_things(reading, [varo])
    assert asked.words == "based"  # "glass" narrows the role: it is not asked of the workshop
    own = {
        "id": 1,
        "key": "a",
        "title": "Pell Varo",
        "snippet": "Pell Varo was a glassblower. With two brothers he co-founded Vell Glassworks in 1731, "
        "and he later taught at Brel Looms.",
    }
    sim = similarity_for(embedder_for("local"))
    found = bridges(reading, [varo], [own], lambda s: s["snippet"], sim, BACKEND, by_description=False)
    assert [b["title"] for b in found] == ["Vell Glassworks"]  # a glassmaking company, not a weaving workshop


def test_a_two_role_question_asking_the_outer_role_is_answered_by_its_fillers_own_text():
    """'What is the harbour of the country where the ballads were sung?': once the country is found,
    its harbour is all that is asked (the words reaching the country are not), and the country's own
    text saying "Its harbour ..." answers it."""
    backend = Encyclopedia(
        {
            "Ballad": "Form of verse",
            "Osterland": "Country in Europe",
            "Tarnia": "Country in Asia",
            "Brelia": "Country in Africa",
            "Vell Quay": "Harbour of Tarnia",
            "Kess Quay": "Harbour of Brelia",
            "Orm Quay": "Harbour in the north",
        }
    )
    kinds = kinds_for(backend)
    ballad = concept("Ballad", "ballads")
    question = "What is the harbour of the country where the ballads were mostly sung?"
    reading = rules_reading(question, [ballad], kinds=kinds)
    assert [h.relation for h in reading.hops] == ["harbour", "country"]
    land = {**concept("Osterland"), "origin": "bridge", "via": "Ballad", "hops": 1}
    (asked,) = asked_things(reading, [ballad, land])
    assert asked.role == "harbour" and asked.via == "Osterland" and asked.words == ""
    said = {"id": 1, "key": "a", "title": "Ballad", "snippet": "Ballads were mostly sung in Osterland."}
    own = {
        "id": 2,
        "key": "b",
        "title": "Osterland",
        "snippet": "Osterland is a country in Europe. Its harbour and largest town is Nessby, home to a third of its people.",
    }
    sim = similarity_for(embedder_for("local"))
    _, unanswered = open_asked(reading, [ballad, land], [said], lambda s: s["snippet"], sim, backend)
    assert [a.role for a in unanswered] == ["harbour"]
    _, unanswered = open_asked(reading, [ballad, land], [said, own], lambda s: s["snippet"], sim, backend)
    assert unanswered == []


def test_the_word_of_a_role_is_no_subject_and_a_preposition_may_open_the_question():
    """'Into which sea does the river that flows through Velm drain?' asks for a sea (a short answer,
    not an overview), and reaches it through the river Velm's text names: the river is no subject,
    though the backend has an article on rivers."""
    from deepresearch.understanding.embedded.question import answer_kind
    from deepresearch.understanding.embedded.reader import EmbeddedReader

    assert answer_kind("Into which bay does the Tarn drain?") == ("thing", "bay")
    assert answer_kind("Through which town does the Tarn flow?") == ("place", "town")
    backend = Encyclopedia(
        {
            "River": "Natural flowing watercourse",
            "Sea": "Large body of salt water",
            "Velm": "City in Osterland",
            "Tarn": "River in Osterland",
            "Orla": "River in Brel",
            "Sava": "River in Tarnia",
        }
    )
    reading, _ = EmbeddedReader(backend).read("Into which sea does the river that flows through Velm drain?", "")
    assert [c.name for c in reading.subjects] == ["Velm"]
    assert [h.relation for h in reading.hops] == ["river"] and not reading.broad
    assert [p.kind for p in reading.parts] == ["thing"]
