"""Forms of a question the rules read as what they ask: a role said with a possessive ("X's
director"), a clause without its relative word ("the country X is in"), a question word at the end
with no noun after it ("... one of the founders of what?"), a phrase before the question proper
("Apart from X, which ..."); and a description whose head noun stands before a participle ("film
based on ..."). Invented names throughout."""

from deepresearch.understanding.embedded.forms import fronted
from deepresearch.understanding.embedded.hops import hops_of
from deepresearch.understanding.embedded.question import answer_kind, relations_of
from deepresearch.understanding.linking import head_nouns

HARBOUR = {"name": "Gull Harbour", "title": "Gull Harbour", "phrase": "Gull Harbour", "origin": "question"}


def test_a_role_said_with_the_named_things_possessive_is_a_role():
    assert relations_of("When was Gull Harbour's director born?", ["Gull Harbour"]) == ["director"]
    assert relations_of("When was the director of Gull Harbour born?", ["Gull Harbour"]) == ["director"]
    # one word narrowing the role is said with it; what follows is asked of the role's filler
    hops = hops_of("Gull Harbour's home city lies on which coast?", [HARBOUR], kinds={"city", "coast"})
    assert [(h.relation, h.phrase) for h in hops] == [("city", "home city")]
    # a possessive before a word that is no role reaches nothing
    assert relations_of("When did Gull Harbour's fame begin?", ["Gull Harbour"]) == []


def test_a_clause_without_its_relative_word_is_a_role():
    asked = "Apart from the country Tern Vale is in, which country borders the sea?"
    assert "country" in relations_of(asked, ["Tern Vale"])
    assert relations_of("When was the city Ada Brannock was born in founded?", ["Ada Brannock"]) == ["city"]
    # a person's title before the person's name, and a clause that goes on past its preposition
    assert relations_of("Where was the painter Ada Brannock born?", ["Ada Brannock"]) == []
    assert relations_of("Is the city Ada Brannock was born in Osterby?", ["Ada Brannock"]) == []


def test_a_question_word_at_the_end_with_no_noun_after_it_is_read_first():
    asked = "The author of Gull Harbour is considered one of the founders of what?"
    assert fronted(asked) == "Of what is the author of Gull Harbour considered one of the founders?"
    assert answer_kind(fronted(asked))[0] == "thing"
    # the verb of a relative clause is not the question's ("a guild that was followed by what?")
    kept = "The hall housed the masters of a guild that was followed by what?"
    assert fronted(kept) == kept


def test_a_phrase_before_the_question_proper_goes_after_it():
    assert fronted("Besides weaving, what trade did Ada Brannock learn?") == (
        "What trade did Ada Brannock learn besides weaving?"
    )
    assert answer_kind(fronted("Besides weaving, what trade did Ada Brannock learn?"))[0] == "thing"
    # a choice offered after the question and a name before a question stay as they are
    assert fronted("Which is older, Gull Harbour or Tern Vale?") == "Which is older, Gull Harbour or Tern Vale?"
    assert fronted("Ada Brannock, what did she found?") == "Ada Brannock, what did she found?"


def test_a_descriptions_kind_is_the_noun_before_its_participle():
    assert head_nouns("1931 film based on the novel by Ada Brannock") == {"film"}
    assert head_nouns("Island named after a saint") == {"island"}
    assert head_nouns("Stone bridge in Osterby") == {"bridge"}


def test_a_possessive_role_starts_from_the_thing_whose_role_it_is():
    from deepresearch.research.bridges import nearest_the_role
    from deepresearch.understanding.analysis import Hop

    vale = {"name": "Tern Vale", "title": "Tern Vale", "phrase": "Tern Vale", "origin": "question"}
    asked = "Did Gull Harbour's director ever film the director of Tern Vale?"
    order = nearest_the_role(Hop("director", "director", True), [vale, HARBOUR], asked)
    assert [c["name"] for c in order] == ["Gull Harbour", "Tern Vale"]


def test_a_role_said_of_the_named_thing_with_a_verb_and_its_preposition_is_a_role():
    asked = "Gull Harbour Mills is headquartered in a city known for which bridge?"
    assert relations_of(asked, ["Gull Harbour Mills"]) == ["city"]
    mills = {**HARBOUR, "name": "Gull Harbour Mills", "title": "Gull Harbour Mills", "phrase": "Gull Harbour Mills"}
    hops = hops_of(asked, [mills], kinds={"city", "bridge"})
    assert [(h.relation, h.phrase) for h in hops] == [("city", "headquartered in city")]
    # one word may narrow the role ("a weaving company"); a copula and a bare preposition say no role
    assert relations_of("Ada Brannock is part of a weaving company that has its office where?", ["Ada Brannock"]) == [
        "company"
    ]
    # a participle with its object, and a role several words past the verb
    assert relations_of("Gull Harbour is a film starring an actor born where?", ["Gull Harbour"]) == ["actor"]
    assert relations_of("Gull Harbour is a 1931 drama film directed by a man born where?", ["Gull Harbour"]) == ["man"]
    assert relations_of("Is Gull Harbour a city?", ["Gull Harbour"]) == []
    assert relations_of("Is the hall of Gull Harbour in a city?", ["Gull Harbour"]) == []


