"""`--embeddings` on the command line: a provider's OpenAI-compatible /embeddings endpoint (a stub
on 127.0.0.1 here) compares the run's texts by meaning; a spec that names nothing is bad input."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.helpers import cli


class _Embeddings(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802 - the standard library's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "model": body["model"], "texts": len(body["input"])})
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


def test_embeddings_from_a_provider_are_asked_for_the_runs_texts(cli_env, tmp_path):
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "heron.md").write_text("Project Heron drones inspected 412 bridges in 2026.\n")
    (docs / "team.md").write_text("Project Heron is led by the infrastructure team in Rotterdam.\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cli_env["OPENAI_API_KEY"] = "sk-test-not-a-real-key"
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        r = cli(
            ["How many bridges did Project Heron inspect?", "--search", f"docs:{docs}", "--embeddings"]
            + ["openai:stub-embed", "--embeddings-base-url", url, "--json"],
            cli_env,
        )
    finally:
        server.shutdown()
    assert r.returncode == 0, r.stderr
    assert _Embeddings.seen and {x["model"] for x in _Embeddings.seen} == {"stub-embed"}, _Embeddings.seen
    assert all(x["path"] == "/v1/embeddings" for x in _Embeddings.seen)
    assert "412" in json.loads(r.stdout)["report"]
    assert "sk-test-not-a-real-key" not in r.stdout + r.stderr


def test_an_embeddings_spec_that_names_nothing_is_one_line_and_exit_2(cli_env):
    r = cli(["What is jazz?", "--embeddings", "bogus:x"], cli_env)
    assert r.returncode == 2 and "unknown embeddings" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
