"""The loop checks what the question asks (deepresearch.research.asked), not only what it names: an
asked thing with no answering sentence is a gap, searched other ways; two rounds with nothing new end
the loop; the report says what stays unanswered; roles are the kinds of thing the backend's
descriptions name; a capable model's reading of the question leads. Invented entries throughout."""

from deepresearch.config import Context
from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.nodes.knowledge_gap import knowledge_gap
from deepresearch.nodes.tool_selector import asked_tasks
from deepresearch.research.asked import open_asked
from deepresearch.research.compose import UNANSWERED_NOTE, with_unanswered
from deepresearch.understanding.embedded.question import relations_of
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.linking import kinds_for
from deepresearch.understanding.model import ConceptProposal, model_led

QUESTION = "What year did the Vellmark Bridge open to traffic?"
BRIDGE = {"name": "Vellmark Bridge", "query": "Vellmark Bridge", "title": None, "phrase": "vellmark bridge"}
ABOUT = {
    "id": 1,
    "key": "a",
    "title": "bridge.md",
    "snippet": "The Vellmark Bridge is a stone arch bridge over the river Tarn in Osterby. "
    "It was designed by the engineer Ida Roon and is built of grey granite.",
}
OPENED = {
    "id": 2,
    "key": "b",
    "title": "osterby.md",
    "snippet": "Osterby is a market town on the Tarn. The Vellmark Bridge opened to traffic in 1871 after nine years of work.",
}


def sim():
    return similarity_for(embedder_for("local"))


def analysis():
    return rules_reading(QUESTION, [{**BRIDGE, "origin": "question"}])


def state(evidence, rounds=()):
    return {
        "question": QUESTION,
        "analysis": analysis().data(),
        "concepts": [{**BRIDGE, "origin": "question"}],
        "evidence": evidence,
        "iteration": 1,
        "rounds": list(rounds),
    }


def test_a_named_thing_covered_is_not_an_answer():
    asked, unanswered = open_asked(
        analysis(), [{**BRIDGE, "origin": "question"}], [ABOUT], lambda s: s["snippet"], sim()
    )
    assert [a.subject for a in asked] == ["Vellmark Bridge"]
    assert [a.subject for a in unanswered] == ["Vellmark Bridge"]
    # a sentence of another source that names the subject and says what is asked answers it
    _, unanswered = open_asked(
        analysis(), [{**BRIDGE, "origin": "question"}], [ABOUT, OPENED], lambda s: s["snippet"], sim()
    )
    assert unanswered == []


def test_the_gap_check_goes_on_while_an_asked_thing_is_unanswered():
    out = knowledge_gap(state([ABOUT]))
    assert not out.get("stopped_by")  # the subject is covered, but the year is not said
    assert any("vellmark bridge" in g.lower() and "open" in g for g in out["gaps"])
    assert out["unanswered"] and out["unanswered"][0]["subject"] == "Vellmark Bridge"
    done = knowledge_gap(state([ABOUT, OPENED]))
    assert done["stopped_by"] == "complete" and done["unanswered"] == []


def test_two_rounds_with_nothing_new_end_the_loop_and_say_what_is_open():
    going = knowledge_gap(state([ABOUT], rounds=[1]))
    assert not going.get("stopped_by") and going["rounds"] == [1, 1]
    out = knowledge_gap(state([ABOUT], rounds=[1, 1]))
    assert out["stopped_by"] == "no_new_sources" and out["unanswered"]


def test_an_unanswered_thing_is_searched_other_ways():
    _, unanswered = open_asked(analysis(), [{**BRIDGE, "origin": "question"}], [ABOUT], lambda s: s["snippet"], sim())
    tasks = asked_tasks(unanswered[0].data(), [], "docs")
    queries = [t["query"].lower() for t in tasks]
    assert queries[0].startswith("vellmark bridge") and "open" in queries[0]
    assert "vellmark" not in queries[1] and "open" in queries[1]
    again = asked_tasks(unanswered[0].data(), queries, "docs")  # nothing searched twice: the next page
    assert [(t["query"].lower(), t["page"]) for t in again] == [(queries[0], 1)]
    role = {"gap": "glassblower of Orrin Chalice", "role": "glassblower", "via": "Orrin Chalice", "words": "die"}
    assert asked_tasks(role, [], "docs")[0]["query"] == "Orrin Chalice glassblower"


