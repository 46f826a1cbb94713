"""arXiv through its API (`GET /api/query`, an Atom feed).

arXiv's terms ask for no more than one request every three seconds, on a single
connection at a time: a shared window pacer holds that for the whole process. Errors come
back as a feed whose one entry is titled "Error"; throttling as a plain-text body.
"""

from __future__ import annotations

import re

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from deepresearch.pacing import window
from deepresearch.tools import http
from deepresearch.tools.base import SearchError, SearchResult
from deepresearch.tools.metadata import split_name

BASE_URL = "https://export.arxiv.org/api"
NS = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
_ABS = re.compile(r"arxiv\.org/abs/(.+?)(v\d+)?$")
_WORD = re.compile(r"[\w\-.]+", re.UNICODE)


def search_query(query: str) -> str:
    """Keywords as an arXiv query: every word in any field (`all:a AND all:b`)."""
    words = [w.strip("-.") for w in _WORD.findall(query)]
    words = [w for w in words if w and w.upper() not in ("AND", "OR", "ANDNOT")][:8]
    return " AND ".join(f"all:{w}" for w in words) or "all:*"


def _text(el) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def parse_feed(xml: bytes) -> list[SearchResult]:
    try:
        root = ElementTree.fromstring(xml)
    except (ElementTree.ParseError, DefusedXmlException) as e:
        raise SearchError(f"arxiv: malformed response ({type(e).__name__})") from None
    if root.tag != f"{{{NS['a']}}}feed":
        raise SearchError("arxiv: malformed response (not an Atom feed)")
    out = []
    for entry in root.findall("a:entry", NS):
        entry_id = _text(entry.find("a:id", NS))
        title = _text(entry.find("a:title", NS))
        if "/api/errors" in entry_id or title == "Error":
            raise SearchError(f"arxiv: {_text(entry.find('a:summary', NS))[:200] or 'error'}")
        m = _ABS.search(entry_id)
        if not m:
            continue
        arxiv_id = m.group(1)
        authors = [_text(a.find("a:name", NS)) for a in entry.findall("a:author", NS)]
        summary = _text(entry.find("a:summary", NS))
        ids = {"arXiv": arxiv_id}
        doi = _text(entry.find("arxiv:doi", NS))
        if doi:
            ids["DOI"] = doi
        shown = ", ".join(authors[:8]) + (" et al." if len(authors) > 8 else "")
        text = "\n".join(x for x in (title, f"Authors: {shown}." if authors else "", summary) if x)
        published = _text(entry.find("a:published", NS))[:10]
        meta = {
            "type": "preprint",
            "authors": [split_name(a) for a in authors],
            "date": published,
            "year": published[:4],
            "venue": "arXiv",
        }
        out.append(
            SearchResult(
                title=title or f"arXiv {arxiv_id}",
                url=f"https://arxiv.org/abs/{arxiv_id}",
                text=text,
                backend="arxiv",
                ids=ids,
                meta=meta,
            )
        )
    return out


class ArxivSearch:
    name = "arxiv"

    def __init__(self, base_url: str | None = None, timeout: float = 30.0, max_retries: int = 4):
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries

    def search(self, query: str, k: int) -> list[SearchResult]:
        limit = window("arxiv", self.base_url, 1, 3.0, one_at_a_time=True)
        r = http.get(
            self.name,
            f"{self.base_url}/query",
            {"search_query": search_query(query), "start": 0, "max_results": k, "sortBy": "relevance"},
            timeout=self.timeout,
            max_retries=self.max_retries,
            limit=limit,
            ok=(200, 400),
        )
        return parse_feed(r.content)[:k]
