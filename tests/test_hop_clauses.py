"""Two-hop questions whose role is a relative clause or whose subject is described: "the capital of
the country that borders Valdor" leads to another land than Valdor, and its verb is no subject; a
description no document matches leaves the things it names to research; a noun of another kind than
the role ("the rank of the explorer who ...") is asked of the role's filler; a described subject of
another kind than the one asked ("which sea does the longest river of Hesper reach") is what the
question asks about, not its answer; a bridge named by its own document is covered by it; a kind's
own article is no thing of that kind, and a name that says the kind is one. Invented places."""

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.report.grounding import source_sentences
from deepresearch.research.asked import answering, asked_things, open_asked
from deepresearch.research.bridges import bridges, follow_role
from deepresearch.research.coverage import covers
from deepresearch.understanding.analysis import Hop
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.embedded.subjects import refine
from deepresearch.understanding.linking import concept
from tools.base import SearchResult

ENTRIES = {
    "Valdor": "Country in the north",
    "Mernia": "Country in the north",
    "Cortha": "Capital city of Valdor",
    "Ostmark": "Capital city of Mernia",
    "Border": "Line between two places",
    "Tarn Sea": "Marginal sea of the Grey Ocean",
    "Vell Sea": "Sea in the east",
    "Dunn Sea": "Inland sea of Hesper",
    "Mirr Sea": "Lake in the east",
    "Ulm Lake": "Lake in the west",
    "River": "Natural stream of water flowing to the sea",
    "Orvel": "Longest river of Hesper",
    "Kesh River": "River of the eastern marches",
    "Sarn River": "River in the south of Valdor",
    "Vell": "Edible fruit of the vell tree",
    "Lirr": "Capital of Mernia",
    "Sarnland": "Country in the west",
    "Orl Lake": "Lake in Valdor and Mernia",
    "Vell Works Inc.": "Glass company in Valdor",
    "Orm Company": "Shipping company of Mernia",
    "Kest Company": "Mining company of Valdor",
    "Hesper": "Continent",
    "Lanth": "Continent",
    "Orm": "Continent",
}
TEXTS = {
    "Valdor": "Valdor is a country in the north. Its capital, Cortha, is the largest city. Valdor is bordered "
    "by Mernia to the east.",
    "Orvel": "The Orvel is the longest river of Hesper. It runs south past the hills and reaches the Mirr Sea.",
}
for i in range(40):  # an encyclopedia's bulk
    ENTRIES[f"Entry {i}"] = f"Note number {i} on weather and tides"


class Atlas:
    """Titles, descriptions, and a search that finds a document by its text's words."""

    def titles(self):
        return list(ENTRIES)

    def link_texts(self):
        return [f"{t} {d}" for t, d in ENTRIES.items()]

    def description(self, title):
        return ENTRIES.get(title, "")

    def describe(self, title):
        return self.description(title)

    def search(self, query, k=5):
        words = set(query.lower().split())
        hits = [t for t, x in TEXTS.items() if len(words & set(x.lower().replace(".", "").split())) >= 2]
        return [SearchResult(t, f"https://example.org/{t}", f"{t} ({ENTRIES[t]}). {TEXTS[t]}", "atlas") for t in hits][
            :k
        ]


def sim():
    return similarity_for(embedder_for("local"))


def linked(title: str, at: list[int], origin: str = "question") -> dict:
    phrase = title.lower()
    return concept(title, phrase, title, origin) | {"at": at}


text_of = lambda s: s["snippet"]  # noqa: E731


def test_a_relative_clauses_verb_is_no_subject():
    question = "Name the capital of the country that borders Valdor."
    # name(0) the capital of the country that(6) borders(7) valdor(8)
    found = [linked("Border", [7, 8]) | {"phrase": "borders"}, linked("Valdor", [8, 9])]
    assert [c["name"] for c in refine(question, found, Atlas())] == ["Valdor"]


def test_a_description_no_document_matches_leaves_what_it_names_to_research():
    question = "What was the rank of the explorer who first crossed the Tarn Sea?"
    found = [linked("Tarn Sea", [10, 12])]
    assert [c["name"] for c in refine(question, found, Atlas())] == ["Tarn Sea"]
    one_word = "What was the rank of the explorer who first reached Cortha?"  # a name of one word
    assert [c["name"] for c in refine(one_word, [linked("Cortha", [10, 11])], Atlas())] == ["Cortha"]


def test_a_noun_of_another_kind_than_the_role_is_asked_of_its_filler():
    tarn = concept("Tarn Sea", "tarn sea", "Tarn Sea")
    reading = rules_reading("What was the rank of the explorer who first crossed the Tarn Sea?", [tarn])
    asked = asked_things(reading, [tarn])
    assert [a.role for a in asked] == ["explorer"] and "rank" in asked[0].words.split()
    own = {"id": 1, "key": "a", "title": "Tarn Sea", "snippet": "The Tarn Sea is a marginal sea of the Grey Ocean."}
    _, unanswered = open_asked(reading, [tarn], [own], text_of, sim(), Atlas())
    assert len(unanswered) == 1  # the sea's own text says nothing of the explorer's rank


