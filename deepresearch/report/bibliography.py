"""A report's cited sources as bibliography entries: CSL-JSON items (what citation styles are
rendered from), BibTeX (bibtexparser) and RIS (rispy), each written by the library that reads
it back.

Entries carry only what the sources gave (deepresearch.tools.metadata): the title, the record
URL and identifiers always; authors, dates, venue and the rest when the source had them.
Entry types: a journal article, a preprint, a web page (the encyclopedia and trial registry
records too), a document (a file of the user's).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from deepresearch.report.documents import document_key, locator_text
from deepresearch.text.safe import file_path, web_url
from deepresearch.tools.metadata import date_parts, year_of

# our type -> (CSL type, BibTeX entry type, RIS type)
TYPES = {
    "article": ("article-journal", "article", "JOUR"),
    "preprint": ("article", "misc", "UNPB"),
    "webpage": ("webpage", "online", "ELEC"),
    "document": ("document", "misc", "GEN"),
}
DEFAULT_TYPE = "webpage"


def kind(source: dict) -> str:
    """The entry type of a source: its metadata's, else a file is a document and anything
    else a web page."""
    meta = source.get("meta") or {}
    if meta.get("type") in TYPES:
        return meta["type"]
    return "document" if file_path(str(source.get("url") or "")) else DEFAULT_TYPE


def _url(source: dict) -> str:
    url = str(source.get("url") or "")
    return url if web_url(url) else ""  # only retrieved http(s) sources are links


def csl_item(source: dict) -> dict:
    """One source as a CSL-JSON item; its id is the source's number in the report."""
    meta, ids = source.get("meta") or {}, source.get("ids") or {}
    item: dict[str, Any] = {
        "id": str(source.get("id")),
        "type": TYPES[kind(source)][0],
        "title": str(source.get("title") or ""),
    }
    if meta.get("authors"):
        item["author"] = [dict(a) for a in meta["authors"]]
    parts = date_parts(meta.get("date") or meta.get("year") or meta.get("modified") or "")
    if parts:
        item["issued"] = {"date-parts": [parts]}
    for ours, theirs in (
        ("venue", "container-title"),
        ("volume", "volume"),
        ("issue", "issue"),
        ("pages", "page"),
        ("publisher", "publisher"),
    ):
        if meta.get(ours):
            item[theirs] = meta[ours]
    if kind(source) == "webpage" and meta.get("site") and "container-title" not in item:
        item["container-title"] = meta.get("publisher") or meta["site"]
    for key, field in (("DOI", "DOI"), ("PMID", "PMID"), ("PMCID", "PMCID")):
        if ids.get(key):
            item[field] = ids[key]
    if ids.get("arXiv"):
        item["number"] = f"arXiv:{ids['arXiv']}"
    if ids.get("NCT"):
        item["number"] = ids["NCT"]
    if _url(source):
        item["URL"] = _url(source)
    notes = [
        f"File: {meta['file']}" if meta.get("file") else "",
        "cited at " + ", ".join(source["cited"]) if source.get("cited") else "",
    ]
    if any(notes):
        item["note"] = "; ".join(n for n in notes if n)
    if meta.get("license"):
        item["license"] = meta["license"]
    return item


def entries(sources: list[dict]) -> list[dict]:
    """The sources as a bibliography lists them: the pages (or sections) of one document cited
    as several sources are one entry, the first one's, whose note says which pages were cited."""
    out: list[dict] = []
    parts: dict[str, list[str]] = {}  # document -> its cited pages, in order
    for s in sources:
        if not isinstance(s, dict):
            continue
        where = locator_text(s.get("meta")) if str(s.get("url") or "").lower().startswith("file:") else ""
        key = document_key(s)
        if where and key in parts:
            parts[key].append(where)
            continue
        if where:
            parts[key] = [where]
        out.append(s)
    cited = {id(s): parts.get(document_key(s)) for s in out}
    return [{**s, "cited": cited[id(s)]} if cited[id(s)] else s for s in out]


def csl_items(sources: list[dict]) -> list[dict]:
    return [csl_item(s) for s in entries(sources)]


def to_csljson(sources: list[dict]) -> str:
    return json.dumps(csl_items(sources), ensure_ascii=False, indent=2) + "\n"


# --- BibTeX ---------------------------------------------------------------------------------


def _bib_value(text) -> str:
    """A field value BibTeX reads as plain text: its braces and backslashes are markup there."""
    return " ".join(str(text).replace("{", "(").replace("}", ")").replace("\\", "/").split())


def name_text(name: dict) -> str:
    """`Family, Given` (BibTeX and RIS); a corporate name in braces for BibTeX is left to the caller."""
    if name.get("literal"):
        return name["literal"]
    return name["family"] + (f", {name['given']}" if name.get("given") else "")


def _key_word(text: str) -> str:
    plain = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]", "", plain)


