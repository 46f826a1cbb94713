"""Faults, pacing, bad input and secrets, against stub HTTP servers on 127.0.0.1."""

import json
import subprocess
import sys
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build as build_iterative
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.fakes import researcher
from tests.stub_openai import StubOpenAI

QUESTION = "Who designed the Eiffel Tower, and why was it built?"
KEY = "sk-FAKE-secret-0123456789abcdef"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def run_iterative(ctx, question=QUESTION):
    graph = build_iterative(checkpointer=InMemorySaver())
    events, final = [], None
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}
    for mode, chunk in graph.stream({"question": question}, config, context=ctx, stream_mode=["custom", "values"]):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    return final, events


def stub_ctx(stub, **kw):
    return Context(model="openai:stub", base_url=stub.base_url, **kw)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_completes_with_30pct_429_and_10pct_5xx(key, seed):
    with StubOpenAI(researcher(complete_after=2), rate_429=0.3, rate_5xx=0.1, retry_after=0.01, seed=seed) as stub:
        final, events = run_iterative(stub_ctx(stub, max_retries=8))
    assert stub.faults > 0
    assert final["stopped_by"] == "complete"
    assert citations_resolve(final)
    retries = [e for e in events if e["type"] == "error" and e.get("retrying")]
    assert len(retries) == stub.faults  # every fault was seen and retried
    assert final["usage"]["llm_calls"] == len(stub.requests) - stub.faults


def test_retry_after_is_honoured(key):
    with StubOpenAI(researcher(), rate_429=1.0, retry_after=0.4) as stub:
        final, events = run_iterative(stub_ctx(stub, max_retries=2, max_iterations=1))
    # every call failed: 3 attempts each, spaced by the server's Retry-After
    gaps = [b - a for a, b in zip(stub.start_times, stub.start_times[1:3])]
    assert all(g >= 0.35 for g in gaps), gaps
    assert final["stopped_by"] == "error"
    assert final["report"].startswith("#") and "Partial report" in final["report"]
    failed = [e for e in events if e["type"] == "error" and not e.get("retrying")]
    # the capable model's concept proposal and the writer: both failed for good, nothing else was asked
    assert [e["node"] for e in failed] == ["thinking", "writer"] and "RateLimitError" in failed[-1]["cause"]


def test_dropped_connections_and_timeouts_are_retried(key):
    with StubOpenAI(researcher(), rate_drop=0.3, seed=4) as stub:
        final, _ = run_iterative(stub_ctx(stub, max_retries=8))
    assert stub.faults > 0 and final["stopped_by"] == "complete"
    with StubOpenAI(researcher(), latency=0.6) as stub:
        final, events = run_iterative(stub_ctx(stub, request_timeout=0.3, max_retries=1, max_iterations=1))
    assert any("Timeout" in e.get("cause", "") for e in events if e["type"] == "error")
    assert final["stopped_by"] == "error" and final["report"]


