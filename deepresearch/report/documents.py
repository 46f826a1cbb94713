"""How a document of the user's (a `docs:` folder's file) is cited and listed.

A document source is a page, a section or a whole file (tools/docs.py). Its Sources entry
names who wrote it and when, its own title, the file and the page:

    [3] Smith 2021, Annual Report — file `/home/me/docs/Report.pdf`, p. 12

The path is shown as it is, as inert text (a Markdown code span), never rewritten: the same
string as the `file` field of the result's sources (`display_path`: only control characters
and bytes that are not UTF-8 are shown differently, as spaces and `\\xNN`). A title made from
the file's name is not repeated before it.
"""

from __future__ import annotations

from deepresearch.text.safe import code_span, display_path, file_path, inline_text, title_line
from deepresearch.tools.metadata import year_of


def shown_path(url: str) -> str:
    """The path of a `file:` reference as every output shows it (the report, `sources`, the page)."""
    return display_path(file_path(url))


def locator(meta: dict | None) -> tuple[str, str] | None:
    """("page", "12") or ("section", "Methods") of a document source, or None."""
    meta = meta or {}
    if meta.get("page"):
        return "page", str(meta["page"])
    if meta.get("section"):
        return "section", str(meta["section"])
    return None


def locator_text(meta: dict | None) -> str:
    """`p. 12`, `section Methods`, or ""."""
    where = locator(meta)
    if where is None:
        return ""
    return f"p. {where[1]}" if where[0] == "page" else f"section {where[1]}"


def author_year(meta: dict | None) -> str:
    """`Smith 2021`, `Smith and Khan 2021`, `Smith et al. 2021` ("" without authors)."""
    meta = meta or {}
    names = [a.get("family") or a.get("literal") or "" for a in meta.get("authors") or [] if isinstance(a, dict)]
    names = [n for n in names if n]
    if not names:
        return ""
    who = names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} et al."
    year = year_of(meta)
    return f"{who} {year}" if year else who


def own_title(source: dict) -> str:
    """The document's own title (from its metadata), or "" when its title is its file's name."""
    meta = source.get("meta") or {}
    title = title_line(source.get("title") or "", 200)
    return "" if meta.get("file") and title == title_line(meta["file"], 200) else title


def head(source: dict) -> str:
    """What a document's Sources entry says before its reference: authors and year, its own
    title (plain text: the caller escapes it)."""
    return ", ".join(x for x in (author_year(source.get("meta")), own_title(source)) if x)


def reference_markdown(source: dict) -> str:
    """`file `/path/Report.pdf`, p. 12` (Markdown: the path is a code span)."""
    where = locator_text(source.get("meta"))
    return f"file {code_span(shown_path(source.get('url', '')))}" + (f", {inline_text(where, 160)}" if where else "")


def reference_text(source: dict) -> str:
    """`file /path/Report.pdf, p. 12` (plain text, for HTML and the Word and PDF exports)."""
    where = locator_text(source.get("meta"))
    return f"file {shown_path(source.get('url', ''))}" + (f", {where}" if where else "")


def document_key(source: dict) -> str:
    """The file a document source is part of (its reference without the page or section)."""
    return str(source.get("url") or "").split("#", 1)[0]
