"""ClinicalTrials.gov through its API v2 (`GET /api/v2/studies`, JSON).

No key. ClinicalTrials.gov publishes no per-second limit; a 429 is retried after its
Retry-After like any other provider's.
"""

from __future__ import annotations

from deepresearch.tools import http
from deepresearch.tools.base import SearchError, SearchResult

BASE_URL = "https://clinicaltrials.gov/api/v2"


def _words(value: str) -> str:
    """An API enum (`ACTIVE_NOT_RECRUITING`, `PHASE2`, `NA`) in words."""
    if value == "NA":
        return "Not applicable"
    if value == "ACTIVE_NOT_RECRUITING":
        return "Active, not recruiting"
    words = value.replace("_", " ").lower()
    for n in "1234":
        words = words.replace(f"phase{n}", f"phase {n}")
    return words[:1].upper() + words[1:]


def study_result(study: dict) -> SearchResult | None:
    p = study.get("protocolSection") if isinstance(study, dict) else None
    if not isinstance(p, dict):
        return None
    ident = p.get("identificationModule") or {}
    nct = str(ident.get("nctId") or "")
    if not nct.upper().startswith("NCT"):
        return None
    title = ident.get("briefTitle") or ident.get("officialTitle") or nct
    status = (p.get("statusModule") or {}).get("overallStatus")
    phases = (p.get("designModule") or {}).get("phases") or []
    conditions = (p.get("conditionsModule") or {}).get("conditions") or []
    interventions = [
        f"{_words(i.get('type', ''))}: {i.get('name')}" if i.get("type") else str(i.get("name"))
        for i in (p.get("armsInterventionsModule") or {}).get("interventions") or []
        if isinstance(i, dict) and i.get("name")
    ]
    summary = (p.get("descriptionModule") or {}).get("briefSummary") or ""
    facts = []
    if status:
        facts.append(f"Status: {_words(status)}.")
    if phases:
        facts.append(f"Phase: {', '.join(_words(x) for x in phases)}.")
    if conditions:
        facts.append(f"Conditions: {', '.join(map(str, conditions))}.")
    if interventions:
        facts.append(f"Interventions: {'; '.join(interventions)}.")
    text = "\n".join(x for x in (title, " ".join(facts), summary.strip()) if x)
    sponsor = ((p.get("sponsorCollaboratorsModule") or {}).get("leadSponsor") or {}).get("name")
    dates = p.get("statusModule") or {}
    posted = (dates.get("studyFirstPostDateStruct") or {}).get("date")  # the record's first posting
    # a registry record is cited as a web page of the registry; its sponsor is its author
    meta = {
        "type": "webpage",
        "publisher": "ClinicalTrials.gov",
        "site": "clinicaltrials.gov",
        "authors": [{"literal": sponsor}] if sponsor else [],
        "date": posted or "",
        "year": str(posted or "")[:4],
    }
    return SearchResult(
        title=title,
        url=f"https://clinicaltrials.gov/study/{nct}",
        text=text,
        backend="clinicaltrials",
        ids={"NCT": nct},
        meta=meta,
    )


class ClinicalTrialsSearch:
    name = "clinicaltrials"

    def __init__(self, base_url: str | None = None, timeout: float = 30.0, max_retries: int = 4):
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries

    def search(self, query: str, k: int) -> list[SearchResult]:
        r = http.get(
            self.name,
            f"{self.base_url}/studies",
            {"query.term": query, "pageSize": k, "format": "json", "countTotal": "false"},
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        try:
            data = r.json()
        except ValueError:
            raise SearchError("clinicaltrials: malformed response (not JSON)") from None
        studies = data.get("studies") if isinstance(data, dict) else None
        if not isinstance(studies, list):
            raise SearchError("clinicaltrials: malformed response (no studies list)")
        return [res for res in map(study_result, studies[:k]) if res is not None]