def test_the_report_says_what_stays_unanswered():
    draft = "# Q\n\n## Answer\n\nThe bridge is of granite [1].\n\n## More\n\nText [1]."
    out = with_unanswered(draft, [{"text": "When did the Vellmark Bridge open", "subject": "Vellmark Bridge"}])
    assert out.index(UNANSWERED_NOTE) < out.index("The bridge is of granite")
    assert "do not answer “When did the Vellmark Bridge open”." in out
    role = {"text": "Where was the sculptor of the Orrin Chalice born?", "role": "sculptor", "via": "Orrin Chalice"}
    assert "(no source names the sculptor of Orrin Chalice)" in with_unanswered(draft, [role])
    found = {"text": "Where was the sculptor of the Orrin Chalice born?", "subject": "Pell Varo"}
    assert "born” of Pell Varo." in with_unanswered(draft, [found])
    hostile = {"text": "When did [the bridge](javascript:alert(1)) open", "subject": "x"}
    assert "[the bridge\\](javascript" in with_unanswered(draft, [hostile])  # escaped: no link


class Described:
    """A backend that describes its documents, as the encyclopedia does."""

    def __init__(self, entries: dict[str, str]):
        self.entries = entries

    def titles(self):
        return list(self.entries)

    def description(self, title):
        return self.entries.get(title, "")


def test_a_role_is_a_kind_of_thing_the_backend_describes():
    backend = Described(
        {
            "Pell Varo": "Venetian glassblower (1701-1760)",
            "Ana Strell": "Bohemian glassblower and painter",
            "Orm Hask": "Glassblower from Ulm",
            "Orrin Chalice": "Goblet made in Murano",
        }
    )
    kinds = kinds_for(backend)
    assert kinds is not None and "glassblower" in kinds and "painter" not in kinds  # one description only
    question = "When did the glassblower of the Orrin Chalice die?"
    assert relations_of(question, ["orrin chalice"], kinds) == ["glassblower"]
    assert relations_of(question, ["orrin chalice"], None) == []  # no backend to say it is a kind of thing


def test_a_capable_models_reading_leads():
    concepts = [
        {"name": "Quell", "query": "Quell", "title": "Quell", "phrase": "quell", "origin": "model"},
        {"name": "Tarsk", "query": "Tarsk", "title": "Tarsk", "phrase": "tarsk", "origin": "question"},
    ]
    rules = rules_reading("how do the quell and the Tarsk find food", concepts)
    assert not rules.comparison
    proposal = ConceptProposal(concepts=["Quell", "Tarsk"], kind="comparison", compared=["Quell", "Tarsk"])
    led = model_led(rules, proposal, concepts)
    assert led.comparison and [c.name for c in led.compared] == ["Quell", "Tarsk"]
    assert model_led(rules, ConceptProposal(kind="broad"), concepts).broad


def test_the_gap_check_is_a_floor_under_a_capable_models_verdict(fake_model):
    from tests.fakes import researcher

    spec, _ = fake_model(researcher(complete_after=1))  # the model calls it complete at once
    from langgraph.runtime import Runtime

    out = knowledge_gap(state([ABOUT]), Runtime(context=Context(model=spec)))
    assert not out.get("stopped_by") and out["unanswered"]


def reads_koala_and_panda(kind: str, prompt: str, n: int):
    """A capable model that reads the question as a comparison of two animals."""
    from tests.fakes import researcher

    if kind == "ConceptProposal":
        return {"concepts": ["Koala", "Giant panda"], "kind": "comparison", "compared": ["koala", "giant panda"]}
    return researcher()(kind, prompt, n)


def test_the_loop_researches_what_a_capable_model_read(fake_model):
    from langgraph.runtime import Runtime

    from deepresearch.nodes.analyse import analyse, analyse_outline

    spec, _ = fake_model(reads_koala_and_panda)
    question = {"question": "what do the koala and the giant panda live on"}
    for node in (analyse, analyse_outline):  # the deep graph reads through the same reader
        out = node(dict(question), Runtime(context=Context(model=spec, search="wiki")))
        assert out["analysis"]["comparison"], node.__name__
        assert [c["name"] for c in out["analysis"]["compared"]] == ["Koala", "Giant panda"], node.__name__
        assert {"Koala", "Giant panda"} <= {c["title"] for c in out["concepts"]}


