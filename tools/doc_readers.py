"""One file of a docs folder read into its units and its own metadata.

A unit is what a citation points at: a page of a PDF (or of a Word or OpenDocument file that
was laid out into pages when it was saved), a section of a Word, OpenDocument or EPUB file
(under its heading, cut in parts of at most SECTION_CHARS), or a passage of a text file
(.md, .txt, .rst, .html, which have neither). The parsers, each wheel-only or pure Python:

- PDF: pypdfium2 (PDFium, the PDF engine of Chromium; Apache-2.0 or BSD-3-Clause): the text
  layer page by page, page labels, the document information (title, author, dates).
- Word (.docx): python-docx (MIT): paragraphs and tables in order, headings, page breaks.
- OpenDocument text (.odt) and EPUB: the zip's XML read with defusedxml; EPUB's chapters are
  XHTML, read by html2text like the folder's HTML files.

A file that cannot be read raises `Unreadable` with the reason in a few words (encrypted,
corrupt, no text layer, too large); the caller skips it and goes on.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import html2text

from deepresearch.files import read_bytes
from deepresearch.tools.doc_meta import authors_of, iso_date, useful_title

TEXT_EXTENSIONS = {".md", ".markdown", ".txt", ".rst", ".html", ".htm"}
DOCUMENT_EXTENSIONS = {".pdf", ".docx", ".epub", ".odt"}
EXTENSIONS = TEXT_EXTENSIONS | DOCUMENT_EXTENSIONS
MAX_FILE_BYTES = 2_000_000  # a text file: read up to here
MAX_DOCUMENT_BYTES = 100_000_000  # a PDF, Word, EPUB or OpenDocument file: larger ones are skipped
MAX_UNPACKED_BYTES = 200_000_000  # what a zipped document (Word, EPUB, OpenDocument) may unpack to
PASSAGE_CHARS = 1200  # a text file's passages
SECTION_CHARS = 4000  # a section longer than this is cut into parts (each keeps its heading)

_pdfium_lock = threading.Lock()  # PDFium is not thread-safe: one document at a time per process


class Unreadable(Exception):
    """The file cannot be read; the message says why in a few words."""


@dataclass
class Unit:
    text: str
    index: int = 0  # a page's number in the file (1-based: `#page=N` opens it), or the unit's
    page: str = ""  # the page's label as printed on it ("12", "xii")
    section: str = ""  # the heading of the section it is part of


@dataclass
class Document:
    units: list[Unit]
    meta: dict = field(default_factory=dict)  # title, authors, year: from the file's own metadata


def read(path: Path) -> Document:
    """The units and metadata of one file; Unreadable when it cannot be read (FileReadError,
    an OSError, when it is not a regular file)."""
    suffix = path.suffix.lower()
    if suffix in TEXT_EXTENSIONS:
        return _text_file(path)  # an empty one has no units: left out, no warning
    data = read_bytes(path, MAX_DOCUMENT_BYTES)  # FileReadError: too large, not a regular file
    reader = {".pdf": _pdf, ".docx": _docx, ".epub": _epub, ".odt": _odt}[suffix]
    doc = reader(data)
    if not any(u.text.strip() for u in doc.units):
        raise Unreadable("no text layer (a scanned document? run OCR on it first)" if suffix == ".pdf"
                         else "no text")
    return doc


# --- text files --------------------------------------------------------------------------------

def html_to_text(html: str) -> str:
    h = html2text.HTML2Text()
    h.ignore_images = True
    h.ignore_links = True
    h.body_width = 0
    return h.handle(html)


def _text_file(path: Path) -> Document:
    data = read_bytes(path, MAX_FILE_BYTES, truncate=True)
    if b"\x00" in data[:8192]:
        raise Unreadable("binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="ignore") if len(data) == MAX_FILE_BYTES else data.decode("cp1252", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        text = html_to_text(text)
    return Document([Unit(p) for p in passages(text)])


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """`text` in pieces of at most `size` characters, cut between paragraphs where it can."""
    paras = [p.strip() for p in text.split("\n\n") if p.strip()]
    out, cur = [], ""
    for p in paras:
        while len(p) > size:  # one huge paragraph: cut it
            out.append(p[:size])
            p = p[size:]
        if cur and len(cur) + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n\n{p}" if cur else p
    if cur:
        out.append(cur)
    return out


# --- blocks of a laid-out document: headings, paragraphs, page breaks ----------------------------

HEADING, PARAGRAPH, PAGE_BREAK = "h", "p", "page"
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def units_of(blocks: list[tuple[str, str]], paged: bool) -> list[Unit]:
    """Units from a document's blocks, (kind, text) in reading order: one per page when `paged`
    (the file records where its pages break), else one per section under its heading, cut in
    parts of at most SECTION_CHARS. A document with neither gives units with no locator."""
    if paged:
        pages: list[list[str]] = [[]]
        for kind, text in blocks:
            if kind == PAGE_BREAK:
                pages.append([])
            elif text.strip():
                pages[-1].append(text.strip())
        return [Unit("\n\n".join(p), index=n, page=str(n)) for n, p in enumerate(pages, 1) if p]
    sections: list[tuple[str, list[str]]] = [("", [])]
    for kind, text in blocks:
        if kind == HEADING and text.strip():
            sections.append((" ".join(text.split())[:120], [text.strip()]))
        elif kind != PAGE_BREAK and text.strip():
            sections[-1][1].append(text.strip())
    out: list[Unit] = []
    for heading, paras in sections:
        for part in passages("\n\n".join(paras), SECTION_CHARS) if paras else []:
            out.append(Unit(part, index=len(out) + 1, section=heading))
    return out


# --- PDF ---------------------------------------------------------------------------------------

def _page_text(text: str) -> str:
    # PDFium marks a word hyphenated at a line's end with \x02 and joins its halves: drop the mark
    return _CONTROLS.sub(" ", text.replace("\x02", "").replace("\r\n", "\n").replace("\r", "\n"))


def _pdf(data: bytes) -> Document:
    import pypdfium2 as pdfium

    with _pdfium_lock:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as e:
            cause = str(e)
            if "password" in cause.lower():
                raise Unreadable("encrypted (it needs a password)") from None
            raise Unreadable("not a readable PDF (corrupt or damaged)") from None
        try:
            info = pdf.get_metadata_dict(skip_empty=True)
            units, broken = [], 0
            for i in range(len(pdf)):
                try:
                    text = _pdf_page(pdf, i)
                except pdfium.PdfiumError:  # a damaged page: the others are read
                    broken += 1
                    continue
                if text:
                    units.append(Unit(text, index=i + 1, page=_label(pdf, i)))
        finally:
            pdf.close()
    if broken and not units:
        raise Unreadable("not a readable PDF (its pages are damaged)")
    meta = {"title": useful_title(info.get("Title", "")), "authors": authors_of(info.get("Author", "")),
            "year": iso_date(info.get("CreationDate", ""))[:4]}
    return Document(units, {k: v for k, v in meta.items() if v})


def _pdf_page(pdf, i: int) -> str:
    page = pdf[i]
    try:
        textpage = page.get_textpage()
        try:
            return _page_text(textpage.get_text_bounded()).strip()
        finally:
            textpage.close()
    finally:
        page.close()


def _label(pdf, i: int) -> str:
    """The label printed on page i ("xii", "12"); its number in the file when it has none."""
    try:
        label = " ".join(str(pdf.get_page_label(i) or "").split())[:20]
    except Exception:  # noqa: BLE001 - a broken label tree: the page's number
        label = ""
    return label or str(i + 1)


# --- zipped documents --------------------------------------------------------------------------

def _zip(data: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise Unreadable("not a readable document (corrupt, or not a zip package)") from None
    if sum(i.file_size for i in archive.infolist()) > MAX_UNPACKED_BYTES:
        raise Unreadable(f"too large (unpacks to more than {MAX_UNPACKED_BYTES // 1_000_000} MB)")
    if any(i.flag_bits & 0x1 for i in archive.infolist()):
        raise Unreadable("encrypted (it needs a password)")
    return archive


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        raise Unreadable(f"not a readable document (no {name[:80]} inside)") from None
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as e:
        raise Unreadable(f"not a readable document ({str(e)[:80] or 'corrupt'})") from None


_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an OLE compound file


def _docx(data: bytes) -> Document:
    from deepresearch.tools.doc_office import docx_document

    if data.startswith(_OLE):  # what Word saves a file with a password as (or an old .doc renamed)
        raise Unreadable("encrypted (it needs a password), or not a .docx file")
    _zip(data)
    return docx_document(data)


def _odt(data: bytes) -> Document:
    from deepresearch.tools.doc_office import odt_document

    archive = _zip(data)
    return odt_document(_member(archive, "content.xml"), _member(archive, "meta.xml")
                        if "meta.xml" in archive.namelist() else b"")


def _epub(data: bytes) -> Document:
    from deepresearch.tools.doc_office import epub_document

    archive = _zip(data)
    if "META-INF/encryption.xml" in archive.namelist():
        raise Unreadable("encrypted (DRM)")
    return epub_document(archive, lambda name: _member(archive, name))