def test_a_role_in_a_relative_clause_leads_past_a_subject_of_its_kind():
    valdor = concept("Valdor", "valdor", "Valdor")
    reading = rules_reading("Name the capital of the country that borders Valdor.", [valdor])
    assert [h.relation for h in reading.hops][-1] == "country"
    evidence = [{"id": 1, "key": "a", "title": "Valdor", "snippet": TEXTS["Valdor"]}]
    found = bridges(reading, [valdor], evidence, text_of, sim(), Atlas())
    # not "no hop" (Valdor is itself a country), nor Valdor's capital as if the clause said nothing
    assert [b["name"] for b in found] == ["Mernia"]


def test_a_described_subject_of_another_kind_is_asked_about_not_the_answer():
    question = "Which sea does the longest river of Hesper reach?"
    found = refine(question, [linked("Hesper", [7, 8])], Atlas())
    river = next(c for c in found if c.get("origin") == "described")
    assert river["name"] == "Orvel" and river.get("asked_of") is True
    own = {"id": 1, "key": "a", "title": "Orvel", "snippet": TEXTS["Orvel"]}
    reading = rules_reading(question, [river])
    said = [x for x, _ in answering(reading, [river], [own], text_of, sim(), Atlas())]
    assert said == ["It runs south past the hills and reaches the Mirr Sea."]
    found = refine("Which river is the longest of Hesper?", [linked("Hesper", [6, 7])], Atlas())
    assert not any(c.get("asked_of") for c in found)  # the river asked for is the described one


def test_a_bridge_named_by_its_own_document_is_covered_by_it():
    bridge = concept("Mernia", "mernia", "Mernia", "bridge") | {"source": "m"}
    assert covers(bridge, {"key": "m", "title": "Mernia"})
    assert not covers(bridge | {"source": "v"}, {"key": "v", "title": "Valdor"})


def test_a_kinds_own_article_is_none_of_that_kind_and_a_name_saying_the_kind_is_one():
    orvel = concept("Orvel", "orvel", "Orvel")
    reading = rules_reading("Which sea does the Orvel flow into?", [orvel])
    generic = "The Orvel is a river of Hesper, and like every river it flows downhill."
    own = {"id": 1, "key": "a", "title": "Orvel", "snippet": generic}
    _, unanswered = open_asked(reading, [orvel], [own], text_of, sim(), Atlas())
    assert len(unanswered) == 1
    named = {**own, "snippet": generic + " Its mouth opens on the Mirr Sea."}
    said = [x for x, _ in answering(reading, [orvel], [named], text_of, sim(), Atlas())]
    assert said == ["Its mouth opens on the Mirr Sea."]  # a lake by its description, a sea by its name


def test_a_kind_role_takes_the_longer_title_of_that_kind_that_begins_with_a_named_thing():
    lamp = concept("Glimmer Lamp", "glimmer lamp", None)
    text = "The Glimmer Lamp is a lamp made and sold by Vell since the spring fair."
    company = Hop("company", "the company that", False)
    found = follow_role(company, lamp, text, {"company", "lamp"}, sim(), Atlas(), set())
    assert found is not None and found["title"] == "Vell Works Inc."  # not the fruit, nor nothing


def test_a_lead_line_whose_title_ends_in_a_period_is_one_sentence():
    text = "Vell Works Inc. (Glass company in Valdor). Vell Works Inc. makes lamps in Cortha. (It began as a kiln.)"
    assert source_sentences(text)[0] == "Vell Works Inc. (Glass company in Valdor)."


def test_a_clause_after_a_role_noun_makes_a_hop():
    arno = concept("Arno Vell", "arno vell", "Arno Vell")
    into = rules_reading("In what year did the dynasty into which Arno Vell was born end?", [arno])
    assert [h.relation for h in into.hops] == ["dynasty"]
    ruled = rules_reading("When did the state ruled by Arno Vell end?", [arno])
    assert [h.relation for h in ruled.hops] == ["state"]
    act = rules_reading("Who ruled the country in which Arno Vell was crowned?", [arno])
    assert [h.relation for h in act.hops] == ["ruled"]  # the act asked; the country is found as its subject


def test_a_word_qualifying_the_role_is_no_subject():
    question = "What instrument did the harp musician who recorded Grey Tides play?"
    # what(0) instrument did the harp(4) musician(5) who recorded grey(8) tides(9) play
    found = [linked("Harp", [4, 5]) | {"phrase": "harp"}, linked("Grey Tides", [8, 10])]
    assert [c["name"] for c in refine(question, found, Atlas())] == ["Grey Tides"]


class Gazetteer(Atlas):
    """Descriptions, and a text whose opening says what each thing is."""

    OPENINGS = {"Lirr": "Lirr is the capital and largest city of Mernia. It lies on the Kesh River."}

    def describe(self, title):
        return f"{self.description(title)} {self.OPENINGS.get(title, '')}"


