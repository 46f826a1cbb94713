"""A stub of the specialist search APIs on 127.0.0.1, answering from fixtures in each
API's own format (tests/fixtures/sources):

    /eutils/esearch.fcgi, /eutils/efetch.fcgi   NCBI E-utilities (JSON ids, PubmedArticleSet XML)
    /ctgov/studies                              ClinicalTrials.gov API v2
    /epmc/search                                Europe PMC REST search (core, JSON)
    /arxiv/query                                arXiv API (Atom)

    with StubSources() as stub:
        PubMedSearch(base_url=stub.base("pubmed")).search("aspirin", 3)

Faults are queued per route and served in order before normal answers:
`stub.fail("esearch", (429, 2), 500, "malformed", "empty")`: a 429 with Retry-After 2, a
500, a body that is not the format, an empty result. `ncbi_limit=3` makes the E-utilities
routes answer 429 like NCBI does when more than 3 requests arrived in the last second.
`arrival_delay={0: 0.6}` holds the first request to come in for 0.6 s on its way (a slow
network path, or a client thread that lost the CPU after it started the request): the
server sees it, counts it and logs it then, after requests that came in later.
`echo_key=True`: efetch's records quote the `api_key` they were asked with (titles and
abstracts), as a careless server might.
`peak`: the most requests being answered at once. Every request is logged with its arrival time (time.monotonic()), the order it came in (`n`),
route and parameters.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.loopback import Loopback

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sources"
ROUTES = {
    "esearch": "/eutils/esearch.fcgi",
    "efetch": "/eutils/efetch.fcgi",
    "ctgov": "/ctgov/studies",
    "epmc": "/epmc/search",
    "arxiv": "/arxiv/query",
}
BASES = {"pubmed": "/eutils", "clinicaltrials": "/ctgov", "europepmc": "/epmc", "arxiv": "/arxiv"}
EMPTY_QUERY = "zzqx"  # a query term every route answers with no results


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def efetch_subset(ids: list[str]) -> str:
    """The efetch fixture with only the PubmedArticles of `ids` (its DOCTYPE kept)."""
    text = fixture("efetch.xml")
    head = text[: text.index("<PubmedArticleSet>")]
    articles = re.findall(r"<PubmedArticle>.*?</PubmedArticle>", text, re.S)
    keep = [a for a in articles if re.search(r"<PMID[^>]*>(\d+)</PMID>", a).group(1) in ids]
    return head + "<PubmedArticleSet>\n" + "\n".join(keep) + "\n</PubmedArticleSet>\n"


class StubSources(Loopback):
    def __init__(
        self,
        ncbi_limit: int | None = None,
        latency: float = 0.0,
        arrival_delay: dict[int, float] | None = None,
        echo_key: bool = False,
    ):
        self.ncbi_limit = ncbi_limit
        self.echo_key = echo_key  # efetch's records quote the api_key they were asked with (a careless server)
        self.latency = latency
        self.arrival_delay = dict(arrival_delay or {})  # {n: seconds}: the n-th request in (from 0) arrives late
        self._came_in = 0
        self.lock = threading.Lock()
        self.log: list[dict] = []
        self.faults: dict[str, deque] = {r: deque() for r in ROUTES}
        self.served_429 = 0
        self.in_flight = self.peak = 0  # requests being answered, and the most at once
        self._ncbi_recent: deque[float] = deque()
        super().__init__()

    def base(self, backend: str) -> str:
        return self.root + BASES[backend]

    def fail(self, route: str, *actions) -> None:
        self.faults[route].extend(actions)

    def requests(self, route: str) -> list[dict]:
        with self.lock:
            return [r for r in self.log if r["route"] == route]

    def _handler(stub):  # noqa: N805 - the closure needs the stub
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _send(self, status: int, body: str, ctype: str, headers: dict | None = None):
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                with stub.lock:
                    stub.in_flight += 1
                    stub.peak = max(stub.peak, stub.in_flight)
                try:
                    self._answer()
                finally:
                    with stub.lock:
                        stub.in_flight -= 1

            def _answer(self):
                with stub.lock:
                    n = stub._came_in
                    stub._came_in += 1
                if stub.arrival_delay.get(n):
                    time.sleep(stub.arrival_delay[n])
                now = time.monotonic()
                parts = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                route = next((r for r, p in ROUTES.items() if parts.path == p), None)
                with stub.lock:
                    stub.log.append({"t": now, "n": n, "route": route, "params": params})
                    action = stub.faults[route].popleft() if route and stub.faults[route] else None
                    over = False
                    if route in ("esearch", "efetch") and stub.ncbi_limit:
                        while stub._ncbi_recent and now - stub._ncbi_recent[0] >= 1.0:
                            stub._ncbi_recent.popleft()
                        over = len(stub._ncbi_recent) >= stub.ncbi_limit
                        stub._ncbi_recent.append(now)
                if route is None:
                    return self._send(404, "not found", "text/plain")
                if stub.latency:
                    time.sleep(stub.latency)
                if over:  # what NCBI answers past its limit (its body quotes the key it saw)
                    with stub.lock:
                        stub.served_429 += 1
                    body = json.dumps(
                        {
                            "error": "API rate limit exceeded",
                            "api-key": params.get("api_key", ""),
                            "count": "4",
                            "limit": str(stub.ncbi_limit),
                        }
                    )
                    return self._send(429, body, "application/json", {"Retry-After": "1"})
                if isinstance(action, tuple) and action[0] == 429:
                    return self._send(
                        429,
                        json.dumps({"error": "rate limited", "api-key": params.get("api_key", "")}),
                        "application/json",
                        {"Retry-After": str(action[1])},
                    )
                if isinstance(action, tuple) and action[0] == "fixture":
                    return self._send(action[1], fixture(action[2]), "application/octet-stream")
                if action in (500, 502, 503):
                    return self._send(
                        action,
                        f"<html><body>Internal error; key={params.get('api_key', '')}</body></html>",
                        "text/html",
                    )
                if action == 400:
                    return self._send(400, "bad request", "text/plain")
                if action == "malformed":
                    return self._send(200, "<html><body>Service temporarily unavailable</body></html>", "text/html")
                empty = action == "empty" or EMPTY_QUERY in json.dumps(params)
                getattr(self, f"_{route}")(params, empty)

            def _esearch(self, params, empty):
                data = json.loads(fixture("esearch_empty.json" if empty else "esearch.json"))
                ids = data["esearchresult"]["idlist"][: int(params.get("retmax", 20))]
                data["esearchresult"]["idlist"] = ids
                data["esearchresult"]["retmax"] = str(len(ids))
                self._send(200, json.dumps(data), "application/json; charset=UTF-8")

            def _efetch(self, params, empty):
                ids = [] if empty else params.get("id", "").split(",")
                body = efetch_subset(ids)
                if stub.echo_key:  # the key in every title and abstract
                    key = params.get("api_key", "")
                    body = body.replace("<ArticleTitle>", f"<ArticleTitle>(served for {key}) ")
                    body = body.replace(
                        '<AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">',
                        f'<AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Key {key}. ',
                    )
                self._send(200, body, "text/xml; charset=UTF-8")

            def _ctgov(self, params, empty):
                data = json.loads(fixture("ctgov_studies.json"))
                data["studies"] = [] if empty else data["studies"][: int(params.get("pageSize", 10))]
                if empty:
                    data.pop("nextPageToken")
                self._send(200, json.dumps(data), "application/json")

            def _epmc(self, params, empty):
                data = json.loads(fixture("europepmc_search.json"))
                results = [] if empty else data["resultList"]["result"][: int(params.get("pageSize", 25))]
                data["resultList"]["result"] = results
                data["hitCount"] = len(results)
                self._send(200, json.dumps(data), "application/json;charset=UTF-8")

            def _arxiv(self, params, empty):
                self._send(
                    200,
                    fixture("arxiv_empty.xml" if empty else "arxiv_query.xml"),
                    "application/atom+xml; charset=utf-8",
                )

        return Handler


def max_in_window(times: list[float], seconds: float = 1.0) -> int:
    """The most requests that arrived within any `seconds`-long window."""
    times = sorted(times)
    best, j = 0, 0
    for i, t in enumerate(times):
        while t - times[j] >= seconds:
            j += 1
        best = max(best, i - j + 1)
    return best
