"""Europe PMC through its REST search (`GET /search`, JSON, the `core` result type).

No key, no published per-second limit (429 is retried after its Retry-After). Each result
links to its Europe PMC page, or to its DOI when it has no Europe PMC id.
"""

from __future__ import annotations

import html
import re
from typing import Any

from deepresearch.tools import http
from deepresearch.tools.base import SearchError, SearchResult
from deepresearch.tools.metadata import initials_name

BASE_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest"
_TAG = re.compile(r"<[^>]{0,200}>")


def plain(text) -> str:
    """Europe PMC's titles and abstracts carry HTML (<i>, <h4>…): keep the words."""
    return " ".join(html.unescape(_TAG.sub(" ", str(text or ""))).split())


def _object(value: object) -> dict[str, Any]:
    """`value` when the record holds an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def record_result(rec: dict) -> SearchResult | None:
    if not isinstance(rec, dict):
        return None
    title = plain(rec.get("title"))
    source, rid, doi = rec.get("source"), rec.get("id"), rec.get("doi")
    if source and rid:
        url = f"https://europepmc.org/article/{source}/{rid}"
    elif doi:
        url = f"https://doi.org/{doi}"
    else:
        return None
    ids = {
        label: str(rec[key]) for key, label in (("pmid", "PMID"), ("pmcid", "PMCID"), ("doi", "DOI")) if rec.get(key)
    }
    if not ids and source and rid:
        ids = {source: str(rid)}
    info = _object(rec.get("journalInfo"))
    journal = info["journal"].get("title", "") if isinstance(info.get("journal"), dict) else ""
    year = rec.get("pubYear") or ""
    where = ", ".join(str(x) for x in (journal, year) if x)
    text = "\n".join(x for x in (title, f"{where}." if where else "", plain(rec.get("abstractText"))) if x)
    return SearchResult(
        title=title or url, url=url, text=text, backend="europepmc", ids=ids, meta=record_meta(rec, info, journal)
    )


def _authors(rec: dict) -> list[dict]:
    """The core result's authorList ({lastName, firstName}), else its authorString
    (`Lindqvist E, Haddad R.`)."""
    listed = (rec.get("authorList") or {}).get("author") if isinstance(rec.get("authorList"), dict) else None
    if isinstance(listed, list) and listed:
        out = []
        for a in listed:
            if isinstance(a, dict) and a.get("lastName"):
                out.append({"family": a["lastName"], **({"given": a["firstName"]} if a.get("firstName") else {})})
            elif isinstance(a, dict) and (a.get("collectiveName") or a.get("fullName")):
                out.append({"literal": a.get("collectiveName") or a["fullName"]})
        return out
    return [initials_name(n) for n in str(rec.get("authorString") or "").split(",") if n.strip()]


def record_meta(rec: dict, info: dict, journal: str) -> dict:
    """The citation fields of a core result: a preprint (source PPR) names its server as venue."""
    preprint = rec.get("source") == "PPR" or "Preprint" in ((rec.get("pubTypeList") or {}).get("pubType") or [])
    book = _object(rec.get("bookOrReportDetails"))
    return {
        "type": "preprint" if preprint else "article",
        "authors": _authors(rec),
        "year": str(rec.get("pubYear") or ""),
        "date": str(rec.get("firstPublicationDate") or ""),
        "venue": journal or (book.get("publisher") if preprint else "") or "",
        "volume": info.get("volume") or "",
        "issue": info.get("issue") or "",
        "pages": rec.get("pageInfo") or "",
    }


class EuropePMCSearch:
    name = "europepmc"

    def __init__(self, base_url: str | None = None, timeout: float = 30.0, max_retries: int = 4):
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries

    def search(self, query: str, k: int) -> list[SearchResult]:
        r = http.get(
            self.name,
            f"{self.base_url}/search",
            {"query": query, "format": "json", "resultType": "core", "pageSize": k},
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        try:
            data = r.json()
        except ValueError:
            raise SearchError("europepmc: malformed response (not JSON)") from None
        results = (data.get("resultList") or {}).get("result") if isinstance(data, dict) else None
        if results is None and isinstance(data, dict) and data.get("hitCount") == 0:
            return []
        if not isinstance(results, list):
            raise SearchError("europepmc: malformed response (no resultList)")
        return [res for res in map(record_result, results[:k]) if res is not None]
