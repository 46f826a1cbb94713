"""Secrets echoed by a source are masked where sources enter the run: a
PubMed that quotes the run's NCBI_API_KEY in its records and an MCP server that echoes a value
of its configured `env` into its results. Neither value reaches stdout, stderr, the --json
output or the checkpoint database (the text store included)."""

import json
import subprocess
import sys
from pathlib import Path

from deepresearch.tools.base import SearchResult
from tests.stub_openai import StubOpenAI
from tests.stub_sources import StubSources
from tests.test_multi_search import QUESTION, picker

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
NCBI_KEY = "ncbi-key-7c4e2a9b1d"
ECHO_SECRET = "echo-Secret-3b8f0d6a2c"


def test_echoed_keys_are_masked_before_anything_is_stored_or_shown(cli_env, tmp_path):
    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "echo": {
                        "command": sys.executable,
                        "args": [str(SERVERS / "echo_server.py")],
                        "env": {"ECHO_SECRET": ECHO_SECRET},
                    }
                }
            }
        )
    )
    db = tmp_path / "runs.sqlite"
    with StubSources(echo_key=True) as sources, StubOpenAI(picker()) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        cli_env["NCBI_API_KEY"] = NCBI_KEY
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "deepresearch.cli",
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                model.base_url,
                "--search",
                "wiki,pubmed",
                "--search-base-url",
                f"pubmed={sources.base('pubmed')}",
                "--mcp",
                str(cfg),
                "--json",
                "--db",
                str(db),
            ],
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        fetched = sources.requests("efetch")
    assert r.returncode == 0, r.stderr
    assert fetched and all(q["params"].get("api_key") == NCBI_KEY for q in fetched)  # the stub did see the key
    out = json.loads(r.stdout)
    backends = {s["backend"] for s in out["sources"]}
    assert {"pubmed", "echo/search_echo"} <= backends, backends  # both echoing sources were used and cited
    assert "(served for ***)" in r.stdout and "token=***" in r.stdout  # masked, not dropped
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("runs.sqlite*"))
    for secret in (NCBI_KEY, ECHO_SECRET):
        assert secret not in r.stdout and secret not in r.stderr
        assert secret.encode() not in stored


def test_every_result_is_masked_at_its_creation(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-abcdefgh12345678")
    r = SearchResult(
        title="About tvly-abcdefgh12345678",
        url="https://x.example/?k=tvly-abcdefgh12345678",
        text="x" * 49_990 + "tvly-abcdefgh12345678",
        backend="tavily",
        ids={"DOI": "tvly-abcdefgh12345678"},
    )
    assert "tvly-abcdefgh12345678" not in r.title + r.url + r.text + json.dumps(r.ids)
    assert r.text.endswith("*") and len(r.text) <= 50_000  # masked before it was cut: no half secret


def test_the_secrets_masked_are_the_environments_as_it_is_now(monkeypatch):
    """The environment's keys are read at every event from CPython's own table of os.environ:
    a key set, changed or removed a moment ago is what counts, as with os.environ.get."""
    import os

    from deepresearch import events

    names = events.SECRET_ENV
    for step, (name, value) in enumerate(
        [
            (names[0], "sk-first-0123456789"),
            (names[1], "tvly-second-0123456789"),
            (names[0], "sk-changed-0123456789"),
            (names[0], None),
            (names[-1], "ünï-0123456789"),
        ]
    ):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
        assert events._environment(names) == [os.environ[n] for n in names if os.environ.get(n) is not None], step
        assert sorted(events.secrets()) == sorted(
            {v for n in names if len(v := os.environ.get(n) or "") >= 6} | events._registered
        )  # (and what other tests registered)
    assert "sk-changed-0123456789" not in events.redact("key sk-changed-0123456789 here") and "***" in events.redact(
        "key tvly-second-0123456789"
    )
