"""Bibliographic metadata on every source: each scholarly backend's real response shape (stub
servers answering from the APIs' own formats), the web, documents and the encyclopedia; kept on
the source in state, in the run's store and in the result; a field the source lacks stays empty."""

import os

import pytest

from deepresearch.config import Context
from deepresearch.runtime.runner import research
from deepresearch.tools.arxiv import ArxivSearch
from deepresearch.tools.base import SearchResult
from deepresearch.tools.clinicaltrials import ClinicalTrialsSearch
from deepresearch.tools.docs import DocsSearch
from deepresearch.tools.europepmc import EuropePMCSearch
from deepresearch.tools.pubmed import PubMedSearch
from deepresearch.tools.tavily import web_meta
from deepresearch.tools.wiki import WikiSearch
from tests.source_helpers import cite_all
from tests.stub_sources import StubSources


@pytest.fixture(scope="module")
def stub():
    with StubSources() as s:
        yield s


def test_pubmed_authors_journal_date_volume_pages(stub):
    found = {r.ids["PMID"]: r for r in PubMedSearch(base_url=stub.base("pubmed")).search("aspirin", 3)}
    meta = found["39000001"].meta
    assert meta["type"] == "article"
    assert meta["authors"] == [{"family": "Moreau", "given": "Claire"}, {"family": "Okafor", "given": "Daniel"}]
    assert (meta["year"], meta["date"], meta["venue"]) == ("2024", "2024-07", "Journal of Cardiovascular Prevention")
    assert (meta["volume"], meta["issue"], meta["pages"]) == ("12", "4", "201-210")
    assert found["39000001"].ids["DOI"] == "10.5555/jcp.2024.0001"


def test_europepmc_article_and_preprint(stub):
    found = {r.url: r.meta for r in EuropePMCSearch(base_url=stub.base("europepmc")).search("aspirin", 5)}
    article = found["https://europepmc.org/article/MED/39000002"]
    assert article["type"] == "article" and article["year"] == "2023" and article["volume"] == "7"
    assert article["authors"] == [{"family": "Lindqvist", "given": "E"}, {"family": "Haddad", "given": "R"}]
    preprint = found["https://europepmc.org/article/PPR/PPR800001"]
    assert preprint["type"] == "preprint" and preprint["venue"] == "bioRxiv" and preprint["date"] == "2024-02-03"
    assert "volume" not in preprint and "pages" not in preprint  # not given: left empty, never guessed


def test_arxiv_preprint_with_authors_and_published_date(stub):
    found = {r.ids["arXiv"]: r.meta for r in ArxivSearch(base_url=stub.base("arxiv")).search("graph neural", 3)}
    meta = found["2401.00001"]
    assert meta == {
        "type": "preprint",
        "year": "2024",
        "date": "2024-01-01",
        "venue": "arXiv",
        "authors": [{"family": "Ferreira", "given": "Ana"}, {"family": "Wrobel", "given": "Tomasz"}],
    }


def test_clinicaltrials_record_with_sponsor_and_posting_date(stub):
    found = {
        r.ids["NCT"]: r.meta for r in ClinicalTrialsSearch(base_url=stub.base("clinicaltrials")).search("aspirin", 3)
    }
    meta = found["NCT09000001"]
    assert meta["type"] == "webpage" and meta["publisher"] == "ClinicalTrials.gov"
    assert meta["authors"] == [{"literal": "Example University Hospital"}] and meta["date"] == "2021-09-20"


def test_web_documents_and_encyclopedia(tmp_path):
    assert web_meta({"url": "https://www.example.org/a", "published_date": "Tue, 05 Mar 2024 10:00:00 GMT"}) == {
        "type": "webpage",
        "site": "example.org",
        "date": "2024-03-05",
        "year": "2024",
    }
    bare = SearchResult("t", "https://example.org/a", "x", "tavily", meta=web_meta({"url": "https://example.org/a"}))
    assert bare.meta == {"type": "webpage", "site": "example.org"}  # no date given: none kept
    (tmp_path / "notes.md").write_text("Bees dance to show where flowers are.", encoding="utf-8")
    os.utime(tmp_path / "notes.md", (1700000000, 1700000000))
    [doc] = DocsSearch(tmp_path).search("bees dance", 1)
    assert doc.meta == {"type": "document", "file": "notes.md", "modified": "2023-11-14"}
    [article] = WikiSearch().search("Eiffel Tower", 1)
    assert article.meta["license"] == "CC BY-SA 4.0" and article.meta["publisher"] == "Wikipedia"


def test_metadata_is_data_capped_and_masked(monkeypatch):
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-secret-0123456789")
    r = SearchResult(
        "t",
        "https://example.org",
        "x",
        "pubmed",
        meta={
            "venue": "J \u202eevil\nncbi-secret-0123456789",
            "authors": [{"family": "A" * 900}, "x", {}],
            "type": "novel",
            "extra": "dropped",
        },
    )
    assert r.meta["venue"] == "J evil ***" and "type" not in r.meta and "extra" not in r.meta
    assert r.meta["authors"] == [{"family": "A" * 300}]


def test_a_run_keeps_metadata_on_its_sources_in_state_store_and_result(fake_model, stub):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    model, _ = fake_model(cite_all())
    store = InMemoryStore()
    urls = {n: stub.base(n) for n in ("pubmed", "clinicaltrials", "europepmc", "arxiv")}
    out = research(
        "Does aspirin prevent heart attacks?",
        Context(model=model, search="pubmed,arxiv", search_base_urls=urls, max_iterations=1),
        mode="iterative",
        checkpointer=InMemorySaver(),
        store=store,
    )
    by_url = {s["url"]: s for s in out["sources"]}
    assert (
        by_url["https://pubmed.ncbi.nlm.nih.gov/39000001/"]["meta"]["venue"] == "Journal of Cardiovascular Prevention"
    )
    assert by_url["https://arxiv.org/abs/2401.00001"]["meta"]["type"] == "preprint"
    kept = [item.value for ns in store.list_namespaces(prefix=("deepresearch", "texts")) for item in store.search(ns)]
    assert any((v.get("meta") or {}).get("venue") == "Journal of Cardiovascular Prevention" for v in kept)