class Encyclopedia(Described):
    """Described documents with texts, as linking reads them."""

    def describe(self, title):
        return (
            f"{self.entries.get(title, '')} {title} was a person; he lived there."
            if "(" in self.entries.get(title, "")
            else self.entries.get(title, "")
        )

    def link_texts(self):
        return [f"{t} {d}" for t, d in self.entries.items()]


def test_a_role_is_followed_to_the_named_thing_whose_description_fits_it():
    from deepresearch.research.bridges import follow_role
    from deepresearch.understanding.analysis import Hop

    backend = Encyclopedia(
        {
            "Orrin Chalice": "Goblet kept in Vellmark",
            "Pell Varo": "Venetian glassblower (1701-1760)",
            "Dara Quill": "Bohemian banker (1690-1750)",
            "Vellmark": "Town in Osterland",
        }
    )
    subject = {"name": "Orrin Chalice", "title": "Orrin Chalice", "phrase": "orrin chalice", "origin": "question"}
    text = (
        "Orrin Chalice. The Orrin Chalice is a goblet of green glass. Dara Quill paid for it in 1731, "
        "and Pell Varo gave it its twisted stem. It is kept in Vellmark."
    )
    asked = {"when", "did", "the", "glassblower", "of", "orrin", "chalice", "die"}
    found = follow_role(Hop("glassblower", "glassblower", True), subject, text, asked, sim(), backend, set())
    assert found is not None and found["title"] == "Pell Varo" and found["origin"] == "bridge"
    assert "Pell Varo" in found["sentence"] and found["via"] == "Orrin Chalice"
    # the banker fills a banker's role; a place fills no role asked of a person
    found = follow_role(Hop("banker", "banker", True), subject, text, asked, sim(), backend, set())
    assert found is not None and found["title"] == "Dara Quill"


def test_the_named_things_own_text_does_not_restate_what_is_asked_of_its_role():
    """A sentence of the named thing's own text is close to the whole question by the name alone; what
    is asked beyond it (where its sculptor was born) must be said for it to count as restated."""
    question = "In which town was the sculptor of the Orrin Chalice born?"
    chalice = {"name": "Orrin Chalice", "query": "Orrin Chalice", "title": None, "phrase": "orrin chalice"}
    reading = rules_reading(question, [{**chalice, "origin": "question"}])
    own = {"id": 1, "key": "a", "title": "chalice.md", "snippet": "The Orrin Chalice was made in the town of Vellmark."}
    asked, unanswered = open_asked(reading, [{**chalice, "origin": "question"}], [own], lambda s: s["snippet"], sim())
    assert [a.role for a in asked] == ["sculptor"]
    assert [a.role for a in unanswered] == ["sculptor"]
    restated = {
        "id": 2,
        "key": "b",
        "title": "makers.md",
        "snippet": "The sculptor of the Orrin Chalice was born in the town of Murano, where he learned the trade.",
    }
    _, unanswered = open_asked(
        reading, [{**chalice, "origin": "question"}], [own, restated], lambda s: s["snippet"], sim()
    )
    assert unanswered == []


def test_a_role_is_said_by_its_own_word_or_its_verb_not_a_word_that_begins_alike():
    from deepresearch.research.roles import says_role

    assert says_role("glassblowers", "glassblower") and says_role("painted", "painter")
    assert says_role("directed", "director") and not says_role("architecture", "architect")
    assert says_role("discovery", "discoverer") and not says_role("discourse", "discoverer")


def test_a_word_that_only_begins_like_the_role_names_no_filler():
    """'a masterpiece of sculpture, beside Vellmark Harbour' says nothing of a sculptor: the unlinked
    name next to it is not taken for one."""
    from deepresearch.research.bridges import find_bridge
    from deepresearch.understanding.analysis import Hop

    backend = Encyclopedia({"Orrin Chalice": "Goblet kept in Vellmark", "Vellmark": "Town in Osterland"})
    subject = {"name": "Orrin Chalice", "title": "Orrin Chalice", "phrase": "orrin chalice", "origin": "question"}
    text = "Orrin Chalice. The Orrin Chalice is a masterpiece of sculpture, shown beside Tarn Harbour."
    asked = {"where", "was", "the", "sculptor", "of", "orrin", "chalice", "born"}
    hop = Hop("sculptor", "the sculptor of the", True)
    assert find_bridge(hop, subject, text, asked, sim(), backend, set()) is None
    said = "Orrin Chalice. The Orrin Chalice was sculpted by Pell Varo, beside Tarn Harbour."
    found = find_bridge(hop, subject, said, asked, sim(), backend, set())
    assert found is not None and found["name"] == "Pell Varo"


