"""Bibliographic metadata of a search result: what a citation style or a bibliography needs.

Every field comes from the source's own response; a field the source does not give is left
out, never guessed. The fields (all optional):

    type      article | preprint | webpage | document (how a bibliography files the entry)
    authors   [{"family": "Moreau", "given": "Claire"} | {"literal": "WHO Study Group"}]
    year      "2024"                 date      "2024-07" or "2024-01-01" (published)
    venue     the journal, or the archive (arXiv, a preprint server)
    volume, issue, pages             publisher  the site or the registry (Wikipedia, ClinicalTrials.gov)
    site      a web page's site (its host)   file, modified  a document's path in its folder and mtime (ISO date)
    page      the page of a document a source is (its label, as printed: "12", "xii")
    section   the heading of the section of a document a source is (when it has no pages)
    license   the text's licence (the encyclopedia's CC BY-SA 4.0)

Values are data from outside: `clean` caps them, drops control characters and masks secrets,
like every other field of a result.
"""

from __future__ import annotations

import re

TYPES = ("article", "preprint", "webpage", "document")
TEXT_FIELDS = (
    "type",
    "year",
    "date",
    "venue",
    "volume",
    "issue",
    "pages",
    "publisher",
    "site",
    "file",
    "modified",
    "license",
    "page",
    "section",
)
MAX_AUTHORS = 50
MAX_FIELD_CHARS = 300
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
_DATE = re.compile(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}


def _text(value, clean_text) -> str:
    # a lone surrogate (bytes that were not UTF-8) could not be stored: it becomes '?'
    value = str(value).encode("utf-8", "replace").decode("utf-8")
    return clean_text(" ".join(_CONTROL.sub(" ", value).split()))[:MAX_FIELD_CHARS]


def clean(meta: dict | None, clean_text) -> dict:
    """`meta` with known fields only, each one line, capped and passed through `clean_text`
    (secret masking and bidi stripping); empty values dropped."""
    out: dict = {}
    for key in TEXT_FIELDS:
        value = (meta or {}).get(key)
        if value not in (None, ""):
            text = _text(value, clean_text)
            if text:
                out[key] = text
    if out.get("type") not in TYPES:
        out.pop("type", None)
    authors = []
    for a in list((meta or {}).get("authors") or [])[:MAX_AUTHORS]:
        if isinstance(a, dict):
            name = {k: _text(a[k], clean_text) for k in ("family", "given", "literal") if a.get(k)}
            if name.get("family") or name.get("literal"):
                authors.append(name)
    if authors:
        out["authors"] = authors
    return out


def split_name(name: str) -> dict:
    """A name written `Given Family` (arXiv's): the last word is the family name, as BibTeX
    reads it; a one-word name stays whole."""
    words = str(name).split()
    if len(words) < 2:
        return {"literal": " ".join(words)} if words else {}
    return {"family": words[-1], "given": " ".join(words[:-1])}


def initials_name(name: str) -> dict:
    """A name written `Family Initials` (Europe PMC's authorString: `Lindqvist E`)."""
    words = str(name).strip().rstrip(".").split()
    if len(words) >= 2 and words[-1].isupper() and len(words[-1]) <= 4:
        return {"family": " ".join(words[:-1]), "given": words[-1]}
    return {"literal": " ".join(words)} if words else {}


def iso_date(year: str = "", month: str = "", day: str = "") -> str:
    """`2024`, `Jul` or `07`, `2` -> `2024-07-02` (as much as is given; '' without a year)."""
    year = str(year or "").strip()[:4]
    if not (len(year) == 4 and year.isdigit()):
        return ""
    given = str(month or "").strip().lower()
    m = (
        _MONTHS.get(given[:3])
        if given[:3] in _MONTHS
        else (int(given) if given.isdigit() and 1 <= int(given) <= 12 else None)
    )
    if not m:
        return year
    d = str(day or "").strip()
    return f"{year}-{m:02d}" + (f"-{int(d):02d}" if d.isdigit() and 1 <= int(d) <= 31 else "")


def date_parts(date: str) -> list[int]:
    """`2024-07-02` -> [2024, 7, 2] (CSL's date-parts); [] when it holds no year."""
    m = _DATE.match(str(date or ""))
    return [int(x) for x in m.groups() if x] if m else []


def year_of(meta: dict) -> str:
    """The year of a record: its `year`, else its date's."""
    if meta.get("year"):
        return meta["year"]
    parts = date_parts(meta.get("date", ""))
    return str(parts[0]) if parts else ""
