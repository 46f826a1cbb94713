"""Reading by meaning (issue 59): each mechanism on questions and texts of our own, outside every
evaluation set, with the embedded model as the product runs it. Each test compares the mechanism
with what the words alone give, so it fails when the mechanism is switched off."""

from __future__ import annotations

from deepresearch.config import Context
from deepresearch.embeddings.dense import fuse
from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.nodes.writer import write_extractive
from deepresearch.report.grounding import source_sentences
from deepresearch.research.answer import answer_paragraph, answer_picks
from deepresearch.research.bridges import bridges, find_bridge
from deepresearch.research.compare import comparison_table
from deepresearch.research.sentences import type_match
from deepresearch.tools import get_search
from deepresearch.tools.base import SearchResult
from deepresearch.tools.searching import reranked
from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.described import described_subject
from deepresearch.understanding.embedded.forms import choices_of, fronted
from deepresearch.understanding.embedded.hops import hops_of
from deepresearch.understanding.embedded.parts import parts_of
from deepresearch.understanding.embedded.question import answer_kind
from deepresearch.understanding.embedded.reader import rules_reading
from deepresearch.understanding.embedded.subjects import refine
from deepresearch.understanding.spelling import corrected, language_and_reading
from tests.helpers import of_type, run_iterative


def meaning():
    return similarity_for(embedder_for("local"))


def words():
    return similarity_for(None)


def _src(i: int, title: str, text: str) -> dict:
    return {"id": i, "key": f"k{i}", "title": title, "text": text, "url": f"https://example.org/{i}"}


def _text(s: dict) -> str:
    return s["text"]


# --- the hybrid search --------------------------------------------------------------------------


def test_a_question_in_other_words_finds_its_article_by_meaning():
    """No word of the question but "animal" is in the article's summary: BM25 alone ranks others first."""
    wiki = get_search("wiki")  # the run's default: hybrid
    question = "Which enormous sea creature sings long songs underwater?"
    assert "Humpback whale" in [r.title for r in wiki.search(question, 5)]
    lexical = [wiki.articles[d]["title"] for d, _ in wiki.index.top(question, 5)]
    assert "Humpback whale" not in lexical


def test_fusion_takes_each_rankings_say():
    assert fuse([[1, 2], [2, 3]], (1.0, 1.0))[0] == 2  # found by both beats first in one
    assert fuse([[1, 2, 3], [3, 2, 1]], (1.0, 2.0))[0] == 3  # the dense ranking weighs more


# --- typing errors -------------------------------------------------------------------------------


def test_typing_errors_are_read_as_the_backends_words():
    wiki = get_search("wiki")
    assert corrected("who buillt the eifel tower", wiki) == "who built the Eiffel tower"
    assert corrected("When did Mozrat die?", wiki) == "When did Mozart die?"  # a capital stays one
    # among equally near words, the one the question's other words share documents with
    assert corrected("which temples honour the hindu god shvia", wiki).endswith("god Shiva")  # not Shia
    assert "Ford motor" in corrected("which cars did the frod motor company build", wiki)  # not "from"
    assert corrected("Who painted the Mona Lisa?", wiki) == "Who painted the Mona Lisa?"  # nothing to fix
    # another form of a word the encyclopedia uses is no slip ("tutored": it says "tutor"), not "stored"
    assert corrected("Which poet tutored the young king?", wiki) == "Which poet tutored the young king?"
    # names the encyclopedia does not know are the user's own, not slips of its words (OpenAI is no
    # "Open", Nvidia no "Nadia", Zalando no "Zealand"); lower case, the same word is a slip
    for name in ("OpenAI", "Nvidia", "Zalando"):
        assert corrected(f"Who founded {name}?", wiki) == f"Who founded {name}?"
    assert corrected("who founded openai?", wiki) != "who founded openai?"
    # typed without capitals, a question's names take the case the encyclopedia writes them in, and
    # its other words stay lower case, so the reading finds the names it would find capitalized
    assert corrected("where were mozart and beethven born", wiki) == "where were Mozart and Beethoven born"
    assert corrected("which river runs through the capital of hungary", wiki).endswith("the capital of Hungary")
    found = [c["title"] for c in extract(corrected("where were mozart and beethven born", wiki), wiki)]
    assert found == ["Wolfgang Amadeus Mozart", "Ludwig van Beethoven"]
    # slips that hide the question's language from the detector: its corrected form is English
    assert language_and_reading("what languaeg is spokken in brazil", wiki) == (
        "en",
        "what language is spoken in Brazil",
    )
    assert language_and_reading("Wie heeft de Eiffeltoren ontworpen?", wiki)[0] == "nl"
    # and the run's first search is the question as read, not as typed
    _, events = run_iterative(Context(model="local", search="wiki"), "what languaeg is spokken in brazil")
    assert of_type(events, "searching")[0]["query"] == "what language is spoken in Brazil"
    # a title opening with "the" is named by the article before a truecased name it holds
    owner = corrected("who owns the new york times", wiki)
    assert [c["title"] for c in extract(owner, wiki)] == ["The New York Times"], owner
    analysis = rules_reading("When did Mozrat die?", [], spelled=corrected("When did Mozrat die?", wiki))
    assert analysis.question == "When did Mozrat die?" and analysis.read == "When did Mozart die?"


