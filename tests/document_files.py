"""Documents the tests (and bench/docs_index.py) make: PDFs written by reportlab, Word files by
python-docx, OpenDocument and EPUB files as the zip packages their formats define; and the
real manuals of Debian's texlive-latex-base-doc (`make texdocs` installs it)."""

from __future__ import annotations

import datetime
import shutil
import zipfile
from pathlib import Path

import pytest

TEXDOCS = Path("/usr/share/doc/texlive-doc/latex/base")
# A few of the LaTeX team's manuals: what is on their pages was written by no one here
REAL_PDFS = (
    "fntguide.pdf",
    "usrguide.pdf",
    "usrguide-historic.pdf",
    "clsguide.pdf",
    "cfgguide.pdf",
    "lppl.pdf",
    "letter.pdf",
)
# fntguide.pdf, page 4: "... the 'TEX text extended' encoding developed by the TEX Users Group
# members during a TEX Conference at Cork in 1990 (hence its informal name 'Cork encoding')."
CORK_QUESTION = "Why is the TeX text extended encoding called the Cork encoding?"
CORK_FILE, CORK_PAGE = "fntguide.pdf", "4"


def real_pdfs(folder: Path) -> Path:
    """`folder` with copies of REAL_PDFS; the test fails saying how to install them when missing."""
    missing = [n for n in REAL_PDFS if not (TEXDOCS / n).is_file()]
    if missing:
        pytest.fail(
            f"the real PDFs of Debian's texlive-latex-base-doc are missing ({', '.join(missing)}): "
            "run `make texdocs` (as root) or `sudo apt-get install texlive-latex-base-doc`"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for name in REAL_PDFS:
        shutil.copyfile(TEXDOCS / name, folder / name)
    return folder


def pdf(
    path: Path,
    pages: list[str],
    *,
    title: str = "",
    author: str = "",
    password: str | None = None,
    when: datetime.datetime | None = None,
) -> Path:
    """A PDF with one page per text (a text's lines drawn one below the other); `password`
    encrypts it; an empty text draws a filled box and no text (a scan)."""
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    encrypt = pdfencrypt.StandardEncryption(password, canPrint=0) if password else None
    c = canvas.Canvas(str(path), encrypt=encrypt, invariant=when is None)
    if title:
        c.setTitle(title)
    if author:
        c.setAuthor(author)
    if when:
        c.setDateFormatter(lambda *a: when.strftime("D:%Y%m%d%H%M%S+00'00'"))
    for text in pages:
        if not text:
            c.rect(72, 72, 300, 400, fill=1)
        for i, line in enumerate(text.split("\n")):
            c.drawString(72, 720 - 14 * i, line)
        c.showPage()
    c.save()
    return path


def corrupt_pdf(path: Path, source: Path) -> Path:
    path.write_bytes(source.read_bytes()[:300])
    return path


def docx_file(path: Path, *, title="", author="", created=None, blocks=(), rendered_breaks=()) -> Path:
    """A Word file: `blocks` are ("h1", text), ("p", text), ("break", "") (an explicit page
    break), ("table", [cells]); `rendered_breaks`: the numbers of the paragraphs before which
    Word's layout broke a page (a `w:lastRenderedPageBreak` at their start)."""
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement

    d = docx.Document()
    props = d.core_properties
    props.title, props.author = title, author or ""
    if created:
        props.created = created
    n = 0
    for kind, value in blocks:
        if kind.startswith("h"):
            para = d.add_heading(value, int(kind[1:]))
        elif kind == "break":
            d.paragraphs[-1].add_run().add_break(WD_BREAK.PAGE)
            continue
        elif kind == "table":
            table = d.add_table(rows=1, cols=len(value))
            for cell, text in zip(table.rows[0].cells, value):
                cell.text = text
            continue
        else:
            para = d.add_paragraph(value)
        n += 1
        if n in rendered_breaks:
            para.runs[0]._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    d.save(str(path))
    return path


ODT_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 office:version="1.3"><office:body><office:text>{body}</office:text></office:body></office:document-content>"""
ODT_META = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<office:meta>{meta}</office:meta></office:document-meta>"""


def odt_file(path: Path, body: str, meta: str = "") -> Path:
    """An OpenDocument text whose office:text holds `body` (XML), with meta.xml holding `meta`."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
        z.writestr("content.xml", ODT_CONTENT.format(body=body))
        z.writestr("meta.xml", ODT_META.format(meta=meta))
    return path


def epub_file(
    path: Path, chapters: list[tuple[str, str]], *, title="", creators=(), date="", encrypted: tuple[str, ...] = ()
) -> Path:
    """An EPUB 3 of `chapters` ((file name, XHTML body)), in that reading order; `encrypted`:
    package paths listed in META-INF/encryption.xml (DRM when they are chapters)."""
    items = "".join(
        f'<item id="c{i}" href="text/{name.replace(" ", "%20")}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    meta = (
        (f"<dc:title>{title}</dc:title>" if title else "")
        + "".join(f"<dc:creator>{c}</dc:creator>" for c in creators)
        + (f"<dc:date>{date}</dc:date>" if date else "")
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile '
            'full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        z.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" '
            'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:identifier id="id">x</dc:identifier>{meta}</metadata><manifest>{items}</manifest>'
            f"<spine>{spine}</spine></package>",
        )
        for name, body in chapters:
            z.writestr(
                f"OEBPS/text/{name}",
                '<?xml version="1.0" encoding="utf-8"?><html '
                f'xmlns="http://www.w3.org/1999/xhtml"><body>{body}</body></html>',
            )
        if encrypted:
            refs = "".join(
                f'<enc:EncryptedData xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:CipherData>'
                f'<enc:CipherReference URI="{p}"/></enc:CipherData></enc:EncryptedData>'
                for p in encrypted
            )
            z.writestr(
                "META-INF/encryption.xml",
                '<?xml version="1.0"?><encryption '
                f'xmlns="urn:oasis:names:tc:opendocument:xmlns:container">{refs}</encryption>',
            )
    return path