def test_a_document_retrieved_later_that_says_it_fills_the_role_is_the_filler():
    """The subject's own text names no founder; a document the next round found says, in its own text,
    that its person co-founded the subject: that person is the role's filler."""
    from deepresearch.research.bridges import bridges

    backend = Encyclopedia(
        {
            "Vellmark Glass Works": "Glass works in Vellmark",
            "Pell Varo": "Venetian glassblower (1701-1760)",
            "Ida Roon": "Osterland engineer (1861-1930)",
        }
    )
    question = "What year did the founder of the Vellmark Glass Works die?"
    works = {
        "name": "Vellmark Glass Works",
        "query": "Vellmark Glass Works",
        "title": "Vellmark Glass Works",
        "phrase": "vellmark glass works",
        "origin": "question",
    }
    reading = rules_reading(question, [works])
    own = {"key": "a", "title": "Vellmark Glass Works", "snippet": "The Vellmark Glass Works makes green bottles."}
    other = {"key": "b", "title": "Ida Roon", "snippet": "Ida Roon was an engineer. She rebuilt the kilns of Vellmark."}
    founder = {
        "key": "c",
        "title": "Pell Varo",
        "snippet": "Pell Varo was a glassblower. In 1731 he co-founded the Vellmark Glass Works with two brothers.",
    }
    text = lambda s: s["snippet"]  # noqa: E731
    assert bridges(reading, [works], [own, other], text, sim(), backend, by_description=False) == []
    found = bridges(reading, [works], [own, other, founder], text, sim(), backend, by_description=False)
    assert [b["title"] for b in found] == ["Pell Varo"] and found[0]["via"] == "Vellmark Glass Works"
    assert "co-founded" in found[0]["sentence"]


def test_a_role_beyond_the_first_is_not_answered_by_the_first_ones_filler():
    """'Who was the teacher of the sculptor of X?': X's text naming its sculptor does not name the
    sculptor's teacher."""
    question = "Who was the teacher of the sculptor of the Orrin Chalice?"
    chalice = {"name": "Orrin Chalice", "query": "Orrin Chalice", "title": None, "phrase": "orrin chalice"}
    reading = rules_reading(question, [{**chalice, "origin": "question"}])
    assert [h.relation for h in reading.hops] == ["teacher", "sculptor"]
    own = {"id": 1, "key": "a", "title": "chalice.md", "snippet": "The Orrin Chalice was carved by Pell Varo in 1731."}
    _, unanswered = open_asked(reading, [{**chalice, "origin": "question"}], [own], lambda s: s["snippet"], sim())
    assert [a.role for a in unanswered] == ["sculptor"] and "teacher" in unanswered[0].words


def test_a_life_span_in_the_description_line_says_when_its_person_was_born_and_died():
    """'Pell Varo (Venetian glassblower (1701–1760)).': the format's years are a birth and a death, so
    it answers 'when was he born' however far its words are from 'born' in meaning."""
    varo = {"name": "Pell Varo", "query": "Pell Varo", "title": "Pell Varo", "phrase": "pell varo"}
    text = (
        "Pell Varo (Venetian glassblower (1701–1760)). He was raised by his uncle, a glass cutter. His childhood "
        "home stood by the harbour of Murano. He was baptised at San Pietro as a baby. His mother gave birth to "
        "him in a fisherman's house. His parents were glassblowers too."
    )
    source = {"id": 1, "key": "a", "title": "Pell Varo", "snippet": text}

    def unanswered(question):
        reading = rules_reading(question, [{**varo, "origin": "question"}])
        return open_asked(reading, [{**varo, "origin": "question"}], [source], lambda s: s["snippet"], sim())[1]

    assert unanswered("When was Pell Varo born?") == []
    assert unanswered("In which year did Pell Varo die?") == []
    # a year known only roughly is written "c. 1701": still the format's birth and death
    source["snippet"] = text.replace("(1701–1760)", "(c. 1701–c. 1760)")
    assert unanswered("When was Pell Varo born?") == []
    assert unanswered("In which year did Pell Varo die?") == []


