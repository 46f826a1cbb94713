"""Reports that answer the question: bridges, subjects not vocabulary, only what helps,
comparison tables, described subjects (deepresearch.research). Fake model, offline search."""

from deepresearch.config import Context
from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research import answer as answer_lib
from deepresearch.research import bridges as bridge_lib
from deepresearch.research.compare import NOT_FOUND, comparison_table
from deepresearch.tools import get_search
from deepresearch.understanding.embedded.concepts import extract
from deepresearch.understanding.embedded.reader import rules_reading
from tests.fakes import researcher
from tests.helpers import of_type, run_iterative

ZORBLAT = "When was the engineer the Zorblat Tower was named after born?"


def sim():
    """Sentences compared by meaning as the product compares them (the embedded model)."""
    return similarity_for(embedder_for("local"))


def _docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "tower.md").write_text(
        "The Zorblat Tower is a lattice tower in Vexford. "
        "The Zorblat Tower is named after the engineer Quentin Marlow, whose firm built it.\n"
    )
    (d / "marlow.md").write_text(
        "Quentin Marlow was a civil engineer from Dunmere. Marlow was born in 1820 and trained as a surveyor.\n"
    )
    for i in range(6):  # other engineers and towers: the question's words alone do not find Marlow
        (d / f"other{i}.md").write_text(
            f"The Kell Tower {i} is an engineer's tower named after a river. Its engineer was born abroad.\n"
        )
    return d


def test_a_bridge_is_found_in_the_subjects_text_and_researched_before_the_loop_completes(fake_model, tmp_path):
    spec, _ = fake_model(researcher(complete_after=1))
    ctx = Context(
        model=spec, search=f"docs:{_docs(tmp_path)}", results_per_query=1, max_iterations=3, writer="extractive"
    )
    final, events = run_iterative(ctx, ZORBLAT)
    bridges = [e for e in of_type(events, "concepts") if e.get("origin") == "bridge"]
    assert [b["concepts"] for b in bridges] == [["Quentin Marlow"]]
    assert "named after the engineer Quentin Marlow" in bridges[0]["sentence"]
    # the loop went on to search the bridge by name (docs have no titles) before it was complete
    searched = [e["query"] for e in of_type(events, "searching")]
    assert "Quentin Marlow" in searched
    judged = of_type(events, "judging")
    assert judged[0]["missing"] == ["Quentin Marlow"] and judged[-1]["missing"] == []
    assert final["stopped_by"] == "complete" and final["usage"]["iterations"] == 2
    answer = final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "1820" in answer and "Quentin Marlow" in answer


def test_without_a_relation_there_is_no_bridge():
    concepts = [
        {
            "name": "Zorblat Tower",
            "query": "Zorblat Tower",
            "title": None,
            "phrase": "zorblat tower",
            "origin": "question",
        }
    ]
    evidence = [
        {
            "id": 1,
            "key": "a",
            "title": "tower.md",
            "text": "The Zorblat Tower is named after the engineer Quentin Marlow.",
        }
    ]
    text = lambda s: s["text"]  # noqa: E731
    assert (
        bridge_lib.bridges(rules_reading("Where is the Zorblat Tower?", concepts), concepts, evidence, text, sim())
        == []
    )
    found = bridge_lib.bridges(rules_reading(ZORBLAT, concepts), concepts, evidence, text, sim())
    assert [c["name"] for c in found] == ["Quentin Marlow"] and found[0]["origin"] == "bridge"


def test_a_bridge_reads_no_text_past_the_subjects_first_two():
    """The bridge is looked for in the subject's first two sources: the texts after them are
    not read (nor stemmed) at every gap check."""
    concepts = [
        {
            "name": "Zorblat Tower",
            "query": "Zorblat Tower",
            "title": None,
            "phrase": "zorblat tower",
            "origin": "question",
        }
    ]
    texts = [
        "A quarry near the coast.",
        "The Zorblat Tower is tall.",
        "The Zorblat Tower stands on a hill.",
        "The Zorblat Tower is named after the engineer Quentin Marlow.",
        "The Zorblat Tower has a bell.",
    ]
    evidence = [{"id": i + 1, "key": str(i), "title": f"page {i}", "text": t} for i, t in enumerate(texts)]
    read: list[str] = []

    def text(s):
        read.append(s["key"])
        return s["text"]

    assert (
        bridge_lib.bridges(rules_reading(ZORBLAT, concepts), concepts, evidence, text, sim()) == []
    )  # named only in the third one
    assert set(read) == {"0", "1", "2"}