def test_malformed_json_forever_still_ends_with_a_report(key):
    def respond(kind, prompt, n):
        if kind != "text":
            return "{not json at all"
        return researcher()(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        final, events = run_iterative(stub_ctx(stub, max_iterations=3))
    methods = [r["body"].get("response_format", {}).get("type") or ("tools" if r["body"].get("tools") else "text")
               for r in stub.requests]
    methods = [m for m in methods if m != "text"]  # thinking and the writer ask for text
    # json_schema, then function calling, then json mode, each retried once with the error shown
    assert methods[:6] == ["json_schema", "json_schema", "tools", "tools", "json_object", "json_object"]
    second = [r for r in stub.requests if r["body"].get("response_format", {}).get("type") == "json_schema"][1]
    assert "not valid" in second["body"]["messages"][-1]["content"]
    errors = [e for e in events if e["type"] == "error"]
    assert errors and [e["node"] for e in errors[:2]] == ["thinking", "knowledge_gap"]
    assert all("structured output" in e["cause"] for e in errors[:2])
    assert final["stopped_by"] == "error"
    assert final["report"].startswith("#") and "## Sources" in final["report"]


def test_server_rejecting_strict_json_schema_falls_back(key):
    def respond(kind, prompt, n):
        return researcher()(kind, prompt, n)

    class Rejecting(StubOpenAI):
        pass

    stub = StubOpenAI(respond)
    original = stub.respond

    def reject_schema(kind, prompt, n):
        body = stub.requests[n]["body"]
        if body.get("response_format", {}).get("type") == "json_schema":
            return 400, {"error": {"message": "response_format json_schema is not supported"}}
        return original(kind, prompt, n)

    stub.respond = reject_schema
    with stub:
        final, events = run_iterative(stub_ctx(stub, max_iterations=2))
    assert final["stopped_by"] == "complete"
    assert any(r["body"].get("tools") for r in stub.requests)  # function calling took over


def test_search_faults_are_retried_and_a_dead_search_is_skipped(key, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        return [{"title": f"Page {query}", "url": f"https://example.org/{abs(hash(query))}",
                 "content": f"The Eiffel Tower and {query}."}]

    faults = 0
    for seed in (1, 2, 3):
        with StubOpenAI(researcher(complete_after=2)) as model, \
                StubOpenAI(search=search, search_rate_429=0.3, search_rate_5xx=0.1, seed=seed) as web:
            final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url))
        faults += web.faults
        assert final["stopped_by"] == "complete" and final["sources"]
        assert not [e for e in events if e["type"] == "error"]  # every fault was absorbed by a retry
    assert faults > 0
    with StubOpenAI(researcher(complete_after=2)) as model, StubOpenAI(search=search, search_rate_5xx=1.0) as web:
        final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url, max_retries=1))
    failed = [e for e in events if e["type"] == "error" and e["node"] == "execute_tools"]
    assert len(failed) >= 2  # each query failed and was skipped; the loop went on
    # nothing covers the question's concepts: the loop searched until its iteration limit
    assert final["stopped_by"] == "max_iterations" and final["report"]


def test_pacing_limits_concurrent_model_calls(key):
    with StubOpenAI(deep_responder(4), latency=0.1) as stub:
        graph = build_deep(checkpointer=InMemorySaver())
        ctx = stub_ctx(stub, model_concurrency=2, max_iterations=2, writer="single")
        final, _, _ = run_deep(graph, ctx, {"configurable": {"thread_id": "pace"}, "max_concurrency": 4},
                               {"question": "Eiffel overview"})
    assert final["report"] and len(final["sections"]) == 4
    assert stub.peak == 2  # four sections in parallel, never more than two calls in flight


def test_pacing_limits_requests_per_minute(key):
    with StubOpenAI(deep_responder(3)) as stub:
        graph = build_deep(checkpointer=InMemorySaver())
        ctx = stub_ctx(stub, model_rpm=240, max_iterations=2, writer="single")  # one request per 0.25 s
        run_deep(graph, ctx, {"configurable": {"thread_id": "rpm"}}, {"question": "Eiffel overview"})
    times = stub.start_times
    assert len(times) >= 8
    assert times[-1] - times[0] >= 0.25 * (len(times) - 1) * 0.9