def test_a_kind_asked_for_is_answered_only_by_a_thing_the_backend_calls_that_kind():
    """'Which currency ...': a sentence naming a town does not answer it, one naming a thing whose
    description is a currency's does (the kinds are the backend's descriptions, read by meaning)."""
    backend = Encyclopedia(
        {
            "Osterland": "Country in Europe",
            "Osterby": "Town in Osterland",
            "Vellmark crown": "Currency of Osterland",
            "Tarn mark": "Currency of Tarnia",
            "Brel florin": "Currency of Brel",
        }
    )
    land = {"name": "Osterland", "query": "Osterland", "title": "Osterland", "phrase": "osterland"}
    reading = rules_reading("Which currency is used in Osterland?", [{**land, "origin": "question"}])
    own = {
        "id": 1,
        "key": "a",
        "title": "Osterland",
        "snippet": "Osterland has many lakes. Money used in Osterland is printed in Osterby.",
    }
    paid = {"id": 2, "key": "b", "title": "Vellmark crown", "snippet": "Osterland uses the Vellmark crown."}
    text = lambda s: s["snippet"]  # noqa: E731
    _, unanswered = open_asked(reading, [{**land, "origin": "question"}], [own], text, sim(), backend)
    assert [a.subject for a in unanswered] == ["Osterland"]
    _, unanswered = open_asked(reading, [{**land, "origin": "question"}], [own, paid], text, sim(), backend)
    assert unanswered == []


def test_the_sentence_the_check_took_for_the_answer_is_quoted_in_the_answer():
    """What ended the research is what the reader sees: the sentence the asked-thing check found
    ("Osterland uses the Vellmark crown.") opens the answer paragraph even where the
    paragraph's own ranking prefers the subject's opening, which names other things."""
    from deepresearch.research.answer import answer_paragraph
    from deepresearch.research.asked import answering

    backend = Encyclopedia(
        {
            "Osterland": "Country in Europe",
            "Tarn Sea": "Sea in Europe",
            "Brel": "Country in Europe",
            "Vellmark crown": "Currency of Osterland",
        }
    )
    land = {
        "name": "Osterland",
        "query": "Osterland",
        "title": "Osterland",
        "phrase": "osterland",
        "origin": "question",
    }
    reading = rules_reading("Which currency is used in Osterland?", [land])
    own = {
        "id": 1,
        "key": "a",
        "title": "Osterland",
        "snippet": "Osterland is a country on the Tarn Sea, east of Brel. It has many lakes and old towns.",
    }
    paid = {"id": 2, "key": "b", "title": "Lakes of Osterland", "snippet": "Osterland uses the Vellmark crown."}
    text = lambda s: s["snippet"]  # noqa: E731
    checked = answering(reading, [land], [own, paid], text, sim(), backend)
    assert [(x, s["key"]) for x, s in checked] == [("Osterland uses the Vellmark crown.", "b")]
    alone, _ = answer_paragraph(reading, [land], [own, paid], text, sim())
    assert "Vellmark crown" not in alone  # the paragraph's own ranking alone misses it
    paragraph, picks = answer_paragraph(reading, [land], [own, paid], text, sim(), checked)
    assert "Osterland uses the Vellmark crown [2]." in paragraph
    assert picks[0].sentence == "Osterland uses the Vellmark crown."  # it opens the paragraph
    assert len(picks) > 1  # the paragraph's own picks follow it


def test_a_thing_named_by_its_own_kind_is_no_role():
    """ "the city of Velm", where Velm's own description says it is a city, names Velm: nothing is
    reached through a role; "the river of Velm" (Velm is no river) still reaches one."""
    from deepresearch.understanding.embedded.reader import EmbeddedReader

    backend = Encyclopedia(
        {
            "Velm": "City in Osterland",
            "Osterby": "City in Osterland",
            "Tarn": "River in Osterland",
            "Orla": "River in Brel",
            "Sava": "River in Tarnia",
        }
    )
    reader = EmbeddedReader(backend)
    itself, _ = reader.read("Which bridge crosses into the city of Velm?", "")
    assert [c.name for c in itself.subjects] == ["Velm"]
    assert itself.hops == ()
    reached, _ = reader.read("Which bridge crosses the river of Velm?", "")
    assert [h.relation for h in reached.hops] == ["river"]


