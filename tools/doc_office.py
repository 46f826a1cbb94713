"""Word (.docx), OpenDocument text (.odt) and EPUB files as blocks (headings, paragraphs, page
breaks) and metadata, for deepresearch.tools.doc_readers.

Pages: Word records where its layout broke pages when it saved a file
(`w:lastRenderedPageBreak`), LibreOffice likewise (`text:soft-page-break`): such a file is cut
into those pages and cited by page. A file with none (one written by a program) is cut at its
explicit page breaks, and with none of those either, into sections under its headings.
EPUB has no pages: each chapter is cut into sections under its headings.
"""

from __future__ import annotations

import io
import posixpath
from datetime import datetime
from urllib.parse import unquote

from defusedxml import ElementTree

from deepresearch.tools.doc_meta import authors_of, iso_date, useful_title
from deepresearch.tools.doc_units import HEADING, PAGE_BREAK, PARAGRAPH, Document, Unreadable, html_to_text, units_of

# --- Word -------------------------------------------------------------------------------------

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_TEMPLATE_CREATED = datetime(2013, 12, 23, 23, 15)  # python-docx's own template: no date of the document


def _docx_runs(p, rendered: bool) -> list[tuple[str, str]]:
    """A paragraph's text cut at its page breaks: Word's rendered ones when the file has them
    (`rendered`), else the explicit ones."""
    out, cur = [], []
    for el in p.iter():
        tag = el.tag
        if tag == f"{_W}t":
            cur.append(el.text or "")
        elif tag == f"{_W}tab":
            cur.append("\t")
        elif tag in (f"{_W}cr",) or (tag == f"{_W}br" and el.get(f"{_W}type") not in ("page", "column")):
            cur.append("\n")
        elif (tag == f"{_W}lastRenderedPageBreak" and rendered) or (
            tag == f"{_W}br" and el.get(f"{_W}type") == "page" and not rendered
        ):
            out.append((PARAGRAPH, "".join(cur)))
            out.append((PAGE_BREAK, ""))
            cur = []
    out.append((PARAGRAPH, "".join(cur)))
    return out


def docx_document(data: bytes) -> Document:
    import docx
    from docx.table import Table

    try:
        doc = docx.Document(io.BytesIO(data))
        body = doc.element.body
        rendered = body.find(f".//{_W}lastRenderedPageBreak") is not None
        paged = rendered or any(br.get(f"{_W}type") == "page" for br in body.iter(f"{_W}br"))
        blocks: list[tuple[str, str]] = []
        for item in doc.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells, seen = [], set()
                    for cell in row.cells:  # a merged cell is listed once per grid column it spans
                        if id(cell._tc) not in seen:
                            seen.add(id(cell._tc))
                            cells.append(" ".join(cell.text.split()))
                    blocks.append((PARAGRAPH, " | ".join(cells)))
                continue
            style = (item.style.name if item.style is not None else "") or ""
            if style.startswith("Heading") or style == "Title":
                blocks.append((HEADING, item.text))
            else:
                blocks.extend(_docx_runs(item._p, rendered))
        props = doc.core_properties
        created = props.created
    except Unreadable:
        raise
    except Exception:  # noqa: BLE001 - python-docx raises many kinds on a damaged package
        raise Unreadable("not a readable Word document (corrupt or damaged)") from None
    meta = {
        "title": useful_title(props.title),
        "authors": authors_of(props.author),
        "year": iso_date(created)[:4] if created and created.replace(tzinfo=None) != _TEMPLATE_CREATED else "",
    }
    return Document(units_of(blocks, paged), {k: v for k, v in meta.items() if v})


# --- OpenDocument text ----------------------------------------------------------------------------

_T = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_META = "{urn:oasis:names:tc:opendocument:xmlns:meta:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_SKIP = {f"{_T}note", f"{_OFFICE}annotation", f"{_T}tracked-changes", f"{_T}sequence-decls", f"{_OFFICE}forms"}


def _parse(data: bytes, what: str):
    try:
        return ElementTree.fromstring(data)
    except Exception:  # noqa: BLE001 - a syntax error, or an entity bomb defusedxml refuses
        raise Unreadable(f"not a readable {what} (its XML is damaged)") from None


def _inline(el, out: list[tuple[str, str]], kind: str) -> None:
    """The text of a paragraph or heading, cut at its soft page breaks, appended to `out`."""
    cur: list[str] = [el.text or ""]

    def walk(node) -> None:
        for child in node:
            tag = child.tag
            if tag == f"{_T}s":
                cur.append(" " * int(child.get(f"{_T}c", "1") or 1))
            elif tag == f"{_T}tab":
                cur.append("\t")
            elif tag == f"{_T}line-break":
                cur.append("\n")
            elif tag == f"{_T}soft-page-break":
                out.append((kind, "".join(cur)))
                out.append((PAGE_BREAK, ""))
                cur.clear()
            elif tag not in _SKIP:
                cur.append(child.text or "")
                walk(child)
            cur.append(child.tail or "")

    walk(el)
    out.append((kind, "".join(cur)))


