"""A quoted sentence keeps its source's subject (deepresearch/report/subjects.py).

On page 4 of the LaTeX team's fntguide.pdf, "It can be typeset from the LATEX file source2e.tex
..." speaks of The LATEX 2ε Sources, named sentences before. A report once printed it as
"LaTeX2ε font selection can be typeset from ..." (the document's title put in place of "It")
and the citation check called that supported. Read here from the real manual.
"""

from __future__ import annotations

import pytest
from pypdf import PdfReader

from deepresearch.config import Context
from deepresearch.report.grounding import cite
from deepresearch.report.subjects import changed_subjects, dangling, subject_change, with_subject
from deepresearch.report.verify import verify_draft
from deepresearch.store import TEXTS
from deepresearch.text.urls import source_key
from tests.document_files import TEXDOCS, real_pdfs

TITLE = "LaTeX2ε font selection"  # fntguide.pdf's title
IT = "It can be typeset from the LATEX file source2e.tex in the base directory; this uses the class file ltxdoc.cls."
INDIA = (
    "India (country). India, officially the Republic of India, is a country in South Asia. "
    "It is the world's seventh-largest country by area. It has the longest coastline of the region. "
    "Its capital is New Delhi."
)


@pytest.fixture(scope="module")
def page4(tmp_path_factory) -> str:
    docs = real_pdfs(tmp_path_factory.mktemp("manuals"))
    assert (docs / "fntguide.pdf").stat().st_size == (TEXDOCS / "fntguide.pdf").stat().st_size
    return PdfReader(docs / "fntguide.pdf").pages[3].extract_text()


def test_a_pronoun_the_source_does_not_resolve_to_the_title_is_quoted_as_it_stands(page4):
    assert " ".join(IT.split()[:4]) in " ".join(page4.split())  # the page says it so
    assert with_subject(IT, TITLE, page4) == IT


def test_a_pronoun_the_source_names_gets_the_name():
    assert with_subject("It is the world's seventh-largest country by area.", "India", INDIA) == (
        "India is the world's seventh-largest country by area."
    )
    # a run of "It ..." sentences speaks of one thing: the name before the run
    assert with_subject("It has the longest coastline of the region.", "India (country)", INDIA).startswith("India has")
    assert with_subject("Its capital is New Delhi.", "India (country)", INDIA) == "India's capital is New Delhi."
    # no pronoun, nothing to replace; a sentence the text does not hold gets no name either
    assert with_subject("Items are sold here.", "Market", "Market. Items are sold here.") == "Items are sold here."
    assert with_subject("It is large.", "India", "Something else entirely.") == "It is large."


def test_the_check_finds_a_subject_the_source_does_not_give(page4):
    wrong = cite(f"{TITLE}{IT[2:]}", 1)  # as the report printed it: "LaTeX2ε font selection can be typeset ..."
    found = subject_change(wrong, page4)
    assert found is not None and found["source_subject"] == "it"
    assert found["source_sentence"].startswith("It can be typeset")
    assert subject_change(cite(IT, 1), page4) is None  # quoted as it stands
    # the source's own naming passes; another name for the same pronoun does not
    assert subject_change(cite("India is the world's seventh-largest country by area.", 2), INDIA) is None
    assert subject_change(cite("India's capital is New Delhi.", 2), INDIA) is None
    assert subject_change(cite("Pakistan is the world's seventh-largest country by area.", 2), INDIA) is not None
    # a sentence in the report's own words is no quote: its support decides
    assert subject_change(cite("New Delhi is where India is governed from.", 2), INDIA) is None

    report = f"# Q\n\n## Overview\n\n{wrong} {cite(IT, 1)}\n\n- {cite('Its capital is New Delhi.', 2)}\n"
    found = changed_subjects(report, {1: page4, 2: INDIA})
    assert [(f["source_id"], f["subject"]) for f in found] == [(1, "latex2ε font selection")]


def test_the_citation_check_reads_the_sentence_with_its_substitution(page4):
    url = "file:///docs/fntguide.pdf#page=4"
    TEXTS.put(source_key(url), page4)
    evidence = [{"id": 1, "key": source_key(url), "title": TITLE, "url": url, "snippet": page4[:50]}]
    out = verify_draft(cite(f"{TITLE}{IT[2:]}", 1) + " " + cite(IT, 1), evidence, Context())
    verdicts = [(c["sentence"][:20], c["verdict"]) for c in out["citations"]]
    assert verdicts == [(f"{TITLE}{IT[2:]}"[:20], "unsupported"), (IT[:20], "supported")]
    assert "^unverified^" in out["report"].split(IT[:20])[0]