# --- the answer sentence ---------------------------------------------------------------------------

FERRY = [
    _src(
        1,
        "Orla ferry",
        "The Orla ferry carries cars across the Sound of Mell. "
        "Its crossing takes forty minutes in calm weather. "
        "The ferry made 1,240 crossings in 2019, more than any year before. "
        "It is operated by the harbour board of Kessock.",
    )
]


def test_each_part_of_a_question_gets_the_sentence_closest_to_it_that_holds_its_kind_of_answer():
    question = "How many crossings did the Orla ferry make in 2019, and who runs it?"
    assert [k for _, k in parts_of(question)] == ["number", "person"]
    concepts = [
        {"name": "Orla ferry", "query": "Orla ferry", "title": None, "phrase": "orla ferry", "origin": "question"}
    ]
    picks = answer_picks(rules_reading(question, concepts), concepts, FERRY, _text, meaning())
    said = " ".join(p.sentence for p in picks if p.answers)
    assert "1,240 crossings" in said and "harbour board of Kessock" in said
    assert "forty minutes" not in said  # it holds a number, but is no answer to either part


# --- bridges ---------------------------------------------------------------------------------------

LIGHTHOUSE = (
    "The Varne Light is a lighthouse on the Varne Bank. Its keeper's cottage was restored by Tomas "
    "Hale in 1990. The light was planned by the engineer Ada Quill, who also drew the pier. "
    "Visitors reach it by boat from Dover."
)


def test_a_bridge_is_the_name_in_the_sentence_closest_to_the_relation():
    """Two names, two relations, neither said in the question's words ("architect"): meaning chooses."""
    question = "Who was the architect of the Varne Light?"
    concepts = [{"name": "Varne Light", "phrase": "varne light"}]
    hop = hops_of(question, concepts)[0]
    assert hop.relation == "architect" and "varne" not in hop.phrase
    found = find_bridge(hop, {"name": "Varne Light", "title": None}, LIGHTHOUSE, {"varne", "light"}, meaning())
    assert found and found["name"] == "Ada Quill", found


FILM = (
    "The Salt Road is a 1958 drama film directed by Ines Varga and written by Paul Oder. "
    "Its lead actor Marco Telli later became a filmmaker himself."
)


def test_a_bridge_is_found_in_the_sentence_that_says_the_relation_of_the_subject():
    """ "the person who directed" alone is nearest the actor who became a filmmaker; the sentence that
    says "directed", said of The Salt Road, names the film and its director."""
    question = "When did the person who directed The Salt Road die?"
    hop = hops_of(question, [{"name": "The Salt Road", "phrase": "the salt road"}])[0]
    found = find_bridge(hop, {"name": "The Salt Road", "title": None}, FILM, {"salt", "road", "directed"}, meaning())
    assert found and found["name"] == "Ines Varga", found


HARBOUR = (
    "Described as the finest painting of the harbour at dusk, The Harbour at Dusk made its painter famous. "
    "It is the work of the Norwegian painter Liv Marren, who finished it in 1901."
)


def test_a_sentences_capitalized_first_word_is_no_bridge_unless_it_is_a_title():
    """The sentence closest to "painter of ..." opens with "Described": a capital that only starts a
    sentence names no one, so the bridge is the painter the next sentence names (the real
    encyclopedia's titles)."""
    question = "When was the painter of The Harbour at Dusk born?"
    concepts = [{"name": "The Harbour at Dusk", "phrase": "the harbour at dusk"}]
    hop = hops_of(question, concepts)[0]
    wiki = get_search("wiki")
    asked = {"harbour", "dusk", "painter", "born"}
    found = find_bridge(hop, {"name": "The Harbour at Dusk", "title": None}, HARBOUR, asked, meaning(), wiki)
    assert found and found["name"] == "Liv Marren", found


# --- comparisons ------------------------------------------------------------------------------------

ISLANDS = [
    _src(
        1,
        "Isle of Brann",
        "The Isle of Brann is an island in the northern sea. "
        "About 3,000 people live on Brann, most of them in its one town. "
        "Brann's economy rests on fishing and wool.",
    ),
    _src(
        2,
        "Isle of Cor",
        "The Isle of Cor is an island to the west of the mainland. "
        "Cor's economy depends on tourism and a small distillery. "
        "Cor has a population of 800, spread over four villages.",
    ),
]


