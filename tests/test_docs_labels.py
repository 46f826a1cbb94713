"""A PDF whose printed page numbers are not its sheet numbers (roman-numbered front matter, a
/PageLabels tree): a page is cited by the label printed on it (the Sources line, an in-text
citation style, the web page's popover) and its reference opens the sheet it is on (`#page=N`,
N counting sheets, as PDF viewers open a page). On a PDF made here with pypdf and on the real
source2e.pdf of Debian's LaTeX manuals (sixteen sheets of front matter, i to xvi).
"""

from __future__ import annotations

import shutil

import pytest

from deepresearch.config import Context
from deepresearch.report.citation_style import styled
from deepresearch.report.verify import verify_draft
from deepresearch.tools.docs import DocsSearch
from deepresearch.web.render import view
from tests.document_files import TEXDOCS, pdf

PAGES = [
    "Quokkas live on Rottnest Island near Perth.",
    "The axolotl regrows a lost limb within a few weeks.",
    "Lighthouses guided ships along rocky coasts.",
]


def recorded(hits) -> list[dict]:
    """The hits as a run records its sources (their texts in the local text store)."""
    from deepresearch.store import TEXTS
    from deepresearch.text.urls import source_key

    out = []
    for n, hit in enumerate(hits, 1):
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


@pytest.fixture
def labelled(tmp_path):
    """Labelled.pdf: three sheets labelled i, ii and 1."""
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path / "docs"
    folder.mkdir()
    plain = pdf(tmp_path / "plain.pdf", PAGES, title="Labelled Report", author="Jane Smith")
    writer = PdfWriter(clone_from=PdfReader(plain))
    writer.set_page_label(0, 1, style="/r")  # sheets 1-2: i, ii
    writer.set_page_label(2, 2, style="/D", start=1)  # sheet 3: 1
    with open(folder / "Labelled.pdf", "wb") as f:
        writer.write(f)
    return folder


def test_the_report_cites_the_printed_label_and_its_reference_opens_the_sheet(labelled):
    search = DocsSearch(labelled)
    body, front = search.search("lighthouses guided ships rocky coasts", 1) + search.search("axolotl regrows limb", 1)
    assert (body.meta["page"], body.url.rsplit("/", 1)[1]) == ("1", "Labelled.pdf#page=3")
    assert (front.meta["page"], front.url.rsplit("/", 1)[1]) == ("ii", "Labelled.pdf#page=2")
    draft = "Lighthouses guided ships along rocky coasts [1]. The axolotl regrows a lost limb within a few weeks [2]."
    out = verify_draft(draft, recorded([body, front]), Context())
    assert [c["verdict"] for c in out["citations"]] == ["supported", "supported"]
    path = (labelled / "Labelled.pdf").resolve()
    sources = out["report"].partition("## Sources\n")[2].strip().splitlines()[:2]
    assert sources == [
        f"[1] Smith 2000, Labelled Report — file `{path}`, p. 1",  # the sheet is the third
        f"[2] Smith 2000, Labelled Report — file `{path}`, p. ii",
    ]
    assert [s["url"].rsplit("#", 1)[1] for s in out["sources"]] == ["page=3", "page=2"]
    apa = styled(out["report"], out["sources"], "apa")
    assert "p. 1)" in apa and "p. ii)" in apa and "p. 3)" not in apa, apa
    titles = [c["title"] for c in view(out)["citations"]]
    assert titles == ["Labelled Report, p. 1", "Labelled Report, p. ii"]


def test_a_real_manuals_body_is_cited_by_its_printed_page_not_its_sheet(tmp_path):
    """source2e.pdf: sixteen sheets of front matter (i to xvi), then the body from 1. Its page 1 is
    the seventeenth sheet."""
    source = TEXDOCS / "source2e.pdf"
    if not source.is_file():
        pytest.fail("source2e.pdf of Debian's texlive-latex-base-doc is missing: run `make texdocs` (as root)")
    folder = tmp_path / "tex"
    folder.mkdir()
    shutil.copyfile(source, folder / "source2e.pdf")
    [hit] = DocsSearch(folder).search("semi-automatic determination of system dependent parts texsys.cfg", 1)
    assert (hit.meta["page"], hit.url.rsplit("/", 1)[1]) == ("1", "source2e.pdf#page=17")
    out = verify_draft("The actual definitions may be placed in a file texsys.cfg [1].", recorded([hit]), Context())
    assert out["citations"][0]["verdict"] == "supported"
    [line] = [x for x in out["report"].splitlines() if x.startswith("[1] ")]
    assert line.endswith(f"file `{(folder / 'source2e.pdf').resolve()}`, p. 1"), line
