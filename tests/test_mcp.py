"""MCP tools: a real MCP server over stdio (tests/mcp_servers, written with the `mcp`
package's server API) listed, searched and used end to end by the CLI; a server that
fails to start and one that never answers; secrets kept out of events, output and
checkpoints."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.runtime.runner import research
from deepresearch.tools.mcp import MCPConfigError, MCPSearch, list_tools, load_config, public_config
from tests.stub_openai import StubOpenAI
from tests.test_multi_search import HISTORY_GAP, QUESTION, picker

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
TOKEN = "notes-token-5f1e9a7c3b"
BROKEN_SECRET = "broken-secret-8d2c6e4a1f"


def notes(env=None) -> dict:
    return {
        "command": sys.executable,
        "args": [str(SERVERS / "notes_server.py")],
        "env": {"NOTES_TOKEN": TOKEN} if env is None else env,
    }


def broken() -> dict:
    return {
        "command": sys.executable,
        "args": [str(SERVERS / "failing_server.py")],
        "env": {"BROKEN_SECRET": BROKEN_SECRET},
    }


def silent() -> dict:
    return {"command": sys.executable, "args": [str(SERVERS / "silent_server.py")]}


def cli(args, env, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "deepresearch.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def listed():
    servers = load_config({"mcpServers": {"notes": notes()}})
    tools, failures = list_tools(servers, 60)
    return servers, {t.tool: t for t in tools}, failures


def test_a_tool_taking_one_string_is_a_search_tool(listed):
    _, tools, failures = listed
    assert failures == {}
    assert set(tools) == {"search_notes", "plain_note", "failing_lookup", "add"}
    assert tools["search_notes"].query_arg == "query" and tools["search_notes"].count_arg == "max_results"
    assert tools["search_notes"].name == "notes/search_notes"
    assert tools["search_notes"].description == "Search my research notes by keywords."
    assert tools["add"].query_arg is None
    assert tools["add"].reason == "takes 2 required arguments; a search tool takes one string (a query)"


def test_results_with_a_url_and_stable_references_without_one(listed):
    servers, tools, _ = listed
    search = MCPSearch(tools["search_notes"], servers["notes"], timeout=60)
    first = search.search("aspirin Hoffmann", 3)
    assert [r.title for r in first] == ["Felix Hoffmann and aspirin", "Lab notebook, 12 March"]
    assert first[0].url == "https://notes.example.org/hoffmann"
    assert first[1].url.startswith("mcp://notes/search_notes/") and first[1].backend == "notes/search_notes"
    assert "fewer first heart attacks" in first[1].text
    assert search.search("aspirin notebook", 3)[1].url == first[1].url  # the same text, the same reference
    assert len(search.search("aspirin Hoffmann", 1)) == 1  # the count went to max_results
    note = MCPSearch(tools["plain_note"], servers["notes"], timeout=60).search("willow bark", 3)
    assert note[0].title == "Note about willow bark" and note[0].url.startswith("mcp://notes/plain_note/")


def test_a_tool_error_is_a_search_error_without_the_servers_secrets(listed):
    from deepresearch.tools.base import SearchError

    servers, tools, _ = listed
    with pytest.raises(SearchError) as e:
        MCPSearch(tools["failing_lookup"], servers["notes"], timeout=60).search("x", 3)
    assert "lookup service down" in str(e.value) and TOKEN not in str(e.value)


def test_a_server_that_fails_to_start_or_never_answers():
    servers = load_config({"mcpServers": {"broken": broken(), "silent": silent()}})
    tools, failures = list_tools(servers, 3)
    assert tools == []
    assert failures["broken"].startswith("MCP server 'broken' failed")
    assert "bad credentials ***" in failures["broken"] and BROKEN_SECRET not in failures["broken"]
    assert failures["silent"] == "MCP server 'silent' did not answer within 3s"


def test_a_server_over_streamable_http():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "notes_server.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):  # until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        servers = load_config(
            {
                "mcpServers": {
                    "web": {
                        "url": f"http://127.0.0.1:{port}/mcp",
                        "headers": {"Authorization": "Bearer hdr-secret-0a1b2c"},
                    }
                }
            }
        )
        assert servers["web"]["transport"] == "streamable_http"
        tools, failures = list_tools(servers, 30)
        assert failures == {}
        search = next(t for t in tools if t.tool == "search_notes")
        results = MCPSearch(search, servers["web"], timeout=30).search("Hoffmann", 3)
        assert [r.url for r in results] == ["https://notes.example.org/hoffmann"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    tools, failures = list_tools(servers, 5)  # the server is gone
    assert tools == [] and failures["web"].startswith("MCP server 'web' failed")
    assert "hdr-secret-0a1b2c" not in failures["web"]


@pytest.mark.parametrize(
    "config,message",
    [
        ({}, "needs servers"),
        ({"mcpServers": {"a b": {"command": "x"}}}, "use letters"),
        ({"mcpServers": {"x": {"args": []}}}, "needs a command"),
        ({"mcpServers": {"x": {"command": "python", "args": "server.py"}}}, "args a list of strings"),
        ({"mcpServers": {"x": {"command": "python", "env": {"K": 1}}}}, "env must map names to strings"),
        ({"mcpServers": {"x": {"url": "ftp://h/mcp"}}}, "url must be"),
        ({"mcpServers": {"x": {"url": "https://h/mcp", "transport": "pigeon"}}}, "transport must be"),
    ],
)
def test_bad_configs(config, message):
    with pytest.raises(MCPConfigError, match=message):
        load_config(config)


def test_config_forms_env_references_and_stored_settings(monkeypatch):
    monkeypatch.setenv("NOTES_TOKEN_VAR", "from-the-environment")
    servers = load_config(
        {
            "mcpServers": {
                "n": {"command": "python", "env": {"A": "${NOTES_TOKEN_VAR}", "B": "literal-secret-value"}},
                "h": {"url": "https://mcp.example/sse", "headers": {"Authorization": "Bearer ${NOTES_TOKEN_VAR}"}},
                "off": {"command": "python", "disabled": True},
            }
        }
    )
    assert servers["n"]["env"] == {"A": "from-the-environment", "B": "literal-secret-value"}
    assert servers["h"] == {
        "transport": "sse",
        "url": "https://mcp.example/sse",
        "headers": {"Authorization": "Bearer from-the-environment"},
    }
    assert "off" not in servers
    stored = public_config({"mcpServers": {"n": {"command": "python", "env": {"A": "${X}", "B": "literal-secret"}}}})
    assert stored == {"mcpServers": {"n": {"command": "python", "env": {"A": "${X}", "B": "***"}}}}
    monkeypatch.setenv("B", "read-again")
    assert load_config(stored)["n"]["env"]["B"] == "read-again"  # a masked value is read from the environment


# --- in a run ------------------------------------------------------------------------------


def test_a_failing_server_is_an_error_event_and_the_run_goes_on(fake_model):
    model, _ = fake_model(picker())
    saver = InMemorySaver()
    events = []
    config = {"mcpServers": {"broken": broken()}}
    out = research(
        QUESTION,
        Context(model=model, search="wiki", mcp_servers=config, max_iterations=2),
        mode="iterative",
        checkpointer=saver,
        on_event=events.append,
    )
    errors = [e for e in events if e["type"] == "error" and e.get("tool") == "broken"]
    assert len(errors) == 1 and errors[0]["cause"].startswith("MCP server 'broken' failed")
    assert out["report"] and out["sources"]
    everything = json.dumps(events) + json.dumps(out)
    stored = [json.dumps(c.metadata) + repr(c.checkpoint) for c in saver.list(None)]
    assert BROKEN_SECRET not in everything and not any(BROKEN_SECRET in s for s in stored)
    assert any('\\"BROKEN_SECRET\\": \\"***\\"' in s for s in stored)  # the stored settings, masked


def test_cli_tools_lists_search_tools_and_skipped_ones(tmp_path, cli_env):
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": notes()}}))
    r = cli(["tools", "--mcp", str(cfg)], cli_env)
    assert r.returncode == 0, r.stderr
    assert "pubmed" in r.stdout and "clinicaltrials" in r.stdout
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.startswith("  notes/")}
    assert "search tool: Search my research notes by keywords." in lines["notes/search_notes"]
    assert "skipped: takes 2 required arguments" in lines["notes/add"]
    assert TOKEN not in r.stdout + r.stderr
    r = cli(["tools", "--mcp", str(cfg), "--json"], cli_env)
    out = json.loads(r.stdout)
    assert {t["name"]: t["search"] for t in out["mcp_tools"]}["notes/add"] is False
    assert out["mcp_failures"] == {}


def test_cli_tools_with_a_failing_server(tmp_path, cli_env):
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": notes(), "broken": broken()}}))
    r = cli(["tools", "--mcp", str(cfg)], cli_env)
    assert r.returncode == 1
    assert "notes/search_notes" in r.stdout and "MCP server 'broken' failed" in r.stdout
    assert BROKEN_SECRET not in r.stdout + r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "content,message",
    [(None, "MCP config not found"), ("{not json", "is not valid JSON"), ('{"mcpServers": {}}', "needs servers")],
)
def test_cli_bad_mcp_config_exit_2(tmp_path, cli_env, content, message):
    cfg = tmp_path / "mcp.json"
    if content is not None:
        cfg.write_text(content)
    for args in (["q", "--mcp", str(cfg)], ["tools", "--mcp", str(cfg)]):
        r = cli(args, cli_env)
        assert r.returncode == 2 and message in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_cli_run_uses_an_mcp_search_tool_end_to_end(tmp_path, cli_env):
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"notes": notes(), "broken": broken()}}))

    def plan(tools):
        tool = next(name for name, d in tools.items() if "research notes" in d)
        return {"tasks": [{"gap": HISTORY_GAP, "tool": tool, "query": "Hoffmann aspirin notebook"}]}

    respond = picker(plan=plan)
    db = tmp_path / "runs.sqlite"
    with StubOpenAI(respond) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                model.base_url,
                "--search",
                "wiki",
                "--mcp",
                str(cfg),
                "--json",
                "--db",
                str(db),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    shown = respond.state["tools_seen"][0]
    assert {"wiki", "notes/search_notes", "notes/plain_note", "notes/failing_lookup"} == set(shown)  # not add
    assert "searching (notes/search_notes): Hoffmann aspirin notebook" in r.stderr
    assert "MCP server 'broken' failed" in r.stderr  # an error line, and the run went on
    mcp_sources = [s for s in out["sources"] if s["backend"] == "notes/search_notes"]
    urls = {s["url"] for s in mcp_sources}
    assert "https://notes.example.org/hoffmann" in urls
    ref = next(u for u in urls if u.startswith("mcp://notes/search_notes/"))
    assert f"— {ref}" in out["report"] and f"]({ref}" not in out["report"]  # text, not a link
    stored = "".join(f.read_bytes().decode("latin-1") for f in tmp_path.glob("runs.sqlite*"))
    assert str(cfg) in stored  # the run's settings keep the config's path, not its content
    everything = r.stdout + r.stderr + stored
    assert TOKEN not in everything and BROKEN_SECRET not in everything
    assert "notes server starting" not in r.stderr  # the server's stderr is not the CLI's