def test_a_statement_ending_in_its_question_word_asks_for_a_thing_or_a_person():
    assert answer_kind("Gull Harbour lies in a country whose federal city is what?")[0] == "thing"
    assert answer_kind("The Gull Harbour mill was sold to whom?")[0] == "person"
    assert answer_kind("gull harbour author born where")[0] == "place"
    assert answer_kind("gull harbour mill founded when")[0] == "year"
    assert answer_kind("Is Gull Harbour what?")[0] == "other"  # a yes-or-no opening asks no thing


def test_a_question_word_inside_a_clause_says_what_is_asked():
    assert answer_kind("Gull Harbour was painted by an artist who held which noble title?")[0] == "thing"
    assert answer_kind("Tern Vale lies in a country with a population of around how many people?")[0] == "number"
    assert answer_kind("The mill was built by a man who was born in which city?")[0] == "place"
    assert answer_kind("Is Gull Harbour the mill which Ada Brannock built?")[0] == "other"  # yes or no


class _Rivers:
    """Two rivers, found in this order, and a town named in many texts (a name to the linker)."""

    DOCS = {
        "Tarn": ("River in Delland", "The Tarn is a river of Delland. Old mills stand beside the river Tarn."),
        "Ost": ("River in Delland", "The Ost is a river of Delland. Pellam stands beside the Ost."),
        "Pellam": ("Town in Delland", "Pellam is a port town of Delland. Pellam has a fish market."),
        **{
            f"Vell {a}{b}": ("Village in Delland", f"Vell {a}{b} is a village near Pellam.")
            for a in "abcdef"
            for b in "abcdef"
        },
    }

    def search(self, query, k):
        from deepresearch.tools.base import SearchResult

        return [
            SearchResult(title=t, url=f"https://example.org/{t}", backend="t", text=x)
            for t, (_, x) in self.DOCS.items()
        ][:k]

    def description(self, title):
        return self.DOCS[title][0]

    def titles(self):
        return list(self.DOCS)

    def link_texts(self):
        return [f"{t} {d} {x}" for t, (d, x) in self.DOCS.items()]


def test_a_thing_described_must_stand_beside_the_name_that_opens_the_question():
    """ "Pellam stands beside which river?": its one-word name opens the question; the river is the
    one whose sentence names Pellam, not the first river that anything stands beside."""
    from deepresearch.understanding.embedded.subjects import refine

    pellam = {"name": "Pellam", "query": "Pellam", "title": "Pellam", "phrase": "pellam", "origin": "question"}
    found = refine("Pellam stands beside which river?", [{**pellam, "at": [0, 1]}], _Rivers())
    assert [(c["name"], c["origin"]) for c in found] == [("Pellam", "question"), ("Ost", "described")]


def test_a_persons_role_typed_right_after_a_name_is_a_role_unless_the_name_is_a_persons():
    assert relations_of("gull harbour director born what year", ["gull harbour"]) == ["director"]
    film = {"gull harbour": {"film"}}
    assert relations_of("gull harbour director born what year", ["gull harbour"], own_kinds=film) == ["director"]
    # what a person is, typed after the person's name; a thing's kind after its name ("the Tarn river")
    painter = {"ada brannock": {"painter"}}
    assert relations_of("ada brannock painter born what year", ["ada brannock"], own_kinds=painter) == []
    assert relations_of("ada brannock's teacher born what year", ["ada brannock"], own_kinds=painter) == ["teacher"]
    assert relations_of("where does the tarn river rise", ["tarn"]) == []


def test_a_question_typed_as_its_noun_phrase_asks_what_that_is():
    assert fronted("harbour master of osterby") == "What is the harbour master of osterby?"
    assert fronted("the birthplace of the author of gull harbour") == (
        "What is the birthplace of the author of gull harbour?"
    )
    assert answer_kind(fronted("height of the vellmark tower"))[0] == "number"
    # a topic ("history of osterland") stays one; a statement with its verb is read as before
    assert fronted("history of osterland") == "history of osterland"
    assert fronted("list of osterland towns") == "list of osterland towns"
    assert fronted("The author of Gull Harbour was born in which city?") == (
        "In which city was the author of Gull Harbour born?"
    )


def test_a_typed_phrase_that_is_a_things_own_name_stays_a_topic():
    named = {"salt of the marshes"}
    is_title = lambda phrase: phrase.lower() in named  # noqa: E731
    assert fronted("salt of the marshes", is_title) == "salt of the marshes"
    assert fronted("harbour master of osterby", is_title) == "What is the harbour master of osterby?"


def test_a_thing_typed_as_what_singles_it_out_asks_which_one_it_is():
    assert fronted("tallest tower in osterland") == "What is the tallest tower in osterland?"
    assert fronted("the oldest mill on the tarn") == "What is the oldest mill on the tarn?"
    assert fronted("which is the oldest mill") == "which is the oldest mill"  # already a question


def test_a_thing_typed_with_what_is_asked_of_it_last_asks_that():
    assert fronted("osterby harbour depth") == "What is the depth of osterby harbour?"
    assert answer_kind(fronted("ada brannock birth year"))[0] == "year"
    assert fronted("osterby population", lambda p: p == "osterby population") == "osterby population"