def test_comparison_rows_pair_the_sentences_both_things_share():
    concepts = [
        {"name": n, "query": n, "title": None, "phrase": n.lower(), "origin": "question"}
        for n in ("Isle of Brann", "Isle of Cor")
    ]
    analysis = rules_reading("Compare the Isle of Brann and the Isle of Cor", concepts)
    table = comparison_table(analysis, concepts, ISLANDS, _text, meaning())
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[4:]}
    economy = next(line for line in rows.values() if "fishing" in line)
    assert "tourism" in economy  # each island's economy in one row
    people = next(line for line in rows.values() if "3,000" in line)
    assert "800" in people  # and their people in another


PAINTERS = [
    _src(1, "Orla Vesk", "Orla Vesk (Danish landscape painter (1821–1890)). Orla Vesk painted the coasts of Jutland."),
    _src(
        2,
        "Émil Tarrow",
        "Émil Tarrow (Belgian portrait painter (1843–1911)). Émil Tarrow painted the merchants of Ghent.",
    ),
]


def test_a_comparison_says_in_brief_what_each_thing_is_by_its_description_line():
    """The description line is where an encyclopedia gives a person's life dates; no other sentence
    of these texts says when the painters lived. A line beginning with a capital outside ASCII is a
    sentence of its own too."""
    concepts = [
        {"name": n, "query": n, "title": n, "phrase": n.lower(), "origin": "question"}
        for n in ("Orla Vesk", "Émil Tarrow")
    ]
    analysis = rules_reading("How do Orla Vesk and Émil Tarrow differ?", concepts)
    table = comparison_table(analysis, concepts, PAINTERS, _text, meaning())
    brief = next(line for line in table.splitlines() if line.startswith("| in brief |"))
    assert "(1821–1890)). [1]" in brief and "(1843–1911)). [2]" in brief
    assert "Ghent" not in brief  # the line alone, not run on into the next sentence


# --- re-ranking the web's results ------------------------------------------------------------------


def test_results_of_a_source_that_ranks_by_words_are_read_closest_in_meaning_first():
    decoy = SearchResult(
        title="Hive shop",
        url="https://a.example/1",
        backend="t",
        text="Find your way back to our honey shop: hive tools, bee suits and jars on sale.",
    )
    answer = SearchResult(
        title="Forager orientation",
        url="https://a.example/2",
        backend="t",
        text="Honeybee foragers navigate home by the sun's position, polarized light and a waggle dance.",
    )
    query = "How do honey bees find their way back to the hive?"
    assert [r.title for r in reranked(query, [decoy, answer], meaning())][0] == "Forager orientation"
    assert [r.title for r in reranked(query, [answer, decoy], meaning())][0] == "Forager orientation"


# --- the answer paragraph ----------------------------------------------------------------------------

QUAY = [
    _src(
        1,
        "Tavel Quay",
        "The Tavel Quay is a stone quay in the harbour of Brisk, the largest port town of the Tavel coast. "
        "It was paved with granite from the quarries of Norland. "
        "Fishing boats unload there every morning.",
    )
]


def _one_subject(name: str) -> list[dict]:
    return [{"name": name, "query": name, "title": None, "phrase": name.lower(), "origin": "question"}]


def test_the_subjects_name_does_not_make_its_definition_the_closest_sentence():
    """Every sentence about the quay is about the quay: compared with its name left out, the sentence
    that answers what is asked of it comes first, not the one that names it most fully."""
    question = "What stone was the Tavel Quay paved with?"
    concepts = _one_subject("Tavel Quay")
    picks = answer_picks(rules_reading(question, concepts), concepts, QUAY, _text, meaning())
    assert "granite" in picks[0].sentence, [p.sentence for p in picks]


BELL = [
    _src(
        1,
        "Hollin bell",
        "The Hollin bell hangs in the tower of Hollin church. "
        "It was cast in 1712 by the founder Abel Rudd. "
        "It was first rung at the miller's wedding in 1713. "
        "After its clapper was replaced, it was first rung again in 1951. "
        "The tower was rebuilt in 1890.",
    )
]


def test_a_sentence_about_as_close_as_the_closest_goes_with_it():
    """Two sentences answer "when was it first rung" about equally well in meaning (the first ringing,
    and the first after a repair): both are given, each cited; a sentence further off is not."""
    question = "When was the Hollin bell first rung?"
    concepts = _one_subject("Hollin bell")
    picks = answer_picks(rules_reading(question, concepts), concepts, BELL, _text, meaning())
    said = [p.sentence for p in picks]
    assert len(said) == 2 and any("1713" in s for s in said), said
    assert not any("1890" in s or "1712" in s for s in said)  # the rebuilding and the casting are further off