def test_pacing_limits_concurrent_searches(key, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")
    import time

    def search(query):
        time.sleep(0.05)
        return [{"title": "P", "url": f"https://example.org/{abs(hash(query))}", "content": "Eiffel"}]

    with StubOpenAI(deep_responder(4)) as model, StubOpenAI(search=search) as web:
        graph = build_deep(checkpointer=InMemorySaver())
        ctx = stub_ctx(model, search="tavily", search_base_url=web.root_url, search_concurrency=1,
                       max_iterations=2, writer="single")
        run_deep(graph, ctx, {"configurable": {"thread_id": "space"}}, {"question": "Eiffel overview"})
    assert len(web.requests) >= 4 and web.peak == 1


def test_empty_question_inside_a_graph_is_a_clear_error(key):
    with pytest.raises(ValueError, match="question is empty"):
        run_iterative(Context(), question="   ")


# --- the CLI: bad input, faults and secrets ------------------------------------------------

def cli(args, env, timeout=300):
    return subprocess.run([sys.executable, "-m", "deepresearch.cli", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_docs_folder_with_binary_huge_and_odd_files(cli_env, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("The Eiffel Tower was designed by Gustave Eiffel's company.\n")
    (docs / "binary.txt").write_bytes(b"\x00\x01\x02" * 1000)
    (docs / "latin1.txt").write_bytes("Gustave Eiffel \xe9tait ing\xe9nieur.".encode("latin-1"))
    (docs / "huge.txt").write_text("Eiffel tower iron. " * 300_000)  # ~5.7 MB: read in part
    with StubOpenAI(researcher()) as stub:
        cli_env["OPENAI_API_KEY"] = KEY
        r = cli([QUESTION, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url,
                 "--search", f"docs:{docs}", "--json", "--db", str(tmp_path / "r.sqlite")], cli_env)
    assert r.returncode == 0, r.stderr
    assert "skipped 1 unreadable file(s)" in r.stderr and "binary.txt" in r.stderr
    out = json.loads(r.stdout)
    assert out["report"] and out["sources"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "photo.jpg").write_bytes(b"\xff\xd8")
    r = cli(["q", "--search", f"docs:{empty}"], cli_env)
    assert r.returncode == 2 and "has no" in r.stderr and "Traceback" not in r.stderr


def test_cli_under_injected_faults_exits_0_and_says_what_went_wrong(cli_env, tmp_path):
    with StubOpenAI(researcher(complete_after=2), rate_429=0.2, rate_5xx=0.1, retry_after=0.01, seed=7) as stub:
        cli_env["OPENAI_API_KEY"] = KEY
        r = cli([QUESTION, "--mode", "iterative", "--model", "openai:stub", "--base-url", stub.base_url,
                 "--db", str(tmp_path / "r.sqlite")], cli_env)
    assert r.returncode == 0, r.stderr
    assert stub.faults > 0 and "retry" in r.stderr and "HTTP 429" in r.stderr
    assert "## Sources" in r.stdout


def test_the_key_appears_nowhere(cli_env, tmp_path):
    db = tmp_path / "runs.sqlite"
    with StubOpenAI(deep_responder(2), rate_429=0.3, retry_after=0.01, echo_auth=True, seed=3) as stub:
        cli_env["OPENAI_API_KEY"] = KEY
        cli_env["TAVILY_API_KEY"] = "tvly-FAKE-tavily-secret-99"
        r = cli([QUESTION, "--mode", "deep", "--model", "openai:stub", "--base-url", stub.base_url, "--json",
                 "--max-iterations", "1", "--db", str(db)], cli_env)
        assert r.returncode == 0, r.stderr
        r2 = cli(["threads", "--db", str(db), "--json"], cli_env)
    assert any(KEY in json.dumps(req["headers"]) for req in stub.requests)  # it was sent to the server ...
    assert "error" in r.stderr and "injected fault" in r.stderr  # ... which quoted it back in errors
    for text in (r.stdout, r.stderr, r2.stdout, r2.stderr):
        assert KEY not in text and "tvly-FAKE-tavily-secret-99" not in text
    for f in tmp_path.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert KEY.encode() not in data and b"tvly-FAKE-tavily-secret-99" not in data, f


def test_a_slow_search_cannot_carry_the_run_past_its_time_budget(key, monkeypatch):
    import time as _time

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        _time.sleep(5)
        return [{"title": "Late", "url": "https://example.org/late", "content": "Too late."}]

    with StubOpenAI(researcher()) as model, StubOpenAI(search=search) as web:
        final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url, max_seconds=3))
    assert final["usage"]["seconds"] <= 3
    assert any("time budget" in e.get("cause", "") for e in events if e["type"] == "error")
    assert final["report"]


def test_nested_event_fields_and_stored_urls_carry_no_secrets(monkeypatch):
    from langgraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    from deepresearch.events import emit
    from deepresearch.runner import run_config

    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    class S(TypedDict, total=False):
        x: int

    def node(state):
        emit("looping", iteration=1, gaps=[f"a gap quoting {KEY}"], usage={"note": KEY})
        return {"x": 1}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    events = [e for e in g.compile().stream({}, stream_mode="custom")]
    assert events and KEY not in json.dumps(events)
    config = run_config("t", Context(base_url="http://user:tok-secret@host:8000/v1"), "iterative", "q")
    assert "tok-secret" not in json.dumps(config) and "http://host:8000/v1" in config["metadata"]["dr_context"]
