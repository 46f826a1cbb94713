"""A document's own metadata, as its file gives it: title, authors, year.

Files carry placeholders as often as real values (a PDF writer's `untitled` and `anonymous`,
python-docx's template author, a copyright notice in the author field): those are dropped,
so a citation never names `anonymous` as an author. A value is kept as the file gives it
otherwise (deepresearch.tools.metadata cleans it like every field of a search result).
"""

from __future__ import annotations

import re
from datetime import date, datetime

from deepresearch.tools.metadata import split_name

PLACEHOLDERS = {
    "",
    "untitled",
    "unknown",
    "anonymous",
    "author",
    "user",
    "administrator",
    "admin",
    "owner",
    "python-docx",
    "none",
    "n/a",
    "microsoft office user",
    "default",
}
MAX_AUTHORS = 20
_SEPARATORS = re.compile(r"\s*(?:;|\s&\s|\band\b|\n|\|)\s*", re.IGNORECASE)
_NOT_A_NAME = re.compile(r"©|\(c\)|copyright|rights reserved|https?:|www\.|@|\d{3}", re.IGNORECASE)
# a name with one of these words is an organization's, kept whole (`The LaTeX Project Team`)
_CORPORATE = re.compile(
    r"\b(team|project|group|committee|council|organi[sz]ation|inc|ltd|llc|gmbh|corporation|"
    r"company|university|institute|society|association|consortium|foundation|agency|"
    r"ministry|department|office|board|commission|centre|center|laboratory|network)\b",
    re.IGNORECASE,
)
_DATE = re.compile(r"^(?:D:)?(\d{4})(?:-?(\d{2}))?(?:-?(\d{2}))?")


def useful_title(value) -> str:
    """A title worth citing, or "" (a placeholder, a file name, a word processor's `Microsoft
    Word - x.docx`)."""
    title = " ".join(str(value or "").split())
    if title.lower() in PLACEHOLDERS or len(title) < 2:
        return ""
    if re.match(r"^microsoft (word|powerpoint) - ", title, re.IGNORECASE) or re.search(
        r"\.(pdf|docx?|odt|epub|tex|dvi|rtf|txt)$", title, re.IGNORECASE
    ):
        return ""
    return title[:300]


def authors_of(value) -> list[dict]:
    """CSL names from a file's author field: `Jane Smith; Ali Khan`, `Smith, Jane`, `Jane Smith
    and Ali Khan`, `Jane Smith, Ali Khan`. Placeholders and what is no name (a copyright notice,
    an address) are dropped."""
    text = " ".join(str(value or "").split())
    if not text or len(text) > 300 or _NOT_A_NAME.search(text):
        return []
    parts = [p for p in _SEPARATORS.split(text) if p.strip()]
    if len(parts) == 1 and "," in text:
        pieces = [p.strip() for p in text.split(",") if p.strip()]
        if len(pieces) > 1 and all(len(p.split()) >= 2 for p in pieces):  # `Jane Smith, Ali Khan`
            parts = pieces
    out = []
    for part in parts[:MAX_AUTHORS]:
        part = part.strip(" ,.")
        if part.lower() in PLACEHOLDERS or len(part) > 80:
            continue
        if _CORPORATE.search(part):
            name = {"literal": part}
        elif "," in part:  # `Smith, Jane`
            family, _, given = part.partition(",")
            name = {"family": family.strip(), **({"given": given.strip()} if given.strip() else {})}
        else:
            name = split_name(part)
        if name.get("family") or name.get("literal"):
            out.append(name)
    return out


def iso_date(value) -> str:
    """`2021-03-15` from a PDF date (`D:20210315…`), an ISO text or a datetime; "" when none."""
    if isinstance(value, (datetime, date)):
        return value.strftime("%Y-%m-%d") if 1000 < value.year < 3000 else ""
    m = _DATE.match(str(value or "").strip())
    if not m or not 1000 < int(m.group(1)) < 3000:
        return ""
    year, month, day = m.groups()
    if month and 1 <= int(month) <= 12:
        if day and 1 <= int(day) <= 31:
            return f"{year}-{month}-{day}"
        return f"{year}-{month}"
    return year
