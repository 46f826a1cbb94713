"""The specialist backends against stub servers in each API's format: PubMed (E-utilities),
ClinicalTrials.gov v2, Europe PMC, arXiv; retries with Retry-After, 500s, empty results,
malformed bodies, the time budget, NCBI's rate limit and the API key kept out of errors."""

import threading
import time

import pytest

from deepresearch.pacing import WaitTooLong, Window
from deepresearch.tools import check_base_urls, check_search_spec, get_search, split_specs
from deepresearch.tools.arxiv import ArxivSearch, search_query
from deepresearch.tools.base import SearchError, identifiers_text, search_deadline
from deepresearch.tools.clinicaltrials import ClinicalTrialsSearch
from deepresearch.tools.europepmc import EuropePMCSearch
from deepresearch.tools.pubmed import PubMedSearch
from tests.stub_sources import StubSources, max_in_window


@pytest.fixture
def stub():
    with StubSources() as s:
        yield s


# --- PubMed --------------------------------------------------------------------------------


def test_pubmed_esearch_then_efetch_titles_abstracts_and_identifiers(stub, monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    results = PubMedSearch(base_url=stub.base("pubmed")).search("aspirin myocardial infarction", 2)
    assert [r.url for r in results] == [
        "https://pubmed.ncbi.nlm.nih.gov/39000001/",
        "https://pubmed.ncbi.nlm.nih.gov/39000002/",
    ]
    first = results[0]
    assert first.title == "Low-dose aspirin for the primary prevention of myocardial infarction: a randomized trial."
    assert first.backend == "pubmed"
    assert first.ids == {"PMID": "39000001", "PMCID": "PMC11000001", "DOI": "10.5555/jcp.2024.0001"}
    assert "Journal of Cardiovascular Prevention, 2024." in first.text
    assert "Results: Low-dose aspirin reduced the rate of first myocardial infarction by 18%" in first.text
    assert "thromboxane A 2 production" in first.text or "thromboxane A2 production" in first.text
    assert "Platelet Biology Reports, 2023." in results[1].text  # a MedlineDate gives the year
    search, fetch = stub.requests("esearch"), stub.requests("efetch")
    assert search[0]["params"] == {
        "db": "pubmed",
        "tool": "deepresearch",
        "term": "aspirin myocardial infarction",
        "retmax": "2",
        "retmode": "json",
        "sort": "relevance",
    }
    assert fetch[0]["params"]["id"] == "39000001,39000002" and fetch[0]["params"]["retmode"] == "xml"
    assert "api_key" not in search[0]["params"]


def test_pubmed_record_without_abstract_keeps_its_title(stub):
    results = PubMedSearch(base_url=stub.base("pubmed")).search("aspirin", 3)
    assert results[2].ids == {"PMID": "39000003"}
    assert results[2].text.startswith("Aspirin resistance in patients with type 2 diabetes.")


def test_pubmed_empty_result_makes_no_efetch(stub):
    assert PubMedSearch(base_url=stub.base("pubmed")).search("zzqx", 3) == []
    assert len(stub.requests("esearch")) == 1 and stub.requests("efetch") == []


def test_pubmed_429_waits_the_retry_after_then_succeeds(stub):
    stub.fail("esearch", (429, 1))
    results = PubMedSearch(base_url=stub.base("pubmed"), max_retries=2).search("aspirin", 1)
    assert [r.ids["PMID"] for r in results] == ["39000001"]
    first, second = stub.requests("esearch")
    assert second["t"] - first["t"] >= 1.0  # the server's Retry-After was honoured


def test_pubmed_500_then_success_and_500s_that_never_stop(stub):
    stub.fail("efetch", 500)
    assert len(PubMedSearch(base_url=stub.base("pubmed"), max_retries=2).search("aspirin", 3)) == 3
    assert len(stub.requests("efetch")) == 2
    stub.fail("esearch", 500, 500)
    with pytest.raises(SearchError, match=r"pubmed: HTTP 500 \(gave up after 2 attempts\)"):
        PubMedSearch(base_url=stub.base("pubmed"), max_retries=1).search("aspirin", 3)


@pytest.mark.parametrize("route", ["esearch", "efetch"])
def test_pubmed_malformed_bodies_are_clear_errors(stub, route):
    stub.fail(route, "malformed")
    with pytest.raises(SearchError, match=f"pubmed: malformed {route} response"):
        PubMedSearch(base_url=stub.base("pubmed")).search("aspirin", 3)


def test_pubmed_api_key_is_sent_and_never_in_an_error(stub, monkeypatch):
    key = "ncbi0123456789abcdef0123456789abcd"
    monkeypatch.setenv("NCBI_API_KEY", key)
    stub.fail("esearch", 500, 500, (429, 0), (429, 0))  # the stub's error bodies quote the key
    for _ in range(2):
        with pytest.raises(SearchError) as e:
            PubMedSearch(base_url=stub.base("pubmed"), max_retries=1).search("aspirin", 3)
        assert key not in str(e.value) and "api_key" not in str(e.value)
    assert all(r["params"]["api_key"] == key for r in stub.requests("esearch"))


def test_a_retry_after_past_the_time_budget_is_not_waited_for(stub):
    stub.fail("esearch", (429, 30))
    with search_deadline(time.monotonic() + 2.0), pytest.raises(SearchError, match="time budget"):
        PubMedSearch(base_url=stub.base("pubmed"), max_retries=4).search("aspirin", 3)
    assert len(stub.requests("esearch")) == 1


def test_no_request_once_the_deadline_has_passed(stub):
    with search_deadline(time.monotonic() - 1), pytest.raises(SearchError, match="no time left"):
        PubMedSearch(base_url=stub.base("pubmed")).search("aspirin", 3)
    assert stub.log == []


def test_ncbi_limit_holds_for_many_threads_at_once(monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    with StubSources(ncbi_limit=3) as stub:
        backend = PubMedSearch(base_url=stub.base("pubmed"))
        threads = [threading.Thread(target=backend.search, args=(f"aspirin {i}", 2)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        times = [r["t"] for r in stub.log]
        assert len(times) == 12
        assert max_in_window(times) <= 3
        assert stub.served_429 == 0


def test_ncbi_limit_holds_when_a_request_arrives_after_later_ones(monkeypatch):
    """The server counts arrivals, and a request can reach it after requests started later
    (its thread lost the CPU, the network held it): the limit still holds as the server saw it."""
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    with StubSources(ncbi_limit=3, arrival_delay={0: 0.6}) as stub:
        backend = PubMedSearch(base_url=stub.base("pubmed"))
        threads = [threading.Thread(target=backend.search, args=(f"aspirin {i}", 2)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert stub.log[0]["n"] > 0  # the request held on its way was seen after others
        times = [r["t"] for r in stub.log]
        assert max_in_window(times) <= 3
        assert stub.served_429 == 0
        assert len(times) == 6  # each search's esearch and efetch, none retried


def test_window_pacer_holds_a_request_until_a_window_after_it_ended():
    """A request may reach the server as late as its response comes back: the next one
    starts a whole window after the earlier one ended, not after it started."""
    w = Window(1, 0.3)
    marks, started = {}, threading.Event()

    def slow():
        with w.slot():
            started.set()
            time.sleep(0.5)
            marks["done"] = time.monotonic()

    t = threading.Thread(target=slow)
    t.start()
    started.wait()
    with w.slot():
        marks["next"] = time.monotonic()
    t.join()
    assert marks["next"] - marks["done"] >= 0.3


def test_window_pacer_gives_up_waiting_on_a_request_in_flight_at_the_deadline():
    w = Window(1, 1.0)
    release, started = threading.Event(), threading.Event()

    def hold():
        with w.slot():
            started.set()
            release.wait()

    t = threading.Thread(target=hold)
    t.start()
    started.wait()
    try:
        with pytest.raises(WaitTooLong, match="time budget"):
            with w.slot(deadline=time.monotonic() + 0.2):
                pass
    finally:
        release.set()
        t.join()


def test_window_pacer_counts_starts_per_window():
    w = Window(3, 0.5)
    starts, lock = [], threading.Lock()

    def go():
        with w.slot():
            with lock:
                starts.append(time.monotonic())

    threads = [threading.Thread(target=go) for _ in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(starts) == 9 and max_in_window(starts, 0.5) <= 3
    assert max(starts) - min(starts) >= 1.0  # three windows of three


# --- ClinicalTrials.gov -------------------------------------------------------------------


def test_clinicaltrials_studies_as_sources(stub):
    results = ClinicalTrialsSearch(base_url=stub.base("clinicaltrials")).search("aspirin coronary", 2)
    assert [r.url for r in results] == [
        "https://clinicaltrials.gov/study/NCT09000001",
        "https://clinicaltrials.gov/study/NCT09000002",
    ]
    r = results[0]
    assert r.title == "Aspirin Dosing in Adults With Coronary Artery Disease" and r.backend == "clinicaltrials"
    assert r.ids == {"NCT": "NCT09000001"}
    for part in (
        "Status: Active, not recruiting.",
        "Phase: Phase 3.",
        "Conditions: Coronary Artery Disease, Myocardial Infarction.",
        "Interventions: Drug: Aspirin 81 mg; Drug: Aspirin 325 mg.",
        "compares 81 mg and 325 mg",
    ):
        assert part in r.text
    assert "Phase: Phase 2, Phase 3." in results[1].text
    assert stub.requests("ctgov")[0]["params"]["query.term"] == "aspirin coronary"
    assert stub.requests("ctgov")[0]["params"]["pageSize"] == "2"


def test_clinicaltrials_empty_malformed_and_bad_request(stub):
    backend = ClinicalTrialsSearch(base_url=stub.base("clinicaltrials"), max_retries=0)
    assert backend.search("zzqx", 3) == []
    stub.fail("ctgov", "malformed", 400)
    with pytest.raises(SearchError, match="clinicaltrials: malformed response"):
        backend.search("aspirin", 3)
    with pytest.raises(SearchError, match="clinicaltrials: HTTP 400"):
        backend.search("aspirin", 3)


# --- Europe PMC ---------------------------------------------------------------------------


def test_europepmc_core_results_with_plain_text_and_links(stub):
    results = EuropePMCSearch(base_url=stub.base("europepmc")).search("aspirin platelets", 3)
    article, preprint = results
    assert article.url == "https://europepmc.org/article/MED/39000002"
    assert article.title == "How aspirin blocks platelet aggregation: the cyclooxygenase pathway revisited."
    assert article.ids == {"PMID": "39000002", "DOI": "10.5555/pbr.2023.0077"}
    assert "<h4>" not in article.text and "Background Aspirin acetylates a serine residue" in article.text
    assert "Platelet Biology Reports, 2023." in article.text
    assert preprint.url == "https://europepmc.org/article/PPR/PPR800001"
    assert preprint.ids == {"DOI": "10.1101/2024.02.01.000001"}
    params = stub.requests("epmc")[0]["params"]
    assert params["resultType"] == "core" and params["format"] == "json" and params["query"] == "aspirin platelets"


def test_europepmc_empty_and_malformed(stub):
    backend = EuropePMCSearch(base_url=stub.base("europepmc"))
    assert backend.search("zzqx", 3) == []
    stub.fail("epmc", "malformed")
    with pytest.raises(SearchError, match="europepmc: malformed response"):
        backend.search("aspirin", 3)


# --- arXiv --------------------------------------------------------------------------------


def test_arxiv_atom_entries_as_sources(stub):
    results = ArxivSearch(base_url=stub.base("arxiv")).search("graph neural", 3)
    first, second = results
    assert first.title == "Message Passing on Sparse Graphs: A Study of Neural Diffusion"
    assert first.url == "https://arxiv.org/abs/2401.00001"
    assert first.ids == {"arXiv": "2401.00001", "DOI": "10.5555/gnn.2024.01"}
    assert "Authors: Ana Ferreira, Tomasz Wrobel." in first.text
    assert "converges to a heat equation" in first.text
    assert second.url == "https://arxiv.org/abs/math/0601001" and second.ids == {"arXiv": "math/0601001"}
    params = stub.requests("arxiv")[0]["params"]
    assert params["search_query"] == "all:graph AND all:neural" and params["max_results"] == "3"


def test_arxiv_error_feed_over_http_and_bodies_that_are_no_feed(stub):
    stub.fail("arxiv", ("fixture", 400, "arxiv_error.xml"))
    with pytest.raises(SearchError, match="arxiv: start must be non-negative"):
        ArxivSearch(base_url=stub.base("arxiv")).search("graphs", 3)
    from deepresearch.tools.arxiv import parse_feed
    from tests.stub_sources import fixture

    assert parse_feed(fixture("arxiv_empty.xml").encode()) == []
    with pytest.raises(SearchError, match="arxiv: malformed response"):
        parse_feed(b"Rate exceeded.")  # arXiv's throttling answer
    with pytest.raises(SearchError, match="arxiv: malformed response"):
        parse_feed(b"<feed><entry>")


def test_arxiv_keeps_one_request_every_three_seconds(stub):
    backend = ArxivSearch(base_url=stub.base("arxiv"))
    stub.fail("arxiv", 503)
    backend_b = ArxivSearch(base_url=stub.base("arxiv") + "/")  # the same API: the same pacer
    threads = [threading.Thread(target=b.search, args=("graphs", 1)) for b in (backend, backend_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = sorted(r["t"] for r in stub.requests("arxiv"))
    assert len(times) == 3  # a 503 retried, and a second search
    assert all(b - a >= 3.0 for a, b in zip(times, times[1:]))


def test_arxiv_query_words():
    assert search_query("graph neural networks") == "all:graph AND all:neural AND all:networks"
    assert search_query("AND or (quantum) gravity") == "all:quantum AND all:gravity"  # no stray operators


# --- specs ---------------------------------------------------------------------------------


def test_specs_lists_and_base_urls():
    assert split_specs(" wiki , pubmed,wiki,,clinicaltrials ") == ["wiki", "pubmed", "clinicaltrials"]
    check_search_spec("wiki,pubmed,clinicaltrials,europepmc,arxiv")
    with pytest.raises(ValueError, match="unknown search backend 'bing'"):
        check_search_spec("wiki,bing")
    with pytest.raises(ValueError, match="no search backend"):
        check_search_spec(" , ")
    with pytest.raises(ValueError, match="only tavily, pubmed"):
        check_base_urls({"wiki": "http://127.0.0.1:1"})
    with pytest.raises(ValueError, match="must be an http"):
        check_base_urls({"pubmed": "ftp://example.org"})
    assert get_search("pubmed", base_url="http://127.0.0.1:9/x").base_url == "http://127.0.0.1:9/x"
    assert identifiers_text({"PMID": "1", "DOI": "10.1/x"}) == "PMID 1, DOI 10.1/x"