def _odt_blocks(node, out: list[tuple[str, str]]) -> None:
    for child in node:
        tag = child.tag
        if tag == f"{_T}h":
            _inline(child, out, HEADING)
        elif tag == f"{_T}p":
            _inline(child, out, PARAGRAPH)
        elif tag == f"{_T}soft-page-break":
            out.append((PAGE_BREAK, ""))
        elif tag == f"{_TABLE}table-row":
            cells: list[tuple[str, str]] = []
            for cell in child:
                if cell.tag == f"{_TABLE}table-cell":
                    _odt_blocks(cell, cells)
            out.append((PARAGRAPH, " | ".join(" ".join(t.split()) for k, t in cells if k != PAGE_BREAK and t.strip())))
        elif tag not in _SKIP:
            _odt_blocks(child, out)


def odt_document(content: bytes, meta_xml: bytes) -> Document:
    root = _parse(content, "OpenDocument file")
    text = root.find(f"{_OFFICE}body/{_OFFICE}text")
    if text is None:
        raise Unreadable("not an OpenDocument text (no text body)")
    blocks: list[tuple[str, str]] = []
    _odt_blocks(text, blocks)
    paged = any(kind == PAGE_BREAK for kind, _ in blocks)
    meta = {}
    if meta_xml:
        info = _parse(meta_xml, "OpenDocument file").find(f"{_OFFICE}meta")
        if info is not None:

            def first(tag: str) -> str:
                return (info.findtext(tag) or "").strip()

            meta = {
                "title": useful_title(first(f"{_DC}title")),
                "authors": authors_of(first(f"{_META}initial-creator") or first(f"{_DC}creator")),
                "year": iso_date(first(f"{_META}creation-date") or first(f"{_DC}date"))[:4],
            }
    return Document(units_of(blocks, paged), {k: v for k, v in meta.items() if v})


# --- EPUB ---------------------------------------------------------------------------------------

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_XENC = "{http://www.w3.org/2001/04/xmlenc#}"
_CHAPTER_TYPES = {"application/xhtml+xml", "text/html", "application/xml"}


def _markdown_blocks(text: str, out: list[tuple[str, str]]) -> None:
    for para in text.split("\n\n"):
        para = para.strip()
        if para.startswith("#"):
            out.append((HEADING, para.lstrip("#").strip()))
        elif para:
            out.append((PARAGRAPH, para))


def epub_document(archive, member) -> Document:
    """An EPUB's chapters in reading order (its spine) and its metadata. `member(name)`: the
    bytes of a file of the package (Unreadable when missing or damaged)."""
    names = set(archive.namelist())
    if "META-INF/encryption.xml" in names:  # fonts are often obfuscated; encrypted chapters are DRM
        enc = _parse(member("META-INF/encryption.xml"), "EPUB")
        uris = [c.get("URI", "") for c in enc.iter(f"{_XENC}CipherReference")]
        if any(u.lower().endswith((".xhtml", ".html", ".htm", ".xml")) for u in uris):
            raise Unreadable("encrypted (DRM)")
    rootfile = _parse(member("META-INF/container.xml"), "EPUB").find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise Unreadable("not a readable EPUB (no package document)")
    opf_path = rootfile.get("full-path")
    opf = _parse(member(opf_path), "EPUB")
    base = posixpath.dirname(opf_path)
    manifest = {i.get("id"): i for i in opf.iter(f"{_OPF}item")}
    blocks: list[tuple[str, str]] = []
    for ref in opf.iter(f"{_OPF}itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type") not in _CHAPTER_TYPES:
            continue
        name = posixpath.normpath(posixpath.join(base, unquote(item.get("href") or "")))
        if name not in names:
            continue
        html = member(name).decode("utf-8", errors="replace")
        _markdown_blocks(html_to_text(html), blocks)
    info = opf.find(f"{_OPF}metadata")
    meta = {}
    if info is not None:
        creators = [" ".join((c.text or "").split()) for c in info.iter(f"{_DC}creator")]
        meta = {
            "title": useful_title(info.findtext(f"{_DC}title") or ""),
            "authors": [a for c in creators for a in authors_of(c)],
            "year": iso_date((info.findtext(f"{_DC}date") or "").strip())[:4],
        }
    return Document(units_of(blocks, paged=False), {k: v for k, v in meta.items() if v})