def cite_key(source: dict, taken: set[str]) -> str:
    """`moreau2024lowdose`: the first author's family name, the year, the title's first word;
    a letter added when taken. Sources without any: `source<N>`."""
    meta = source.get("meta") or {}
    first = (meta.get("authors") or [{}])[0]
    author = _key_word(first.get("family") or first.get("literal", "").split(" ")[0]).lower()
    word = next((w for w in (_key_word(w).lower() for w in str(source.get("title") or "").split()) if len(w) > 3), "")
    key = (author + year_of(meta) + word)[:40] or f"source{source.get('id')}"
    out, n = key, 0
    while out in taken:
        out = key + chr(ord("a") + n % 26) + ("" if n < 26 else str(n // 26))
        n += 1
    taken.add(out)
    return out


def bib_fields(source: dict) -> dict[str, str]:
    """A source's BibTeX fields (values are plain text: `_bib_value`)."""
    meta, ids, item = source.get("meta") or {}, source.get("ids") or {}, csl_item(source)
    fields = {"title": item["title"]}
    if meta.get("authors"):
        # a corporate author in double braces: BibTeX would otherwise split it into given and family names
        fields["author"] = " and ".join(
            "{" + _bib_value(a["literal"]) + "}" if a.get("literal") else _bib_value(name_text(a))
            for a in meta["authors"]
        )
    if year_of(meta):
        fields["year"] = year_of(meta)
    parts = date_parts(meta.get("date", ""))
    if len(parts) >= 2:
        fields["month"] = str(parts[1])
    venue = {"article": "journal", "preprint": "howpublished", "webpage": "organization"}.get(kind(source))
    if venue and item.get("container-title"):
        fields[venue] = item["container-title"]
    for ours, theirs in (("volume", "volume"), ("issue", "number"), ("pages", "pages"), ("publisher", "publisher")):
        if meta.get(ours) and not (theirs == "publisher" and fields.get("organization") == meta[ours]):
            fields[theirs] = meta[ours]
    if ids.get("DOI"):
        fields["doi"] = ids["DOI"]
    if ids.get("arXiv"):
        fields.update(eprint=ids["arXiv"], archiveprefix="arXiv")
    if ids.get("PMID"):
        fields["pmid"] = ids["PMID"]
    if item.get("URL"):
        fields["url"] = item["URL"]
    notes = [
        x
        for x in (
            item.get("note"),
            ids.get("NCT") and f"ClinicalTrials.gov {ids['NCT']}",
            meta.get("license") and f"Licence: {meta['license']}",
        )
        if x
    ]
    if notes:
        fields["note"] = "; ".join(notes)
    return {k: _bib_value(v) if k != "author" else v for k, v in fields.items()}


def to_bibtex(sources: list[dict]) -> str:
    from bibtexparser import Library, write_string
    from bibtexparser.model import Entry, Field

    library, taken = Library(), set[str]()
    for s in entries(sources):
        if isinstance(s, dict):
            fields = [Field(k, v) for k, v in bib_fields(s).items()]
            library.add(Entry(TYPES[kind(s)][1], cite_key(s, taken), fields))
    return write_string(library)


# --- RIS ------------------------------------------------------------------------------------


def ris_entry(source: dict) -> dict:
    meta, ids, item = source.get("meta") or {}, source.get("ids") or {}, csl_item(source)
    entry = {"type_of_reference": TYPES[kind(source)][2], "title": item["title"]}
    if meta.get("authors"):
        entry["authors"] = [name_text(a) for a in meta["authors"]]
    if year_of(meta):
        entry["year"] = year_of(meta)
    if meta.get("date"):
        entry["date"] = meta["date"].replace("-", "/")
    if item.get("container-title"):
        entry["journal_name" if kind(source) in ("article", "preprint") else "secondary_title"] = item[
            "container-title"
        ]
    for ours, theirs in (("volume", "volume"), ("issue", "number"), ("publisher", "publisher")):
        if meta.get(ours):
            entry[theirs] = meta[ours]
    if meta.get("pages"):
        start, _, end = meta["pages"].partition("-")
        entry["start_page"] = start
        if end:
            entry["end_page"] = end
    if ids.get("DOI"):
        entry["doi"] = ids["DOI"]
    if item.get("URL"):
        entry["urls"] = [item["URL"]]
    notes = [f"{k} {v}" for k, v in ids.items() if k != "DOI"] + [
        x for x in (item.get("note"), meta.get("license") and f"Licence: {meta['license']}") if x
    ]
    if notes:
        entry["notes"] = notes
    # one line per tag: a line break inside a value would start a new tag
    return {
        k: ([" ".join(str(x).split()) for x in v] if isinstance(v, list) else " ".join(str(v).split()))
        for k, v in entry.items()
    }


def to_ris(sources: list[dict]) -> str:
    import rispy

    class Writer(rispy.RisWriter):
        def set_header(self, count: int) -> str:  # no `1.` line before each entry: RIS starts at TY
            return ""

    return rispy.dumps([ris_entry(s) for s in entries(sources)], implementation=Writer)