def test_a_kind_role_is_filled_by_what_the_opening_sentence_defines_as_one():
    city = Hop("city", "the city where", False)
    hall = concept("Hall of Lamps", "hall of lamps", None)
    text = "The Hall of Lamps was a library in Lirr, built under the Mernian kings."
    found = follow_role(city, hall, text, {"city", "hall", "lamps"}, sim(), Gazetteer(), set())
    assert found is not None and found["title"] == "Lirr"  # "Capital of Mernia", and its opening says a city
    assert follow_role(city, hall, text, {"city", "hall", "lamps"}, sim(), Atlas(), set()) is None


def test_a_document_of_another_kind_that_says_the_role_fills_no_kind_role():
    from deepresearch.research.bridges import filler_by_its_own_text

    city = Hop("city", "the city where", False)
    hall = concept("Hall of Lamps", "hall of lamps", "Hall of Lamps")
    age = {"id": 1, "key": "g", "title": "Hesper", "snippet": "The Hall of Lamps stood in the greatest city of Hesper."}
    assert filler_by_its_own_text(city, hall, [age], text_of, sim(), Atlas(), set()) is None


def test_a_present_participle_after_a_role_noun_makes_a_hop():
    arno = concept("Arno Vell", "arno vell", "Arno Vell")
    reading = rules_reading("How many provinces does the country containing Arno Vell have?", [arno])
    assert [h.relation for h in reading.hops] == ["country"]


def test_the_verb_after_the_noun_asked_is_no_subject():
    question = "Which country borders the capital of Valdor?"
    # which(0) country(1) borders(2) the capital of valdor(6)
    found = [linked("Border", [2, 3]) | {"phrase": "borders"}, linked("Valdor", [6, 7])]
    assert [c["name"] for c in refine(question, found, Atlas())] == ["Valdor"]


def test_a_kind_word_written_as_part_of_the_name_beside_it_is_no_thing():
    question = "When did Arno Vell cross Sea Tarn?"
    # when(0) did arno(2) vell cross(4) sea(5) tarn(6)
    found = [linked("Sea", [5, 6]), linked("Tarn Sea", [6, 7]) | {"phrase": "tarn"}]
    assert [c["name"] for c in refine(question, found, Atlas())] == ["Tarn Sea"]


def test_a_role_whose_clause_names_two_things_is_filled_by_what_both_texts_name():
    lake, mernia = concept("Orl Lake", "orl lake", "Orl Lake"), concept("Mernia", "mernia", "Mernia")
    reading = rules_reading("Which country lies east of the country that shares Orl Lake with Mernia?", [lake, mernia])
    evidence = [
        {"id": 1, "key": "a", "title": "Orl Lake", "snippet": "Orl Lake is a lake shared by Valdor and Mernia."},
        {
            "id": 2,
            "key": "b",
            "title": "Mernia",
            "snippet": "Mernia is bordered by Sarnland to the west and by Valdor.",
        },
    ]
    found = bridges(reading, [mernia, lake], evidence, text_of, sim(), Atlas())
    assert [b["name"] for b in found] == ["Valdor"]  # not Sarnland, which only Mernia's text names


def test_a_role_filler_named_by_another_text_answers_though_its_own_text_is_not_found():
    bridge_name = concept("Vellmark Bridge", "vellmark bridge", None)
    ada = concept("Ada Roon", "ada roon", None, "bridge") | {"sentence": "It was designed by Ada Roon.", "via": "x"}
    reading = rules_reading("Who designed the Vellmark Bridge?", [bridge_name])
    assert [h.relation for h in reading.hops] == ["designed"]
    own = {
        "id": 1,
        "key": "a",
        "title": "Vellmark Bridge",
        "snippet": "The Vellmark Bridge spans the Tarn. It was designed by Ada Roon.",
    }
    _, unanswered = open_asked(reading, [bridge_name, ada | {"via": "Vellmark Bridge"}], [own], text_of, sim(), Atlas())
    assert unanswered == []


def test_the_role_word_is_the_one_nearest_before_the_named_thing_and_the_outer_verb_is_asked():
    """'Which country lies west of the country where Ulm Lake is?': the second 'country' is the role,
    so the words before it ('lies west of') say what is asked of the role's filler, not the role."""
    lake = concept("Ulm Lake", "ulm lake", "Ulm Lake")
    reading = rules_reading("Which country lies west of the country where Ulm Lake is?", [lake])
    assert [h.relation for h in reading.hops] == ["country"]
    assert not {"lies", "west"} & set(reading.hops[0].phrase.split())
    assert {"lies", "west"} <= set(reading.focus.words)


def test_a_verb_in_a_relative_clause_does_not_make_the_verb_after_the_noun_asked_part_of_it():
    from deepresearch.understanding.embedded.question import answer_kind

    # "flows" after "river" is the main clause's verb though "was" follows in the relative clause
    assert answer_kind("Which river flows past the town where Arno Vell was a glassblower?")[1] == "river"
    assert answer_kind("Which river flows past Cortha?")[1] == "river"