def test_a_thing_asked_for_is_answered_though_no_sentence_names_one():
    """ "What method ..." wants a thing, which need not be a name: the closest sentence answers."""
    source = _src(
        1,
        "Orla ferry",
        "The Orla ferry carries cars across the sound. "
        "Its hull is kept from rusting by zinc anodes bolted below the waterline.",
    )
    question = "What method keeps the hull of the Orla ferry from rusting?"
    concepts = _one_subject("Orla ferry")
    text, picks = answer_paragraph(rules_reading(question, concepts), concepts, [source], _text, meaning())
    assert "zinc anodes" in text and "Not found" not in text, text


class _Gazetteer:
    """A backend of three entries, found in the order given: the town whose sentence names rivers
    and the place asked of comes first."""

    DOCS = {
        "Marrow": (
            "Town in Delland",
            "Marrow is a market town in Delland. At Marrow the rivers Ost and Vell meet before they flow past Pellam.",
        ),
        "Ost": ("River in Delland", "The Ost is a river of Delland. The Ost flows past Pellam to the sea."),
    }

    def search(self, query: str, k: int) -> list[SearchResult]:
        return [
            SearchResult(title=t, url=f"https://example.org/{t}", backend="t", text=text)
            for t, (_, text) in self.DOCS.items()
        ][:k]

    def description(self, title: str) -> str:
        return self.DOCS[title][0]


def test_a_described_subject_is_of_the_kind_its_own_description_says():
    """ "Which river flows past Pellam?": the town's sentence names rivers and Pellam, but the town is
    no river; the river's description says it is one."""
    found = described_subject("river flow past pellam", _Gazetteer(), set(), "river", ["Pellam"])
    assert found and found["name"] == "Ost", found


HARP = [
    _src(
        1,
        "Kessa harp",
        "The Kessa harp is a stringed instrument of the Varn valley, tuned in fifths and played at weddings and "
        "harvest feasts. "
        "Its name comes from the Ostra word for reed. "
        "Players from Ostra brought it to the court.",
    )
]


def test_the_subjects_opening_sentence_joins_the_answer_when_it_holds_the_kind_asked():
    """What the subject is often says what is asked of it ("where does it come from"), though
    another sentence is closer in meaning: the opening is given with the closest."""
    question = "Where does the Kessa harp come from?"
    concepts = _one_subject("Kessa harp")
    picks = answer_picks(rules_reading(question, concepts), concepts, HARP, _text, meaning())
    said = [p.sentence for p in picks]
    assert "Ostra word" in said[0] and any("Varn valley" in x for x in said), said


def test_a_number_in_words_is_a_number():
    assert type_match("number", "A rondel has thirteen lines in three stanzas.", frozenset())
    assert not type_match("number", "It is one of the oldest forms.", frozenset())


def test_a_name_may_begin_with_a_capital_outside_ascii():
    assert type_match("person", "the bridge was designed by Ødegard Lunn.", frozenset())
    assert type_match("place", "the river rises near Łękno.", frozenset())
    assert not type_match("person", "the bridge was designed by a local engineer.", frozenset())


POET = [
    _src(
        1,
        "Orm Vale",
        "Orm Vale (Norse poet (1101–1163)). "
        "Orm Vale was a Norse poet whose sagas tell of the northern kings. "
        "His saga of the kings was first printed in 1640. "
        "He was exiled to Iceland in 1150 and came back as an old man.",
    )
]


def test_an_encyclopedia_lead_line_answers_when_the_opening_sentence_does_not():
    """The encyclopedia states life dates in its "Title (description)." line: when the opening
    sentence holds no year, that line joins the answer to "in which year did he die"."""
    question = "In which year did Orm Vale die?"
    concepts = _one_subject("Orm Vale")
    picks = answer_picks(rules_reading(question, concepts), concepts, POET, _text, meaning())
    assert any("1163" in p.sentence for p in picks), [p.sentence for p in picks]


DRIVER = [
    _src(
        1,
        "Rui Calvo",
        "Rui Calvo (Portuguese racing driver (1914–1997)). "
        "Rui Calvo was a Portuguese racing driver who raced in Grand Prix events from 1946 to 1953. "
        "He won his home race at Porto three times. "
        "After racing he ran a garage in Lisbon.",
    )
]


def test_the_lead_line_joins_the_answer_when_the_opening_sentence_holds_other_years():
    """ "raced from 1946 to 1953" holds years, and is picked as the closest; the year he died is only
    in the description line, which then joins it."""
    question = "When did Rui Calvo die?"
    concepts = _one_subject("Rui Calvo")
    picks = answer_picks(rules_reading(question, concepts), concepts, DRIVER, _text, meaning())
    assert any("1997" in p.sentence for p in picks), [p.sentence for p in picks]