def test_a_role_word_that_ends_a_name_is_no_role():
    """'the Grey River of Osterland': "river" is the last word of a name, not a role to follow."""
    from deepresearch.understanding.embedded.reader import EmbeddedReader

    backend = Encyclopedia(
        {
            "Grey River": "River in Osterland",
            "Osterland": "Country in Europe",
            "Tarn": "River in Osterland",
            "Orla": "River in Brel",
            "Sava": "River in Tarnia",
        }
    )
    reading, _ = EmbeddedReader(backend).read("Which town lies on the Grey River of Osterland?", "")
    assert [c.name for c in reading.subjects] == ["Grey River", "Osterland"]
    assert reading.hops == ()


def test_a_part_or_point_of_a_thing_is_no_role():
    """'near the end of Tarn War' says when, not a thing reached through a role, even where the
    backend has documents that are ends; 'the captain of the Tarn' is still a role."""
    kinds = {"end", "captain", "war"}
    assert relations_of("What happened to Pell Varo near the end of Tarn War?", ["pell varo", "tarn war"], kinds) == []
    assert relations_of("Who was the captain of the Tarn?", ["tarn"], kinds) == ["captain"]


def test_an_answer_that_found_nothing_says_so_once_in_the_questions_words():
    draft = (
        "# Q\n\n## Answer\n\n> **Not found:** no retrieved sentence states a year for what the question asks "
        "(When did it open); the sections below give what was found.\n\n## More\n\nText [1]."
    )
    out = with_unanswered(draft, [{"text": "When did the Vellmark Bridge open", "subject": "Vellmark Bridge"}])
    answer = out.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert UNANSWERED_NOTE in answer and "**Not found:**" not in answer
    assert out.endswith("## More\n\nText [1].")


def test_a_sentence_saying_the_role_of_its_subject_answers_beyond_the_closest_ones():
    """'Name the capital of Osterland.': the sentences closest to the question say the role with a
    qualifier or of another thing; one further down says it of Osterland in so many words ("Old Vell,
    the capital of Osterland"), in a document about another place: that answers it."""
    backend = Encyclopedia(
        {
            "Osterland": "Country in Europe",
            "Kess": "Capital of Kess province, Osterland",
            "Tarnby": "Capital of Tarn province, Osterland",
            "Osterby": "City in Osterland",
            "Lunn": "Town in Osterland",
        }
    )
    land = {
        "name": "Osterland",
        "query": "Osterland",
        "title": "Osterland",
        "phrase": "osterland",
        "origin": "question",
    }
    reading = rules_reading("Name the capital of Osterland.", [land])
    text = lambda s: s["snippet"]  # noqa: E731
    near = [
        {"id": 1, "key": "a", "title": "Osterland", "snippet": "Osterland is a country in Europe. It has many lakes."},
        {"id": 2, "key": "b", "title": "Brel", "snippet": "Brel is the cultural capital of Osterland."},
        {"id": 3, "key": "c", "title": "Lunn", "snippet": "Lunn is the former capital of Osterland."},
        {"id": 4, "key": "d", "title": "Kess", "snippet": "Kess is the capital of Kess province, Osterland."},
        {"id": 5, "key": "e", "title": "Tarnby", "snippet": "Tarnby is the capital of Tarn province, Osterland."},
    ]
    said = {
        "id": 6,
        "key": "f",
        "title": "Osterby",
        "snippet": "Osterby, officially the Osterby Capital District, is a port city on the eastern shore of a "
        "lake, with old walls and a market, that contains Old Vell, the capital of Osterland.",
    }
    asked, unanswered = open_asked(reading, [land], near, text, sim(), backend)
    assert [a.role for a in asked] == ["capital"] and [a.role for a in unanswered] == ["capital"]
    _, unanswered = open_asked(reading, [land], [*near, said], text, sim(), backend)
    assert unanswered == []