def test_a_bridge_on_the_encyclopedia_links_to_its_article():
    wiki = get_search("wiki")
    q = "Where was the emperor who had the Taj Mahal built buried?"
    concepts = extract(q, wiki)
    assert [c["title"] for c in concepts] == ["Taj Mahal"]
    evidence = [{"id": 1, "key": "t", "title": r.title, "text": r.text} for r in wiki.search("Taj Mahal", 1)]
    found = bridge_lib.bridges(rules_reading(q, concepts), concepts, evidence, lambda s: s["text"], sim(), wiki)
    assert [c["title"] for c in found] == ["Shah Jahan"]  # not "Mughal Empire", also named in that sentence


def test_generic_words_aspects_and_the_answers_kind_are_no_concepts():
    wiki = get_search("wiki")
    names = lambda q: [c["name"] for c in extract(q, wiki)]  # noqa: E731
    assert names("Where did Don Quixote's author die?") == ["Don Quixote"]  # not "author"
    assert names("Which museum shows Guernica to visitors?") == ["Guernica (Picasso)"]  # not "Museum"
    assert names("How many times was Marie Curie given a Nobel Prize?") == ["Marie Curie", "Nobel Prize"]
    assert names("Compare the origins and beliefs of Buddhism and Hinduism") == ["Buddhism", "Hinduism"]
    # a title that opens with a stop word, written as a name
    assert names("When was The Wealth of Nations published?") == ["The Wealth of Nations"]
    assert names("How do honey bees navigate?") == ["Western honey bee"]  # a compound stays whole


def test_a_described_subject_is_found_by_its_description():
    wiki = get_search("wiki")
    found = extract("How heavy is the largest planet in the Solar System?", wiki)
    assert [(c["name"], c["origin"]) for c in found] == [("Jupiter", "described")]
    assert "largest" in found[0]["sentence"] and found[0]["description"].startswith("largest planet")
    found = extract("How fast can the fastest land animal run?", wiki)
    assert [c["name"] for c in found] == ["Cheetah"]  # not "Land", "Animal"


def test_the_described_subject_answers_in_a_run(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, _ = run_iterative(
        Context(model=spec, search="wiki", writer="extractive"),
        "Which planet does the Solar System's largest moon orbit?",
    )
    answer = final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "Jupiter" in answer
    assert [s["title"] for s in final["sources"]] == ["Ganymede (moon)"]


def test_off_topic_sources_stay_uncited(fake_model):
    """The raw question's search brings articles that merely share words: they are retrieved and
    checked, but a source enters the report only when it covers a concept or answers."""
    spec, _ = fake_model(researcher(complete_after=1))
    final, _ = run_iterative(
        Context(model=spec, search="wiki", writer="extractive"), "When did work on the Berlin Wall start?"
    )
    retrieved = {s["title"] for s in final["evidence"]}
    cited = [s["title"] for s in final["sources"]]
    assert len(retrieved) > 2 and cited == ["Berlin Wall"]
    assert "1961" in final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]


def _src(i, title, text):
    return {"id": i, "key": title, "title": title, "text": text}