def test_they_names_a_thing_only_when_its_source_speaks_of_it_as_many():
    """ "The Orla Wall is a series of forts. They were built ..." speaks of the forts: the Wall is
    not made the subject of "were built"; "The Velm Brothers were bakers. They ..." names them."""
    wall = "The Orla Wall is a series of forts in Brel. They were built across the old border."
    assert with_subject("They were built across the old border.", "Orla Wall", wall) == (
        "They were built across the old border."
    )
    brothers = "The Velm Brothers were a pair of bakers. They were born in Velm."
    assert with_subject("They were born in Velm.", "Velm Brothers", brothers) == "Velm Brothers were born in Velm."


def test_a_numbered_title_is_one_sentence_with_its_number():
    """'Quartet No. 3 is ...' is one sentence: the check does not read '3 is ...' as a quote whose
    subject the report changed."""
    from deepresearch.text.sentences import split_sentences

    text = "Quartet No. 3 is a string quartet by Pell Varo. It is one of the best-loved of all his works."
    report = "## Quartet\n\nQuartet No. 3 is one of the best-loved of all his works [1]."
    assert split_sentences("Quartet No. 3 is a quartet [1]. It was played in Velm.") == [
        "Quartet No. 3 is a quartet [1].",
        "It was played in Velm.",
    ]
    assert changed_subjects(report, {1: text}) == []


def test_a_longer_form_of_a_name_names_the_pronoun_after_it():
    text = "Ada Mirelle Brannock was a potter of the Varn valley. She was born near Ostrel."
    assert with_subject("She was born near Ostrel.", "Ada Brannock", text) == "Ada Brannock was born near Ostrel."
    # and the check reads the name so put as the source's: no subject changed
    assert subject_change(cite("Ada Brannock was born near Ostrel.", 1), text) is None
    assert subject_change(cite("Ida Brannock was born near Ostrel.", 1), text) is not None
    # the first word first and the last among the next few, all of them names: else quoted as it stands
    other = "Ada and Brannock were two potters. She was born near Ostrel."
    assert with_subject("She was born near Ostrel.", "Ada Brannock", other) == "She was born near Ostrel."
    far = "Ada Mirelle Sona Tiva Brannock was a potter. She was born near Ostrel."
    assert with_subject("She was born near Ostrel.", "Ada Brannock", far) == "She was born near Ostrel."


def test_a_sentence_any_of_whose_source_sentences_names_its_subject_keeps_it():
    """The description line ends as the pronoun's sentence does; the sentence quoted is the one
    whose "It" the source names, and the description line is the same subject said briefly."""
    text = (
        "Orla Vesk (Harbour town on the Varn coast). The Orla Vesk or Vesk harbour is a fishing port of "
        "four streets. It is a harbour town on the Varn coast. Boats leave it at dawn."
    )
    assert subject_change(cite("Orla Vesk is a harbour town on the Varn coast.", 1), text) is None
    found = subject_change(cite("Mara Lindqvist is a harbour town on the Varn coast.", 1), text)
    assert found is not None and found["subject"].startswith("mara lindqvist")
    # a sentence of another subject with the same end comes first: the pronoun's sentence still names it
    two = "Vesk Bay lies on the Varn coast. The Orla Vesk is a port. It lies on the Varn coast."
    assert subject_change(cite("Orla Vesk lies on the Varn coast.", 1), two) is None
    brief = "Orla Vesk (Harbour town on the Varn coast). Boats leave it at dawn."
    assert subject_change(cite("Orla Vesk is the harbour town on the Varn coast.", 1), brief) is None


def test_a_sentence_pointing_back_reads_rightly_only_after_its_own_source():
    text = "Orla Vesk (Harbour town). Orla Vesk has a reef offshore. These islets shelter the harbour. Most of it is shallow."
    for pointing in ("These islets shelter the harbour.", "Most of it is shallow."):
        assert dangling(pointing, "Orla Vesk", text)
    assert not dangling("Thistles grow on the dunes.", "Orla Vesk", text)
    assert not dangling("The reef is shallow.", "Orla Vesk", text)


def test_the_name_a_pronoun_stands_for_is_before_any_sentence_that_itself_says_she():
    text = "Mara Ada Brannock was a potter. Trained in Ostrel, she fired green jars. She was born near Vell."
    assert with_subject("She was born near Vell.", "Ada Brannock", text) == "Ada Brannock was born near Vell."
    assert subject_change(cite("Ada Brannock was born near Vell.", 1), text) is None


def test_the_check_reads_a_table_cell_whole_its_subject_and_all():
    """A cell quoting "It was paid for through the Mara J. Orlen Trust." under a name the source does
    not give it there is found: the initial's full stop does not cut the cell's subject off."""
    text = "The town built a reading room. It was paid for through the Mara J. Orlen Trust."
    row = "| funded | Orla Hall was paid for through the Mara J. Orlen Trust. [1] | not found |"
    found = changed_subjects(f"## Comparison\n\n| aspect | a | b |\n|---|---|---|\n{row}\n", {1: text})
    assert [(f["subject"], f["source_subject"]) for f in found] == [("orla hall", "it")]
