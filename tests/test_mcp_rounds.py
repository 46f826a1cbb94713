"""MCP tools in the research loop: the first round searches the run's MCP search
tools as it searches each `--search` source, and a server that never answers a tool call is
bounded by the run's time budget (its start, its session and its call)."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.nodes.tool_selector import MAX_FIRST_TOOLS, first_round_tools
from deepresearch.runtime.runner import research
from deepresearch.tools.mcp import cached_tools, load_config
from deepresearch.tools.registry import Tool
from tests.fakes import researcher
from tests.stub_openai import StubOpenAI
from tests.test_multi_search import picker

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
BEES = "How do honey bees navigate?"
QUESTION = "Who built the Eiffel Tower?"
HANG_BUDGET_S = 11  # room for a loaded machine's first steps; the request timeout is three times more


def server(script: str, **env) -> dict:
    return {"command": sys.executable, "args": [str(SERVERS / script)], "env": env}


def complete_at_once(kind, prompt, n):
    """A model that judges the research complete after the first round."""
    if kind == "KnowledgeGapOutput":
        return {"research_complete": True, "outstanding_gaps": []}
    return picker()(kind, prompt, n)


# --- item 1: the first round searches the configured MCP tools ------------------------------


def test_the_first_round_takes_sources_and_servers_in_turn_up_to_its_cap():
    tools = [
        Tool("wiki", "", "wiki"),
        Tool("pubmed", "", "pubmed"),
        Tool("clinicaltrials", "", "clinicaltrials"),
        Tool("a/x", "a's first"),
        Tool("a/y", "a's second"),
        Tool("b/z", "b's first"),
    ]
    assert MAX_FIRST_TOOLS == 4
    assert [t.name for t in first_round_tools(tools)] == ["wiki", "a/x", "pubmed", "b/z"]
    # fewer sources than the cap: a server's other tools fill the rest
    assert [t.name for t in first_round_tools(tools[:1] + tools[3:5])] == ["wiki", "a/x", "a/y"]
    assert [t.name for t in first_round_tools(tools[:3])] == ["wiki", "pubmed", "clinicaltrials"]


def test_a_configured_mcp_tool_is_searched_when_the_default_source_covers_the_question(fake_model, warm):
    model, _ = fake_model(complete_at_once)
    events = []
    config = {"mcpServers": {"notes": server("notes_server.py", NOTES_TOKEN="notes-token-5f1e9a7c3b")}}
    out = research(
        BEES,
        Context(model=model, search="wiki", mcp_servers=config, max_iterations=3),
        mode="iterative",
        checkpointer=InMemorySaver(),
        on_event=events.append,
    )
    # one round covered the question (a broad question's second round explores its related topics)
    assert out["stopped_by"] == "complete" and out["usage"]["iterations"] <= 2
    searched = [(e["tool"], e["query"]) for e in events if e["type"] == "searching"]
    # the question went to wiki and to the server's tools, in the first round
    assert [t for t, q in searched if q == BEES] == [
        "wiki",
        "notes/search_notes",
        "notes/plain_note",
        "notes/failing_lookup",
    ]
    done = {e["tool"]: e["results"] for e in events if e["type"] == "search_complete" and e["query"] == BEES}
    assert done["notes/plain_note"] == 1  # the server answered with its note


# --- item 8: a server that never answers is bounded by the time budget -----------------------


@pytest.mark.parametrize("hang", ["tool-call", "listing"])
def test_a_hanging_mcp_server_is_bounded_by_the_time_budget(fake_model, warm, hang):
    """The server lists its tools and never answers a call (or never answers the listing): the
    run still ends on its time budget, with the wiki's sources and a report. The request
    timeout (45 s) is far above the budget: only the time left may bound the server."""
    model, _ = fake_model(researcher(complete_after=99))
    args = ["--hang-list"] if hang == "listing" else []
    config = {
        "mcpServers": {"archive": {"command": sys.executable, "args": [str(SERVERS / "hanging_server.py"), *args]}}
    }
    if hang == "tool-call":  # list its tools first (kept for the process), as an earlier run would have
        assert cached_tools(load_config(config), 30)[0]
    events = []
    out = research(
        QUESTION,
        Context(
            model=model,
            search="wiki",
            mcp_servers=config,
            max_seconds=HANG_BUDGET_S,
            max_iterations=20,
            request_timeout=45,
        ),
        mode="iterative",
        checkpointer=InMemorySaver(),
        on_event=events.append,
    )
    assert out["stopped_by"] == "max_seconds", out["usage"]
    assert out["usage"]["seconds"] <= HANG_BUDGET_S  # the budget held (the product's promise, not a test bound)
    assert out["report"].startswith("#") and out["sources"], [(e["type"], e.get("cause")) for e in events]
    failed = [e for e in events if e["type"] == "error" and e.get("tool") in ("archive", "archive/search_archive")]
    assert failed  # the server's silence is an error event, and the run went on
    if hang == "tool-call":
        assert ("archive/search_archive", QUESTION) in {
            (e["tool"], e["query"]) for e in events if e["type"] == "searching"
        }


def _running_with(marker: str) -> list[int]:
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_cli_a_server_stuck_in_a_call_ends_with_the_run(cli_env, tmp_path):
    """Through the CLI: the run ends on its budget with a report, and the server stuck in the
    call does not outlive the program (the session would close it only later). A first run on a
    fresh index folder: loading the encyclopedia and the embedding model is start-up, done before
    the run's first step, so however long a loaded machine takes, the run keeps its budget."""
    marker = f"run-{uuid.uuid4().hex}"  # an argument the server ignores, to find its process
    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "archive": {"command": sys.executable, "args": [str(SERVERS / "hanging_server.py"), marker]}
                }
            }
        )
    )
    cli_env["DEEPRESEARCH_INDEX_DIR"] = str(tmp_path / "index")  # nothing built: the vectors neither
    with StubOpenAI(researcher(complete_after=99)) as model:
        cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
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
                "--mcp",
                str(cfg),
                "--max-seconds",
                "20",
                "--max-iterations",
                "50",
                "--json",
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["stopped_by"] == "max_seconds", out["usage"]
    assert out["usage"]["seconds"] <= 20, out["usage"]  # the budget held (the product's promise, not a test bound)
    assert out["sources"], r.stderr
    lines = r.stderr.splitlines()
    loaded = next(i for i, line in enumerate(lines) if "vectors are not built yet" in line)  # said at loading
    assert loaded < next(i for i, line in enumerate(lines) if "started: " in line), r.stderr
    assert "searching (archive/search_archive)" in r.stderr  # the call that never ended
    assert _running_with(marker) == []