def test_the_comparison_table_has_a_row_per_aspect_and_says_not_found():
    concepts = [
        {
            "name": "Alpha Bridge",
            "title": None,
            "phrase": "alpha bridge",
            "query": "Alpha Bridge",
            "origin": "question",
        },
        {"name": "Beta Bridge", "title": None, "phrase": "beta bridge", "query": "Beta Bridge", "origin": "question"},
    ]
    evidence = [
        _src(
            1,
            "Alpha Bridge",
            "The Alpha Bridge is a stone bridge. The Alpha Bridge was built in 1820 by the river guild.",
        ),
        _src(2, "Beta Bridge", "The Beta Bridge is a steel bridge over the bay. It carries two railway lines."),
    ]
    table = comparison_table(
        rules_reading("When were the Alpha Bridge and the Beta Bridge built?", concepts),
        concepts,
        evidence,
        lambda s: s["text"],
        sim(),
    )
    lines = table.splitlines()
    assert lines[0] == "## Comparison" and lines[2] == "| aspect | Alpha Bridge | Beta Bridge |"
    row = [c.strip() for c in lines[4].strip("|").split("|")]
    assert row[0] == "built" and "1820" in row[1] and row[1].endswith("[1]") and row[2] == NOT_FOUND


def test_a_comparison_cell_is_a_sentence_as_its_source_says_it_never_one_opening_with_a_pronoun():
    # a cell is read by itself: "It was built in 1905" would not say what; "Beta Bridge was built
    # in 1905" would give the sentence a subject its source does not write there
    concepts = [
        {"name": n, "title": None, "phrase": n.lower(), "query": n, "origin": "question"}
        for n in ("Alpha Bridge", "Beta Bridge")
    ]
    texts = {
        "Alpha Bridge": "The Alpha Bridge is a stone bridge. The Alpha Bridge was built in 1820 by the river guild. "
        "The Alpha Bridge carries one railway line across the river.",
        "Beta Bridge": "The Beta Bridge is a steel bridge over the bay. It was built in 1905 by the harbour board. "
        "It carries two railway lines across the bay.",
    }
    evidence = [_src(i, t, x) for i, (t, x) in enumerate(texts.items(), 1)]
    table = comparison_table(
        rules_reading("When were the Alpha Bridge and the Beta Bridge built?", concepts),
        concepts,
        evidence,
        lambda s: s["text"],
        sim(),
    )
    rows = [[c.strip() for c in line.strip("|").split("|")][1:] for line in table.splitlines()[4:]]
    assert rows and all(len(r) == 2 for r in rows)
    for row in rows:
        for cell, text in zip(row, texts.values()):
            if cell != NOT_FOUND:
                said = cell.rsplit(" [", 1)[0]
                assert said in text and not said.startswith(("It ", "Beta Bridge", "Alpha Bridge")), cell
    assert "1905" not in table


def test_a_comparison_report_opens_with_one_answer_per_thing_and_a_table(fake_model):
    spec, _ = fake_model(researcher(complete_after=1))
    final, _ = run_iterative(
        Context(model=spec, search="wiki", writer="extractive"), "When were Mozart and Beethoven born?"
    )
    report = final["report"]
    answer = report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "1756" in answer and "1770" in answer
    table = report.split("## Comparison", 1)[1].split("\n## ", 1)[0]
    assert "| aspect | Wolfgang Amadeus Mozart | Ludwig van Beethoven |" in table
    assert report.index("## Answer") < report.index("## Comparison") < report.index("## Wolfgang Amadeus Mozart")


def test_the_answer_paragraph_says_what_was_not_found():
    concepts = [
        {"name": "Alpha Bridge", "title": None, "phrase": "alpha bridge", "query": "Alpha Bridge", "origin": "question"}
    ]
    evidence = [_src(1, "Alpha Bridge", "The Alpha Bridge is a stone bridge over the river Lune.")]
    text, picks = answer_lib.answer_paragraph(
        rules_reading("What year was the Alpha Bridge built?", concepts), concepts, evidence, lambda s: s["text"], sim()
    )
    assert picks == [] and "**Not found:**" in text and "a year" in text