def test_a_description_line_in_the_answer_takes_no_room_from_its_sources_section():
    """A section quotes three sentences of its source, less those the answer quotes; the
    description line is no sentence of the text (sections never quote it)."""
    text = (
        "Rui Calvo (Portuguese racing driver (1914–1997)). "
        "Rui Calvo was a Portuguese racing driver who raced in Grand Prix events from 1946 to 1953. "
        "Rui Calvo won his home race at Porto three times. "
        "After racing, Rui Calvo ran a garage in Lisbon for forty years."
    )
    src = {"key": "k1", "id": 1, "title": "Rui Calvo", "url": "https://example.org/1", "snippet": text}
    concept = _one_subject("Rui Calvo")[0]
    state = {"question": "When did Rui Calvo die?", "concepts": [concept], "evidence": [src]}
    report = write_extractive(state, [(src, 1.0)], Context(model="local", search="wiki", writer="extractive"))
    answer, section = report.split("## Answer", 1)[1].split("## Rui Calvo", 1)
    assert "(1914–1997)" in answer
    assert "Porto" in section and "Lisbon" in section


# --- reading the question: which thing a name is, which things it offers, where it asks ------------


def test_a_name_with_several_articles_is_read_as_the_one_closest_to_the_question():
    """No word of these questions is in one reading's text and not the other's: meaning decides."""
    wiki, words_only = get_search("wiki"), get_search("wiki", embeddings="none")
    for question, meant in (
        ("Is mercury poisonous to touch?", "Mercury (element)"),
        ("Who wrote Java?", "Java (programming language)"),
    ):
        assert [c["title"] for c in extract(question, wiki)] == [meant]
        assert [c["title"] for c in extract(question, words_only)] != [meant]


def test_the_articles_a_word_heads_are_readings_of_it_when_none_is_the_word_itself():
    """ "Amazon" has no article of its own, only "Amazon (company)", "Amazons", "Amazon River"."""
    wiki = get_search("wiki")
    assert "Amazon River" in [c["title"] for c in extract("Is the Amazon wider than the Nile?", wiki)]
    assert [c["title"] for c in extract("Who started Amazon?", wiki)] == ["Amazon (company)"]


def test_a_question_that_offers_a_choice_names_both_things_it_asks_about():
    """ "born first" is a superlative, but the question names whom it asks about: no subject is
    looked up by description in their place."""
    wiki = get_search("wiki")
    question = "Who was born first, Isaac Newton or Galileo Galilei?"
    found = extract(question, wiki)
    assert [c["title"] for c in found] == ["Isaac Newton", "Galileo Galilei"]
    assert [c.name for c in rules_reading(question, found).compared] == ["Isaac Newton", "Galileo Galilei"]


def test_a_question_word_at_the_end_is_read_as_if_it_came_first():
    wiki = get_search("wiki")
    asked = "The author of Moby-Dick was born in which city?"
    language, read = language_and_reading(asked, wiki)
    assert (language, read) == ("en", "In which city was the author of Moby-Dick born?")
    assert rules_reading(asked, [], language, read).focus.kind == "place"
    assert rules_reading(asked, []).focus.kind == "place"  # as typed, its question word inside says it too
    # a relative clause and a question that already asks first stay as they are
    for question in ("Tell me about the city in which Melville was born?", "In which city was Melville born?"):
        assert fronted(question) == question


def test_a_statement_ending_in_called_asks_for_a_name():
    """ "the tall birds of the fens are called" is typed as people type a question: it is not broad."""
    asked = "the tall birds of the fens are called"
    assert fronted(asked) == "What are the tall birds of the fens called?"
    assert not rules_reading(asked, [], "en", fronted(asked)).broad
    assert rules_reading(asked, []).broad  # as typed, a topic
    assert fronted("What is the tall bird called") == "What is the tall bird called"


def test_a_choice_by_age_or_by_size_asks_for_a_year_or_a_number():
    assert answer_kind("Which is older, the Varn bridge or the Ostra gate?")[0] == "year"
    assert answer_kind("Who was born first, Orla Vesk or Émil Tarrow?")[0] == "year"
    assert answer_kind("Which lake is deeper, Lake Brann or Lake Cor?")[0] == "number"
    assert answer_kind("Which do you prefer, the Varn bridge or the Ostra gate?")[0] == "thing"


