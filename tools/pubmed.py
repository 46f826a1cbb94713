"""PubMed through NCBI's E-utilities: esearch for the PMIDs, efetch for titles and abstracts.

NCBI_API_KEY (optional, read at call time, never stored) raises NCBI's limit from 3 to 10
requests per second. Either limit is held for the whole process by a shared window
pacer, whatever the run's concurrency; each retry counts as a request.
"""

from __future__ import annotations

import os

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from deepresearch.pacing import window
from deepresearch.tools import http
from deepresearch.tools.base import SearchError, SearchResult
from deepresearch.tools.metadata import iso_date

BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
TOOL = "deepresearch"


def ncbi_limit() -> int:
    """NCBI's published limit: requests per second (10 with an API key, else 3)."""
    return 10 if os.environ.get("NCBI_API_KEY") else 3


def _text(el) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def parse_esearch(data) -> list[str]:
    if not isinstance(data, dict) or not isinstance(data.get("esearchresult"), dict):
        raise SearchError("pubmed: malformed esearch response")
    result = data["esearchresult"]
    if result.get("ERROR"):
        raise SearchError(f"pubmed: esearch error: {str(result['ERROR'])[:200]}")
    ids = result.get("idlist", [])
    if not isinstance(ids, list):
        raise SearchError("pubmed: malformed esearch response")
    return [str(i) for i in ids if str(i).isdigit()]


def _author(el) -> dict:
    if el.find("CollectiveName") is not None:
        return {"literal": _text(el.find("CollectiveName"))}
    given = _text(el.find("ForeName")) or _text(el.find("Initials"))
    return {"family": _text(el.find("LastName")), **({"given": given} if given else {})}


def article_meta(article, journal: str, year: str) -> dict:
    """The citation fields of a PubmedArticle's Article element."""
    if article is None:
        return {"type": "article"}
    issue = article.find("Journal/JournalIssue")
    date = issue.find("PubDate") if issue is not None else None
    kinds = {_text(t).lower() for t in article.findall("PublicationTypeList/PublicationType")}
    return {
        "type": "preprint" if "preprint" in kinds else "article",
        "authors": [_author(a) for a in article.findall("AuthorList/Author")],
        "year": year if year.isdigit() else "",
        "date": iso_date(_text(date.find("Year")), _text(date.find("Month")), _text(date.find("Day")))
        if date is not None
        else "",
        "venue": journal,
        "volume": _text(issue.find("Volume")) if issue is not None else "",
        "issue": _text(issue.find("Issue")) if issue is not None else "",
        "pages": _text(article.find("Pagination/MedlinePgn")),
    }


def parse_efetch(xml: bytes) -> dict[str, SearchResult]:
    """PubmedArticleSet XML -> {PMID: result}."""
    try:
        root = ElementTree.fromstring(xml)
    except (ElementTree.ParseError, DefusedXmlException) as e:
        raise SearchError(f"pubmed: malformed efetch response ({type(e).__name__})") from None
    if root.tag != "PubmedArticleSet":
        raise SearchError("pubmed: malformed efetch response (no PubmedArticleSet)")
    out = {}
    for art in root.iter("PubmedArticle"):
        pmid = _text(art.find("MedlineCitation/PMID"))
        if not pmid:
            continue
        article = art.find("MedlineCitation/Article")
        title = _text(article.find("ArticleTitle")) if article is not None else ""
        parts = []
        for a in article.findall("Abstract/AbstractText") if article is not None else []:
            label = a.get("Label")
            body = _text(a)
            parts.append(f"{label.capitalize()}: {body}" if label else body)
        journal = _text(article.find("Journal/Title")) if article is not None else ""
        date = article.find("Journal/JournalIssue/PubDate") if article is not None else None
        year = _text(date.find("Year")) if date is not None else ""
        if not year and date is not None:
            year = _text(date.find("MedlineDate"))[:4]
        ids = {"PMID": pmid}
        for aid in art.findall("PubmedData/ArticleIdList/ArticleId"):
            kind, value = aid.get("IdType"), _text(aid)
            if kind == "doi" and value:
                ids["DOI"] = value
            elif kind == "pmc" and value:
                ids["PMCID"] = value
        source = ", ".join(x for x in (journal, year) if x)
        text = "\n".join(x for x in (title, f"{source}." if source else "", "\n".join(parts)) if x)
        out[pmid] = SearchResult(
            title=title or f"PubMed {pmid}",
            url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
            text=text,
            backend="pubmed",
            ids=ids,
            meta=article_meta(article, journal, year),
        )
    return out


class PubMedSearch:
    name = "pubmed"

    def __init__(self, base_url: str | None = None, timeout: float = 30.0, max_retries: int = 4):
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries

    def _params(self) -> dict:
        params = {"db": "pubmed", "tool": TOOL}
        if os.environ.get("NCBI_EMAIL"):
            params["email"] = os.environ["NCBI_EMAIL"]
        if os.environ.get("NCBI_API_KEY"):
            params["api_key"] = os.environ["NCBI_API_KEY"]
        return params

    def _get(self, path: str, params: dict):
        limit = window("ncbi", self.base_url, ncbi_limit(), 1.0)
        return http.get(
            self.name,
            f"{self.base_url}/{path}",
            params,
            timeout=self.timeout,
            max_retries=self.max_retries,
            limit=limit,
        )

    def search(self, query: str, k: int) -> list[SearchResult]:
        common = self._params()
        r = self._get("esearch.fcgi", {**common, "term": query, "retmax": k, "retmode": "json", "sort": "relevance"})
        try:
            ids = parse_esearch(r.json())[:k]
        except ValueError:
            raise SearchError("pubmed: malformed esearch response (not JSON)") from None
        if not ids:
            return []
        r = self._get("efetch.fcgi", {**common, "id": ",".join(ids), "retmode": "xml", "rettype": "abstract"})
        found = parse_efetch(r.content)
        return [found[i] for i in ids if i in found]
