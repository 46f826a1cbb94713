"""A docs folder of documents: PDF, Word, EPUB and OpenDocument files read into pages and
sections with their own metadata, unreadable files skipped with a line each, the folder's
index kept between runs, and a page cited as the page (its text is what the citation check
reads, what the bibliography and the web page show).

The files are made here (tests/document_files.py); tests/test_documents_real.py runs the CLI
and the server on real manuals.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sqlite3

import pytest

from deepresearch.config import Context
from deepresearch.tools.docs import DocsSearch
from deepresearch.tools.docs_index import cache_folder
from tests.document_files import corrupt_pdf, docx_file, epub_file, odt_file, pdf

WHEN = datetime.datetime(2021, 3, 15, 12, 0)
PAGES = [
    "Quokkas live on Rottnest Island near Perth.",
    "The axolotl regrows a lost limb within a few weeks.\nIts gills are feathery.",
    "Lighthouses guided ships along rocky coasts.",
]


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    return docs


def report_pdf(folder):
    return pdf(folder / "Report.pdf", PAGES, title="Annual Report on Animals", author="Jane Smith; Ali Khan", when=WHEN)


# --- reading ------------------------------------------------------------------------------------


def test_a_pdf_is_read_page_by_page_with_its_own_metadata(folder):
    report_pdf(folder)
    (folder / "notes.md").write_text("Tomatoes need sun.\n")
    [hit] = DocsSearch(folder).search("axolotl regrows limb", 1)
    assert hit.url == (folder / "Report.pdf").resolve().as_uri() + "#page=2"  # as a PDF viewer opens a page
    assert hit.text == PAGES[1]  # that page's text, and only it
    assert hit.title == "Annual Report on Animals"
    assert hit.meta == {
        "type": "document",
        "file": "Report.pdf",
        "modified": hit.meta["modified"],
        "page": "2",
        "year": "2021",
        "authors": [{"family": "Smith", "given": "Jane"}, {"family": "Khan", "given": "Ali"}],
    }
    # another page of the same file is another source; a text file is one source, as before
    assert {r.url.rsplit("/", 1)[1] for r in DocsSearch(folder).search("lighthouses tomatoes", 3)} == {
        "Report.pdf#page=3",
        "notes.md",
    }


def test_a_pdf_writers_placeholders_are_no_metadata(folder):
    pdf(folder / "plain.pdf", ["Owls hunt at night."])  # reportlab's own: untitled, anonymous
    [hit] = DocsSearch(folder).search("owls", 1)
    assert hit.title == "plain.pdf" and "authors" not in hit.meta and hit.meta["page"] == "1"


def test_word_files_are_cut_at_their_pages_or_under_their_headings(folder):
    docx_file(
        folder / "notes.docx",
        title="Field notes",
        author="Ruiz, Ana",
        created=WHEN,
        blocks=[
            ("h1", "Habitat"),
            ("p", "Axolotls live in the lakes of Xochimilco."),
            ("break", ""),
            ("h1", "Regeneration"),
            ("p", "An axolotl regrows a lost limb."),
            ("table", ["limb", "six weeks"]),
        ],
    )
    docx_file(
        folder / "quokka.docx",
        blocks=[
            ("h1", "Quokkas"),
            ("p", "Quokkas live on Rottnest Island."),
            ("h2", "Diet"),
            ("p", "Quokkas eat grasses and leaves."),
        ],
    )
    search = DocsSearch(folder)
    [page] = search.search("limb six weeks", 1)
    assert page.url.endswith("notes.docx#page=2") and page.meta["page"] == "2"
    assert "limb | six weeks" in page.text and "Xochimilco" not in page.text
    assert page.meta["authors"] == [{"family": "Ruiz", "given": "Ana"}] and page.meta["year"] == "2021"
    [section] = search.search("grasses leaves", 1)
    assert section.url.endswith("quokka.docx#section=2") and section.meta["section"] == "Diet"
    assert section.text == "Diet\n\nQuokkas eat grasses and leaves." and section.title == "quokka.docx"
    assert "authors" not in section.meta and "year" not in section.meta  # python-docx's template: no metadata


def test_word_keeps_the_pages_its_layout_recorded(folder):
    """A file Word saved records where its pages broke (w:lastRenderedPageBreak): those pages,
    not the explicit breaks, are the pages a reader sees."""
    docx_file(
        folder / "laid.docx",
        blocks=[
            ("p", "Alpha paragraph about herons."),
            ("break", ""),
            ("p", "Beta paragraph about egrets."),
            ("p", "Gamma paragraph about storks."),
        ],
        rendered_breaks=(3,),
    )
    search = DocsSearch(folder)
    assert search.search("egrets", 1)[0].meta["page"] == "1"  # the explicit break was not where Word broke
    assert search.search("storks", 1)[0].meta["page"] == "2"


def test_opendocument_and_epub_files(folder):
    odt_file(
        folder / "tides.odt",
        '<text:h text:outline-level="1">Tides</text:h><text:p>The Bay of Fundy has the<text:s text:c="2"/>highest '
        "tides.</text:p><text:p>A tide rises sixteen metres.<text:soft-page-break/>The second page speaks of "
        "mudflats.</text:p><table:table><table:table-row><table:table-cell><text:p>Minas Basin</text:p>"
        "</table:table-cell><table:table-cell><text:p>16 m</text:p></table:table-cell></table:table-row></table:table>",
        "<dc:title>Tides of Fundy</dc:title><meta:initial-creator>Marie Leblanc</meta:initial-creator>"
        "<meta:creation-date>2020-09-01T10:00:00</meta:creation-date>",
    )
    epub_file(
        folder / "book.epub",
        [
            ("ch 2.xhtml", "<h1>Introduction</h1><p>Brittany has many lighthouses.</p>"),
            ("ch1.xhtml", "<h1>Ar Men</h1><p>Ar Men lighthouse took fourteen years to build.</p>"),
        ],
        title="Lighthouses of Brittany",
        creators=("Yann Kervella",),
        date="2015-06-01",
    )
    search = DocsSearch(folder)
    [odt] = search.search("mudflats Minas", 1)
    assert (
        odt.url.endswith("tides.odt#page=2") and odt.text == "The second page speaks of mudflats.\n\nMinas Basin | 16 m"
    )
    assert (odt.title, odt.meta["authors"], odt.meta["year"]) == (
        "Tides of Fundy",
        [{"family": "Leblanc", "given": "Marie"}],
        "2020",
    )
    [first] = search.search("highest tides", 1)
    assert "has the  highest tides" in first.text and first.meta["page"] == "1"  # text:s c=2 is two spaces
    [book] = search.search("fourteen years build", 1)
    assert book.url.endswith("book.epub#section=2") and book.meta["section"] == "Ar Men"  # the spine's order
    assert (book.title, book.meta["authors"], book.meta["year"]) == (
        "Lighthouses of Brittany",
        [{"family": "Kervella", "given": "Yann"}],
        "2015",
    )


# --- files that cannot be read --------------------------------------------------------------


def test_each_unreadable_file_is_one_line_and_the_rest_is_searched(folder):
    good = report_pdf(folder)
    corrupt_pdf(folder / "corrupt.pdf", good)
    pdf(folder / "locked.pdf", ["Secret plans."], password="s3cret")
    pdf(folder / "scan.pdf", ["", ""])  # pages with no text layer
    (folder / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)  # Word's encrypted package
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    epub_file(folder / "drm.epub", [("c.xhtml", "<p>Locked words.</p>")], encrypted=("OEBPS/text/c.xhtml",))
    with open(folder / "huge.pdf", "wb") as f:  # sparse: larger than the limit, nothing written
        f.truncate(100_000_001)
    search = DocsSearch(folder)
    lines = {line.rsplit("/", 1)[1] for line in search.skipped}
    assert lines == {
        "corrupt.pdf: not a readable PDF (corrupt or damaged)",
        "locked.pdf: encrypted (it needs a password)",
        "scan.pdf: no text layer (a scanned document? run OCR on it first)",
        "old.docx: encrypted (it needs a password), or not a .docx file",
        "broken.docx: not a readable document (corrupt, or not a zip package)",
        "drm.epub: encrypted (DRM)",
        "huge.pdf: larger than 100 MB",
    }, search.skipped
    assert len(search.skipped) == 7 and [p.name for p in search.files] == ["Report.pdf"]
    assert search.search("axolotl", 1)[0].url.endswith("Report.pdf#page=2")
    # the next run knows them from its cache, and says so again, a line each
    again = DocsSearch(folder)
    assert sorted(again.skipped) == sorted(search.skipped) and again.index.read_pages == 0


def test_a_folder_with_no_readable_document_is_one_error(folder):
    pdf(folder / "scan.pdf", [""])
    with pytest.raises(ValueError, match="no readable file"):
        DocsSearch(folder)


# --- the index kept between runs --------------------------------------------------------------


def test_the_index_is_kept_and_only_changed_files_are_read_again(folder):
    report_pdf(folder)
    pdf(folder / "birds.pdf", ["Herons wade in shallow water.", "Egrets nest in colonies."])
    first = DocsSearch(folder)
    assert first.index.read_pages == 5
    hits = [r.url for r in first.search("egrets colonies herons", 3)]
    second = DocsSearch(folder)  # another run: nothing read again, the BM25 index loaded as saved
    assert second.index.read_pages == 0 and [r.url for r in second.search("egrets colonies herons", 3)] == hits
    pdf(folder / "birds.pdf", ["Herons wade in shallow water.", "Storks migrate to Africa.", "Cranes dance."])
    os.utime(folder / "birds.pdf", ns=(1, 1))  # a changed file (size and time)
    third = DocsSearch(folder)
    assert third.index.read_pages == 3  # that file only
    assert third.search("storks migrate", 1)[0].url.endswith("birds.pdf#page=2")
    assert not any("birds" in r.url for r in third.search("egrets colonies", 3))
    (folder / "birds.pdf").unlink()
    assert [p.name for p in DocsSearch(folder).files] == ["Report.pdf"]


def test_a_damaged_cache_is_rebuilt(folder):
    report_pdf(folder)
    DocsSearch(folder)
    db = cache_folder(folder.resolve()) / "index.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    search = DocsSearch(folder)
    assert search.index.read_pages == 3 and search.search("axolotl", 1)[0].meta["page"] == "2"
    assert sqlite3.connect(db).execute("SELECT count(*) FROM units").fetchone() == (3,)


# --- citing a page --------------------------------------------------------------------------------


def _sources(folder):
    """Two pages of the report as a run records them (its texts in the local text store)."""
    from deepresearch.store import TEXTS
    from deepresearch.text.urls import source_key

    out, search = [], DocsSearch(folder)
    for n, hit in enumerate([search.search("axolotl regrows", 1)[0], search.search("quokkas Rottnest", 1)[0]], 1):
        TEXTS.put(source_key(hit.url), hit.text)
        out.append(
            {
                "id": n,
                "key": source_key(hit.url),
                "title": hit.title,
                "url": hit.url,
                "backend": "docs",
                "snippet": hit.text[:100],
                "meta": dict(hit.meta),
            }
        )
    return out


def test_a_page_is_cited_as_the_page_and_checked_against_its_text(folder):
    from deepresearch.report.verify import verify_draft

    report_pdf(folder)
    evidence = _sources(folder)
    assert [s["meta"]["page"] for s in evidence] == ["2", "1"]
    draft = (
        "The axolotl regrows a lost limb within a few weeks [1]. "
        "Quokkas live on Rottnest Island near Perth [1]. Quokkas live on Rottnest Island near Perth [2]."
    )
    out = verify_draft(draft, evidence, Context())
    verdicts = [(c["source_id"], c["verdict"]) for c in out["citations"]]
    # the quote from page 1 cited as page 2 is not on page 2: the check reads that page only
    assert verdicts == [(1, "supported"), (1, "unsupported"), (2, "supported")]
    assert out["citations"][0]["span"] == PAGES[1].replace("\n", " ")  # the passage shown: that page's
    path = str((folder / "Report.pdf").resolve())
    tail = out["report"].partition("## Sources\n")[2]
    assert f"[1] Smith and Khan 2021, Annual Report on Animals — file `{path}`, p. 2" in tail
    assert f"[2] Smith and Khan 2021, Annual Report on Animals — file `{path}`, p. 1" in tail
    assert [s["file"] for s in out["sources"]] == [path, path]


def test_citation_styles_and_bibliographies_name_the_document_and_its_page(folder):
    from deepresearch.report.bibliography import to_bibtex, to_csljson
    from deepresearch.report.citation_style import styled
    from deepresearch.report.verify import verify_draft

    report_pdf(folder)
    out = verify_draft(
        "The axolotl regrows a lost limb within a few weeks [1]. Quokkas live on Rottnest Island near Perth [2].",
        _sources(folder),
        Context(),
    )
    apa = styled(out["report"], out["sources"], "apa")
    assert "(Smith & Khan, 2021, p. 2)" in apa and "(Smith & Khan, 2021, p. 1)" in apa
    entries = apa.partition("## Sources\n")[2].strip().split("\n\n")
    # one entry for the document (its two pages are one work), with its real path
    assert entries[0].startswith("Smith, J., & Khan, A. (2021). Annual Report on Animals") and entries[0].endswith(
        f"— file `{(folder / 'Report.pdf').resolve()}`"
    ), entries
    assert not entries[1].startswith("Smith")
    bib = to_bibtex(out["sources"])
    assert bib.count("@misc{") == 1 and "Smith, Jane and Khan, Ali" in bib and "year = {2021}" in bib
    assert "cited at p. 2, p. 1" in bib and "Annual Report on Animals" in bib
    [item] = [i for i in json.loads(to_csljson(out["sources"])) if i["type"] == "document"]
    assert (item["title"], item["issued"], item["note"]) == (
        "Annual Report on Animals",
        {"date-parts": [[2021]]},
        "File: Report.pdf; cited at p. 2, p. 1",
    )


def test_the_page_shows_the_pages_passage_and_path(folder):
    from deepresearch.report.verify import verify_draft
    from deepresearch.web.render import view

    report_pdf(folder)
    out = verify_draft("The axolotl regrows a lost limb within a few weeks [1].", _sources(folder)[:1], Context())
    shown = view(out)
    [cite] = shown["citations"]
    assert cite["title"] == "Annual Report on Animals, p. 2" and cite["verdict"] == "supported"
    assert "regrows a lost limb" in cite["passage"]
    assert f"file {(folder / 'Report.pdf').resolve()}, p. 2</li>" in shown["html"]


def test_a_path_is_shown_whole_as_a_code_span():
    from deepresearch.text.safe import code_span

    assert code_span("/d/a`b.md") == "``/d/a`b.md``"
    assert code_span("/d/x`") == "`` /d/x` ``"
    assert re.fullmatch(r"`[^`]+`", code_span("/d/[Official report](https:evil.example x).md"))


def test_a_deep_runs_sections_warn_of_an_unreadable_file_once(fake_model, folder):
    """Each section of a deep run opens the folder: the warning is given once in the run."""
    import uuid

    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.graphs.deep import build
    from tests.deep_helpers import deep_responder, run_deep

    (folder / "eiffel.md").write_text(
        "The Eiffel Tower was designed by Gustave Eiffel's company for the 1889 World's Fair in Paris.\n"
    )
    pdf(folder / "locked.pdf", ["Secret plans."], password="s3cret")
    spec, _ = fake_model(deep_responder(2))
    final, events, _ = run_deep(
        build(checkpointer=InMemorySaver()),
        Context(model=spec, max_iterations=1, search=f"docs:{folder}"),
        {"configurable": {"thread_id": uuid.uuid4().hex}},
        {"question": "Give an overview of the Eiffel Tower: design and purpose"},
    )
    warned = [e for e in events if e.get("warning")]
    assert len(final["sections"]) == 2 and final["sources"]
    assert [e["cause"].rsplit("/", 1)[1] for e in warned] == ["locked.pdf: encrypted (it needs a password)"]


def test_a_text_with_no_paragraph_breaks_is_cut_after_whole_sentences():
    from deepresearch.tools.doc_units import PASSAGE_CHARS, passages

    sentences = [f"The tower record number {i} notes the year {1800 + i}." for i in range(120)]
    pieces = passages(" ".join(sentences))
    assert len(pieces) > 2 and all(len(p) <= PASSAGE_CHARS for p in pieces)
    assert " ".join(pieces).split(". ") == " ".join(sentences).split(". ")  # nothing lost, nothing split
    assert all(p.startswith("The tower record") and p.endswith(".") for p in pieces)
    words = passages("word " * 1000)  # no sentence end at all: cut between words
    assert all(set(p.split()) == {"word"} for p in words) and sum(len(p.split()) for p in words) == 1000


def test_a_document_the_question_names_is_searched_first(folder):
    """'What does the velmguide say ...' names velmguide.pdf by its file name: its pages come
    first, though another file says more of the question's words."""
    pdf(folder / "velmguide.pdf", ["Ferries cross the Tarn at dawn.", "The pier was rebuilt."])
    pdf(folder / "harbour.pdf", ["Ferries cross the Tarn at dawn and at dusk; ferries cross the Tarn daily."])
    search = DocsSearch(folder)
    hits = search.search("What does the velmguide say about ferries crossing the Tarn?", 2)
    assert hits[0].meta["file"] == "velmguide.pdf" and hits[0].meta["page"] == "1"
    assert search.search("ferries crossing the Tarn", 1)[0].meta["file"] == "harbour.pdf"  # none named


def test_a_real_manual_the_question_names_is_searched_first(tmp_path):
    from tests.document_files import real_pdfs

    search = DocsSearch(real_pdfs(tmp_path / "tex"))
    hits = search.search("What does the fntguide say about selecting a font encoding?", 3)
    assert [h.meta["file"] for h in hits] == ["fntguide.pdf"] * 3
    hits = search.search("How do I write a LaTeX class file according to clsguide?", 3)
    assert [h.meta["file"] for h in hits] == ["clsguide.pdf"] * 3