def test_a_comparisons_rows_do_not_repeat_a_sentence():
    concepts = [
        {"name": n, "query": n, "title": n, "phrase": n.lower(), "origin": "question"}
        for n in ("Orla Vesk", "Émil Tarrow")
    ]
    question = "Who was born first, Orla Vesk or Émil Tarrow?"
    table = comparison_table(rules_reading(question, concepts), concepts, PAINTERS, _text, meaning())
    cells = [c.strip() for line in table.splitlines()[4:] for c in line.split("|")[2:-1]]
    assert "Orla Vesk (Danish landscape painter (1821–1890)). [1]" in cells  # born when: the description line
    assert len(cells) == len(set(cells)), table


# --- described subjects: named by their description line -------------------------------------------


class Shelf:
    """A backend of a few invented entries, each "Title (description). Text.", ranked as listed."""

    def __init__(self, *entries: tuple[str, str]):
        self.entries = entries

    def search(self, query: str, k: int) -> list[SearchResult]:
        return [
            SearchResult(title=t, url=f"https://example.org/{i}", backend="shelf", text=x)
            for i, (t, x) in enumerate(self.entries)
        ][:k]


SCULPTORS = Shelf(
    ("Brede Lunn", "Brede Lunn (Danish sculptor (1830–1899)). Brede Lunn carved the lions of Aarhus."),
    ("Orla Vesk", "Orla Vesk (Danish painter (c. 1821 – c. 1890)). Orla Vesk painted the coasts of Jutland."),
)


def test_a_described_subject_is_found_by_its_description_line_with_a_circa_date():
    """ "Which" opens the question but is no part of a name ("Danish" is), and "c. 1821" does not end
    the line: the year stays in the sentence the description is matched with."""
    found = refine("Which Danish painter was born in 1821?", [], SCULPTORS)
    assert [c["name"] for c in found] == ["Orla Vesk"]


def test_a_described_subject_matched_by_its_description_line_is_answered_with_it():
    question = "Which Danish painter was born in 1821?"
    concept = dict(refine(question, [], SCULPTORS)[0])
    evidence = [_src(1, "Orla Vesk", SCULPTORS.entries[1][1])]
    picks = answer_picks(rules_reading(question, [concept]), [concept], evidence, _text, meaning())
    assert picks[0].sentence.startswith("Orla Vesk (Danish painter (c. 1821")  # the title and the year
    assert any(p.sentence.startswith("Orla Vesk painted") for p in picks)  # then what the painter did


def test_a_role_of_a_common_noun_is_a_description_not_a_bridge():
    """ "the process that separates salt" is described ("salt" names no one thing); "the architect of
    Hagia Sophia" would be a bridge."""
    shelf = Shelf(("Desalination", "Desalination (Process that separates salt from seawater). It is costly."))
    salt = {"name": "salt", "query": "salt", "title": None, "phrase": "salt", "origin": "question", "at": [5, 6]}
    found = refine("Name the process that separates salt from seawater.", [salt], shelf)
    assert "Desalination" in [c["name"] for c in found]
    # when no description matches, the role is followed from the thing named, which stays a subject
    chart = {"name": "chart", "query": "chart", "title": None, "phrase": "chart", "origin": "question", "at": [5, 6]}
    found = refine("Name the author of the chart.", [chart], shelf)
    assert [c["name"] for c in found] == ["chart"]


def test_a_first_name_alone_is_no_person_and_a_participle_is_no_kind():
    wiki = get_search("wiki")
    assert "Roman Polanski" not in [c["name"] for c in extract("Which Roman general crossed the Rubicon?", wiki)]
    assert answer_kind("Name the Greek sculptor born in 480 BC.") == ("person", "sculptor")


def test_a_list_ending_in_or_is_no_choice():
    question = "What is the layer found on, under and above the ground, in lakes, or in the air?"
    assert choices_of(question, ["lakes", "air"]) is None
    assert choices_of("Which is older: the Sphinx or Stonehenge?", []) == ("Sphinx", "Stonehenge")


def test_a_text_opening_with_initials_is_not_cut_after_the_first():
    text = "W. B. Tarrow (Irish poet (1865–1939)). William Butler Tarrow was an Irish poet of the sea."
    assert source_sentences(text)[0] == "W. B. Tarrow (Irish poet (1865–1939))."


def test_a_described_subject_is_of_the_kind_its_first_sentence_says_when_its_line_does_not():
    shelf = Shelf(
        ("Varn salt", "Varn salt (Pale mineral of the Varn coast). Varn salt is a mineral mined by hand."),
        ("Varn lye", "Varn lye (Highly corrosive liquid). Varn lye is an inorganic compound with the formula VL3."),
    )
    found = refine("Name an inorganic compound with the formula VL3.", [], shelf)
    assert [c["name"] for c in found] == ["Varn lye"]


