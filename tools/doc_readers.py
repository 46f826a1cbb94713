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
from pathlib import Path

from deepresearch.files import read_bytes
from deepresearch.tools.doc_meta import authors_of, iso_date, useful_title
from deepresearch.tools.doc_office import docx_document, epub_document, odt_document
from deepresearch.tools.doc_units import Document, Unit, Unreadable, html_to_text, passages

TEXT_EXTENSIONS = {".md", ".markdown", ".txt", ".rst", ".html", ".htm"}
DOCUMENT_EXTENSIONS = {".pdf", ".docx", ".epub", ".odt"}
EXTENSIONS = TEXT_EXTENSIONS | DOCUMENT_EXTENSIONS
MAX_FILE_BYTES = 2_000_000  # a text file: read up to here
MAX_DOCUMENT_BYTES = 100_000_000  # a PDF, Word, EPUB or OpenDocument file: larger ones are skipped
MAX_UNPACKED_BYTES = 200_000_000  # what a zipped document (Word, EPUB, OpenDocument) may unpack to
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_pdfium_lock = threading.Lock()  # PDFium is not thread-safe: one document at a time per process


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
        raise Unreadable("no text layer (a scanned document? run OCR on it first)" if suffix == ".pdf" else "no text")
    return doc


def _text_file(path: Path) -> Document:
    data = read_bytes(path, MAX_FILE_BYTES, truncate=True)
    if b"\x00" in data[:8192]:
        raise Unreadable("binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = (
            data.decode("utf-8", errors="ignore")
            if len(data) == MAX_FILE_BYTES
            else data.decode("cp1252", errors="replace")
        )
    if path.suffix.lower() in (".html", ".htm"):
        text = html_to_text(text)
    return Document([Unit(p) for p in passages(text)])


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
    meta = {
        "title": useful_title(info.get("Title", "")),
        "authors": authors_of(info.get("Author", "")),
        "year": iso_date(info.get("CreationDate", ""))[:4],
    }
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
    if data.startswith(_OLE):  # what Word saves a file with a password as (or an old .doc renamed)
        raise Unreadable("encrypted (it needs a password), or not a .docx file")
    _zip(data)
    return docx_document(data)


def _odt(data: bytes) -> Document:
    archive = _zip(data)
    return odt_document(
        _member(archive, "content.xml"), _member(archive, "meta.xml") if "meta.xml" in archive.namelist() else b""
    )


def _epub(data: bytes) -> Document:
    archive = _zip(data)
    if "META-INF/encryption.xml" in archive.namelist():
        raise Unreadable("encrypted (DRM)")
    return epub_document(archive, lambda name: _member(archive, name))
