"""A round of web searches encodes only what its ranking needs: nothing when each search returned no
more results than are kept (no over-fetch either), and one embeddings request for the whole round
when searches returned more. Against a Tavily-like stub and an OpenAI-compatible /embeddings stub,
both on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from deepresearch.config import Context
from deepresearch.llm.budget import Budget
from deepresearch.tools.searching import run_searches
from tests.stub_openai import StubOpenAI


class _Embeddings(BaseHTTPRequestHandler):
    requests: list[int] = []  # texts per request

    def do_POST(self):  # noqa: N802 - the standard library's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(len(body["input"]))
        data = [
            {"index": i, "embedding": [b / 255 for b in hashlib.sha256(t.encode()).digest()[:8]]}
            for i, t in enumerate(body["input"])
        ]
        reply = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@pytest.fixture
def embeddings_url():
    _Embeddings.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _pages(count: int):
    def search(query: str) -> list[dict]:
        return [
            {
                "title": f"{query} page {i}",
                "url": f"https://example.org/{abs(hash(query))}/{i}",
                "content": f"On {query}.",
            }
            for i in range(count)
        ]

    return search


def _round(stub: StubOpenAI, embeddings_url: str, queries: list[str]) -> list[dict]:
    ctx = Context(
        model="openai:stub",
        search="tavily",
        search_base_url=stub.root_url,
        embeddings="openai:stub-embed",
        embeddings_base_url=embeddings_url,
        results_per_query=3,
    )
    budget = Budget(max_tokens=10**6, max_seconds=60, max_iterations=3)
    found, errors, _ = run_searches(ctx, budget, [{"query": q} for q in queries], [], round_no=1)
    assert not errors, errors
    return found


def test_searches_that_return_what_is_kept_are_not_encoded_and_ask_for_no_more(monkeypatch, embeddings_url):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-not-a-real-key")
    with StubOpenAI(respond=lambda *a: "") as stub:
        stub.search = _pages(3)
        found = _round(stub, embeddings_url, ["heron bridges", "rotterdam tunnels"])
        asked = [r["body"].get("max_results") for r in stub.requests if r["path"].endswith("/search")]
    assert len(found) == 6
    assert _Embeddings.requests == []  # nothing to choose between: nothing encoded
    assert asked == [3, 3]  # the results kept, not twice as many


def test_a_rounds_searches_that_return_more_are_ranked_from_one_embeddings_request(monkeypatch, embeddings_url):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-not-a-real-key")
    with StubOpenAI(respond=lambda *a: "") as stub:
        stub.search = _pages(5)
        found = _round(stub, embeddings_url, ["heron bridges", "rotterdam tunnels", "delft canals"])
    assert len(found) == 9  # three kept of each search's five
    assert _Embeddings.requests == [3 + 3 * 5]  # one request: the round's queries and all their results