def test_a_described_subject_is_no_thing_whose_first_sentence_names_the_kind_of_another():
    """ "an epic novel by the Danish author ..." says what the novel is (a novel), not an author."""
    shelf = Shelf(
        ("The Long Sea", "The Long Sea (Novel). The Long Sea is an epic novel by the Danish author Orla Vesk."),
        ("Orla Vesk", "Orla Vesk (Writer). Orla Vesk is a Danish author who wrote an epic novel."),
    )
    found = refine("Name the Danish author of an epic novel.", [], shelf)
    assert [c["name"] for c in found] == ["Orla Vesk"]


class Atlas:
    """A backend of invented places, with titles and short descriptions (what a linker reads)."""

    ENTRIES = {
        "Dune": "River in Valdor",
        "Cortha": "Capital city of Valdor",
        "Valdor": "Country in the north",
        "Varne Light": "Lighthouse in Cortha",
    }

    def titles(self) -> list[str]:
        return list(self.ENTRIES)

    def link_texts(self) -> list[str]:
        return [f"{t} {d}" for t, d in self.ENTRIES.items()]

    def description(self, title: str) -> str:
        return self.ENTRIES.get(title, "")

    def describe(self, title: str) -> str:
        return self.description(title)


def test_the_thing_a_place_is_in_is_reached_through_where_and_is_of_the_kind_asked():
    """ "the country where the Varne Light stands": a hop to a country, and of the three names its
    text gives (a river, a city, a country), the one described as a country."""
    question = "Which language is spoken across the country where the Varne Light stands?"
    hops = hops_of(question, [{"name": "Varne Light", "phrase": "varne light"}])
    assert [h.relation for h in hops] == ["country"]
    text = "The Varne Light is a lighthouse on the river Dune near Cortha, the largest port of the nation of Valdor."
    subject = {"name": "Varne Light", "title": "Varne Light"}
    found = find_bridge(hops[0], subject, text, {"varne", "light", "language"}, meaning(), Atlas())
    assert found and found["name"] == "Valdor", found


def test_a_name_typed_half_in_lower_case_is_no_kind_of_answer():
    """ "which movie harbour Dusk based on" reads "dusk" as the noun after "which"; a phrase with a
    capital in it is a name, kept as the subject."""
    dusk = {"name": "Harbour Dusk", "query": "Harbour Dusk", "title": "Harbour Dusk", "phrase": "harbour dusk"}
    found = refine("who was the movie harbour Dusk based on", [dusk | {"origin": "question", "at": [4, 6]}])
    assert [c["name"] for c in found] == ["Harbour Dusk"]


def test_a_described_subject_is_what_its_description_says_before_any_place_or_part():
    """ "Island country in the Varn Ocean" is a country, an "ocean-going fish" no ocean; a bare "species
    of heron" is a heron."""
    shelf = Shelf(
        ("Varn seabass", "Varn seabass (Fish). Varn seabass is an ocean-going fish that lies west of Tarsland."),
        (
            "Skarv",
            "Skarv (Island country in the Varn Ocean). Skarv is an island country in the ocean west of Tarsland.",
        ),
        ("Varn Ocean", "Varn Ocean (Ocean west of Tarsland). The Varn Ocean is the ocean west of Tarsland."),
    )
    found = refine("Which ocean lies west of Tarsland?", [], shelf)
    assert [c["name"] for c in found] == ["Varn Ocean"]
    herons = Shelf(
        ("Salt marsh", "Salt marsh (Wetland of the Varn coast). The salt marsh is a wetland where herons nest."),
        ("Tall wader", "Tall wader (Species of heron). The tall wader nests in salt marshes."),
    )
    found = described_subject("heron nests salt marshes", herons, set(), noun="heron")
    assert found is not None and found["name"] == "Tall wader"


def test_a_place_asked_for_need_not_be_a_name():
    """ "Where does it go" is answered by "into the marsh pools", a place no capital marks, not by a
    sentence whose only name is a person's."""
    source = _src(
        1,
        "Varn eel",
        "The Varn eel is a fish of slow rivers, first described by Orla Vesk. "
        "When it leaves the estuary, the Varn eel swims into the marsh pools to spawn.",
    )
    question = "Where does the Varn eel head once it leaves the estuary?"
    concepts = _one_subject("Varn eel")
    text, picks = answer_paragraph(rules_reading(question, concepts), concepts, [source], _text, meaning())
    assert "marsh pools" in text, text
    assert type_match("place", "The eel swims into the marsh pools.", frozenset({"eel", "swims"}))
    assert not type_match("place", "The eel swims.", frozenset({"eel", "swims"}))