def test_a_model_writes_the_answer_paragraph_grounded_like_all_model_text(fake_model):
    """With a capable model the model writes the answer paragraph (the prompt asks for it);
    grounding keeps its supported sentences and drops the invented ones."""

    def respond(kind, prompt, n):
        if kind == "text" and "## Answer" in prompt:
            return (
                "# Berlin Wall\n\n## Answer\n\nConstruction of the Berlin Wall was commenced by the government "
                "of the GDR on 13 August 1961 [1]. The wall was painted gold by Napoleon in 1802 [1].\n\n"
                "## Background\n\nThe Berlin Wall was a guarded concrete barrier that encircled West Berlin "
                "from 1961 to 1989 [1]."
            )
        return researcher(complete_after=1)(kind, prompt, n)

    spec, model = fake_model(respond)
    final, _ = run_iterative(
        Context(model=spec, search="wiki", writer="single"), "When did work on the Berlin Wall start?"
    )
    asked = [c["prompt"] for c in model.calls if c["kind"] == "text"]
    assert any("'## Answer' with a short paragraph that states the answer" in p for p in asked)
    answer = final["report"].split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "13 August 1961" in answer and "Napoleon" not in final["report"]


def test_a_sentence_about_another_thing_of_the_same_kind_does_not_answer_for_the_one_reached():
    """The writer of The Salt Orchard is Mara Lindqvist, whose own text nobody retrieved. Another
    novelist's birthplace is no answer; a sentence that names Lindqvist is."""
    question = "Where was the writer of The Salt Orchard born?"
    concepts = [
        {
            "name": "The Salt Orchard",
            "title": "The Salt Orchard",
            "phrase": "salt orchard",
            "query": "The Salt Orchard",
            "origin": "question",
        },
        {
            "name": "Mara Lindqvist",
            "title": None,
            "phrase": "mara lindqvist",
            "query": "Mara Lindqvist",
            "origin": "bridge",
            "sentence": "The Salt Orchard is a novel by Mara Lindqvist.",
            "via": "The Salt Orchard",
            "source": "The Salt Orchard",
        },
    ]
    orchard = _src(1, "The Salt Orchard", "The Salt Orchard is a novel by Mara Lindqvist. It is set on a coast.")
    other = _src(2, "Oren Vasse", "Oren Vasse was a novelist. He was born in the town of Kelby on the Esk.")
    analysis = rules_reading(question, concepts)
    text, _ = answer_lib.answer_paragraph(analysis, concepts, [orchard, other], lambda s: s["text"], sim())
    assert "Mara Lindqvist" in text and "Kelby" not in text
    named = _src(3, "Harrow Bay", "Harrow Bay is a fishing port. Lindqvist was born in Harrow Bay in 1901.")
    text, _ = answer_lib.answer_paragraph(analysis, concepts, [orchard, other, named], lambda s: s["text"], sim())
    assert "Lindqvist was born in Harrow Bay" in text and "Kelby" not in text


def test_a_sentence_whose_pronoun_the_report_cannot_name_follows_the_sentence_it_continues():
    varo = _src(
        2,
        "Pell Varo",
        "Pell Varo was a craftsman of the coast. Trained as a glassblower, he founded the Vellmark works.",
    )
    dunn = _src(1, "Vellmark", "Vellmark is a glassworks in Ostrel.")
    he = answer_lib.Pick("Trained as a glassblower, he founded the Vellmark works.", varo, 0.5, True)
    head = answer_lib.Pick("Pell Varo was a craftsman of the coast.", varo, 0.5, True)
    first = answer_lib.Pick("Vellmark is a glassworks in Ostrel.", dunn, 0.5, True)
    text_of = lambda s: s["text"]  # noqa: E731
    said = [p.sentence for p in answer_lib.with_antecedents([first, he], text_of)]
    assert said == [first.sentence, head.sentence, he.sentence]  # "he" would read as Vellmark's
    said = [p.sentence for p in answer_lib.with_antecedents([head, first, he], text_of)]
    assert said == [head.sentence, he.sentence, first.sentence]  # right after it, not twice
    assert [p.sentence for p in answer_lib.with_antecedents([first, head, he], text_of)] == [
        first.sentence,
        head.sentence,
        he.sentence,
    ]
    # its sentence picked later is quoted once, before it
    said = [p.sentence for p in answer_lib.with_antecedents([he, first, head], text_of)]
    assert said == [head.sentence, he.sentence, first.sentence]
