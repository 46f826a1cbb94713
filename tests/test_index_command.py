"""The encyclopedia's vectors are built at set-up (`deepresearch index`), not by a run: until they
exist a search ranks by words alone and says so once on stderr; after, it ranks by meaning too.
The embedder is a provider's OpenAI-compatible /embeddings endpoint, a stub on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from tests.helpers import cli


class _Embeddings(BaseHTTPRequestHandler):
    texts = 0

    def do_POST(self):  # noqa: N802 - the standard library's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).texts += len(body["input"])
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
    _Embeddings.texts = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


class Counting:
    """An embedder of our own that records what it is asked to encode."""

    model_id = "counting-index"

    def __init__(self):
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        return np.ones((len(texts), 4), np.float32) / 2


def test_without_vectors_a_search_ranks_by_words_says_so_once_and_builds_nothing(tmp_path, capsys):
    from deepresearch.tools.wiki import NOT_BUILT, WikiSearch

    embedder = Counting()
    wiki = WikiSearch(cache_root=tmp_path, embedder=embedder)
    words = [wiki.articles[d]["title"] for d, _ in wiki.index.top("Who built the Eiffel Tower?", 3)]
    assert [r.title for r in wiki.search("Who built the Eiffel Tower?", 3)] == words
    wiki.search("Where do humpback whales migrate?", 3)
    assert capsys.readouterr().err.count(NOT_BUILT) == 1  # one line, once
    assert embedder.encoded == 0 and not wiki.vectors_ready()  # nothing encoded: the run did not wait


def test_the_index_command_builds_the_vectors_once_and_a_search_then_ranks_by_meaning(
    cli_env, tmp_path, embeddings_url, capsys
):
    cli_env["DEEPRESEARCH_INDEX_DIR"] = str(tmp_path / "indexes")
    cli_env["OPENAI_API_KEY"] = "sk-test-not-a-real-key"
    args = ["index", "--embeddings", "openai:stub-embed", "--embeddings-base-url", embeddings_url]
    r = cli([*args, "--quiet"], cli_env)
    assert r.returncode == 0, r.stderr
    assert "encoded the encyclopedia: 10,033 summaries" in r.stderr
    assert _Embeddings.texts == 10_033
    again = cli(args, cli_env)
    assert again.returncode == 0 and "built already" in again.stderr, again.stderr
    assert _Embeddings.texts == 10_033  # nothing encoded the second time

    from deepresearch.embeddings.remote import RemoteEmbeddings
    from deepresearch.tools.wiki import NOT_BUILT, WikiSearch

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        wiki = WikiSearch(
            cache_root=tmp_path / "indexes", embedder=RemoteEmbeddings("openai:stub-embed", embeddings_url)
        )
        assert wiki.vectors_ready()
        wiki.search("Who built the Eiffel Tower?", 3)
    assert NOT_BUILT not in capsys.readouterr().err
    assert _Embeddings.texts == 10_034  # the query alone


def test_the_index_command_without_an_embedder_says_why_in_one_line(cli_env):
    r = cli(["index", "--embeddings", "none", "--quiet"], cli_env)
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