def test_a_sentence_is_read_as_about_its_source_when_the_question_names_several_things():
    """ "it was accepted on 3 May 1722" is the charter's (its source's title says so), though another
    source says "adopted by the Orla Guild" in the question's own words."""
    evidence = [
        _src(1, "Orla Guild", "The Orla Guild is a society of glassmakers in Tarsby."),
        _src(2, "Tarsby Treaty", "The Tarsby Treaty was adopted by the Orla Guild assembly on 9 June 1801."),
        _src(
            3,
            "Varn Charter",
            "The Varn Charter is a document that sets out the rights of glassmakers. "
            "Drafted by a committee of masters, it was accepted at the Tarsby hall on 3 May 1722.",
        ),
    ]
    concepts = _one_subject("Orla Guild") + _one_subject("Varn Charter")
    question = "When did the Orla Guild adopt the Varn Charter?"
    text, _ = answer_paragraph(rules_reading(question, concepts), concepts, evidence, _text, meaning())
    assert "3 May 1722" in text, text
    assert "1801" not in text or text.index("1722") < text.index("1801"), text  # alone, or first


def test_the_kind_of_a_named_thing_before_its_name_is_no_hop():
    """ "the city of Cortha" is Cortha, which its description says is a city; "the capital of Valdor"
    is another place, reached from Valdor (a country)."""
    evidence = [
        _src(1, "Cortha", "Cortha is the largest port of Valdor, on the river Dune."),
        _src(2, "Valdor", "Valdor is a country in the north. Its capital and largest port is Cortha."),
    ]
    for question, name, found in (
        ("Which river flows through the city of Cortha?", "Cortha", []),
        ("Which river flows through the capital of Valdor?", "Valdor", ["Cortha"]),
    ):
        concepts = [_one_subject(name)[0] | {"title": name}]
        analysis = rules_reading(question, concepts)
        assert analysis.hops, question
        assert [c["name"] for c in bridges(analysis, concepts, evidence, _text, meaning(), Atlas())] == found


def test_a_title_before_a_name_ends_no_sentence():
    text = "Orla Vesk led a performance of the St. Matthew Passion in 1829. Dr. Brede Lunn sang in it."
    assert source_sentences(text) == [
        "Orla Vesk led a performance of the St. Matthew Passion in 1829.",
        "Dr. Brede Lunn sang in it.",
    ]


def test_a_role_that_is_a_kind_of_thing_is_filled_only_by_a_thing_of_that_kind():
    """ "the capital of Valdor" is no region, though the sentence nearest the role names one."""
    hop = hops_of("What river flows through the capital of Valdor?", [{"name": "Valdor", "phrase": "valdor"}])[0]
    subject = {"name": "Valdor", "title": "Valdor"}
    only_region = "Valdor is a country in the north. Its capital region is Varne Light."
    assert find_bridge(hop, subject, only_region, {"river", "valdor"}, meaning(), Atlas()) is None
    both = "Valdor is a country in the north. Its capital region is Varne Light; its capital is Cortha."
    found = find_bridge(hop, subject, both, {"river", "valdor"}, meaning(), Atlas())
    assert found and found["name"] == "Cortha", found


def test_each_thing_compared_is_answered_from_its_own_sources_as_they_read():
    """The sentences of one thing's sources are all about it: its title is not put before each (as it
    is where sources of several things are pooled), which would make a sentence of another year seem
    as close as the description line that holds the year of birth asked."""
    evidence = [
        _src(
            1,
            "Orla Vesk",
            "Orla Vesk (Danish painter (1821–1890)). His book of sea charts, first printed in 1850, made his name.",
        ),
        _src(
            2,
            "Tam Quill",
            "Tam Quill (Scottish painter (1830–1899)). His harbour paintings, first shown in 1872, made his name.",
        ),
    ]
    concepts = [_one_subject(n)[0] | {"title": n} for n in ("Orla Vesk", "Tam Quill")]
    picks = answer_picks(
        rules_reading("When were Orla Vesk and Tam Quill born?", concepts), concepts, evidence, _text, meaning()
    )
    assert [p.sentence[:30] for p in picks] == ["Orla Vesk (Danish painter (182", "Tam Quill (Scottish painter (1"], (
        picks
    )


def test_the_verb_after_which_and_its_noun_is_no_part_of_the_thing_asked():
    from deepresearch.understanding.embedded.question import answer_kind

    # no other verb in the question: the word after the noun says what the thing does
    assert answer_kind("Which glacier feeds the Orla lakes?")[1] == "glacier"
    assert answer_kind("which guild builds the Tarsk barges")[1] == "guild"
    # a verb after the phrase, or elsewhere in the question: every word of the phrase names the thing
    assert answer_kind("which dye plants coloured the Harl tapestries?")[1] == "plant"
    assert answer_kind("what are the guild members names of the Tarsk barges")[1] == "name"
