"""Faults, pacing, bad input and secrets, against stub HTTP servers on 127.0.0.1."""

import json
import threading
from collections import Counter

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.fakes import researcher
from tests.helpers import QUESTION, cli, run_iterative
from tests.stub_openai import StubOpenAI

KEY = "sk-FAKE-secret-0123456789abcdef"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def stub_ctx(stub, **kw):
    return Context(model="openai:stub", base_url=stub.base_url, **kw)


def attempts(stub) -> Counter:
    """How many times each distinct chat request was sent (a retry repeats the same body)."""
    return Counter(json.dumps(r["body"], sort_keys=True) for r in stub.requests if "/chat/" in r["path"])


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


def test_each_call_is_tried_max_retries_plus_one_times_waiting_retry_after(key):
    with StubOpenAI(researcher(), rate_429=1.0, retry_after=0.6) as stub:
        final, events = run_iterative(stub_ctx(stub, max_retries=2, max_iterations=1))
    # every call failed: each distinct request was sent exactly 1 + max_retries times
    sent = attempts(stub)
    assert sent and set(sent.values()) == {3}, sent
    # spaced by the server's Retry-After (0.6 s; the jittered backoff alone waits at most
    # 0.25 s, then 0.5 s)
    bodies = [json.dumps(r["body"], sort_keys=True) for r in stub.requests]
    for body in sent:
        times = [t for b, t in zip(bodies, stub.start_times) if b == body]
        assert all(b - a >= 0.6 for a, b in zip(times, times[1:])), times
    retries = [e for e in events if e["type"] == "error" and e.get("retrying")]
    assert len(retries) == 2 * len(sent)
    assert all(e["cause"].endswith(("retry 1 of 2 in 0.6s", "retry 2 of 2 in 0.6s")) for e in retries), retries
    assert final["stopped_by"] == "error"
    assert final["report"].startswith("#") and "Partial report" in final["report"]
    failed = [e for e in events if e["type"] == "error" and not e.get("retrying")]
    # the capable model's concept proposal and the writer: both failed for good, nothing else was asked
    assert [e["node"] for e in failed] == ["analyse", "writer"] and "RateLimitError" in failed[-1]["cause"]


def test_a_call_that_succeeds_on_its_last_retry_is_used(key):
    def respond(kind, prompt, n):
        if n < 4:  # the first call fails four times (max_retries), then succeeds
            return 503, {"error": {"message": "busy"}}
        return researcher()(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        final, events = run_iterative(stub_ctx(stub, max_retries=4, max_iterations=2))
    first = json.dumps(stub.requests[0]["body"], sort_keys=True)
    assert attempts(stub)[first] == 5
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert len([e for e in events if e["type"] == "error"]) == 4


def test_dropped_connections_are_retried(key):
    with StubOpenAI(researcher(), rate_drop=0.3, seed=4) as stub:
        final, _ = run_iterative(stub_ctx(stub, max_retries=8))
    assert stub.faults > 0 and final["stopped_by"] == "complete"
    assert citations_resolve(final)


def test_a_timed_out_call_is_retried(key):
    # the first request takes longer than the request timeout; its retry is answered at once
    with StubOpenAI(researcher(), latency=lambda n: 3.0 if n == 0 else 0) as stub:
        final, events = run_iterative(stub_ctx(stub, request_timeout=0.5, max_retries=1, max_iterations=2))
    first = json.dumps(stub.requests[0]["body"], sort_keys=True)
    assert attempts(stub)[first] == 2  # sent again after the timeout
    retried = [e for e in events if e["type"] == "error" and e.get("retrying")]
    assert len(retried) == 1 and "Timeout" in retried[0]["cause"]
    assert not [e for e in events if e["type"] == "error" and not e.get("retrying")]
    assert final["stopped_by"] == "complete" and citations_resolve(final)


def test_malformed_json_forever_still_ends_with_a_report(key):
    def respond(kind, prompt, n):
        if kind != "text":
            return "{not json at all"
        return researcher()(kind, prompt, n)

    with StubOpenAI(respond) as stub:
        final, events = run_iterative(stub_ctx(stub, max_iterations=3))
    methods = [
        r["body"].get("response_format", {}).get("type") or ("tools" if r["body"].get("tools") else "text")
        for r in stub.requests
    ]
    methods = [m for m in methods if m != "text"]  # thinking and the writer ask for text
    # json_schema, then function calling, then json mode, each retried once with the error shown
    assert methods[:6] == ["json_schema", "json_schema", "tools", "tools", "json_object", "json_object"]
    second = [r for r in stub.requests if r["body"].get("response_format", {}).get("type") == "json_schema"][1]
    assert "not valid" in second["body"]["messages"][-1]["content"]
    errors = [e for e in events if e["type"] == "error"]
    assert errors and [e["node"] for e in errors[:2]] == ["analyse", "knowledge_gap"]
    assert all("structured output" in e["cause"] for e in errors[:2])
    assert final["stopped_by"] == "error"
    assert final["report"].startswith("#") and "## Sources" in final["report"]


def method_of(request: dict) -> str:
    body = request["body"]
    return body.get("response_format", {}).get("type") or ("tools" if body.get("tools") else "text")


def rejecting(methods: set[str], status: int):
    """A server that answers `status` to requests using any of `methods`."""
    box = {}

    def respond(kind, prompt, n):
        if method_of(box["stub"].requests[n]) in methods:
            return status, {"error": {"message": "this response format is not supported"}}
        return researcher()(kind, prompt, n)

    return box, respond


@pytest.mark.parametrize("status", [400, 422])
def test_server_rejecting_strict_json_schema_falls_back_to_function_calling(key, status):
    box, respond = rejecting({"json_schema"}, status)
    with StubOpenAI(respond) as stub:
        box["stub"] = stub
        final, events = run_iterative(stub_ctx(stub, max_iterations=2))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    structured = [method_of(r) for r in stub.requests if method_of(r) != "text"]
    # the first structured call: json_schema (rejected, not retried), then function calling,
    # which is remembered for the rest of the run (and said once)
    assert structured[:2] == ["json_schema", "tools"] and structured.count("json_object") == 0
    assert structured.count("json_schema") == 1 and structured.count("tools") == len(structured) - 1 > 1
    assert not [e for e in events if e["type"] == "error"]
    assert [e["mode"] for e in events if e["type"] == "model_mode"] == ["function_calling"]


@pytest.mark.parametrize("status", [400, 422])
def test_server_rejecting_function_calling_too_falls_back_to_json_mode(key, status):
    box, respond = rejecting({"json_schema", "tools"}, status)
    with StubOpenAI(respond) as stub:
        box["stub"] = stub
        final, events = run_iterative(stub_ctx(stub, max_iterations=2))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    structured = [method_of(r) for r in stub.requests if method_of(r) != "text"]
    assert structured[:3] == ["json_schema", "tools", "json_object"]
    assert structured.count("json_schema") == structured.count("tools") == 1  # discovered once, then remembered
    assert structured.count("json_object") == len(structured) - 2 > 1
    assert not [e for e in events if e["type"] == "error"]


def test_search_faults_are_retried_and_a_dead_search_is_skipped(key, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        return [
            {
                "title": f"Page {query}",
                "url": f"https://example.org/{abs(hash(query))}",
                # a page that says what the question asks: the run completes once it has one
                "content": f"The Eiffel Tower was designed by the engineer Gustave Eiffel. It concerns {query}.",
            }
        ]

    faults = 0
    for seed in (1, 2, 3):
        with (
            StubOpenAI(researcher(complete_after=2)) as model,
            StubOpenAI(search=search, search_rate_429=0.3, search_rate_5xx=0.1, seed=seed) as web,
        ):
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
        final, _, _ = run_deep(
            graph, ctx, {"configurable": {"thread_id": "pace"}, "max_concurrency": 4}, {"question": "Eiffel overview"}
        )
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
        ctx = stub_ctx(
            model,
            search="tavily",
            search_base_url=web.root_url,
            search_concurrency=1,
            max_iterations=2,
            writer="single",
        )
        run_deep(graph, ctx, {"configurable": {"thread_id": "space"}}, {"question": "Eiffel overview"})
    assert len(web.requests) >= 4 and web.peak == 1


def test_pacing_limits_searches_per_minute(key, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        return [{"title": "P", "url": f"https://example.org/{abs(hash(query))}", "content": "Eiffel"}]

    with StubOpenAI(deep_responder(4)) as model, StubOpenAI(search=search) as web:
        graph = build_deep(checkpointer=InMemorySaver())
        ctx = stub_ctx(
            model,
            search="tavily",
            search_base_url=web.root_url,
            search_rpm=240,  # one per 0.25 s
            max_iterations=2,
            writer="single",
        )
        run_deep(graph, ctx, {"configurable": {"thread_id": "search-rpm"}}, {"question": "Eiffel overview"})
    times = sorted(web.start_times)
    assert len(times) >= 4
    # four sections search at once, yet the searches start a quarter second apart
    assert all(b - a >= 0.25 * 0.9 for a, b in zip(times, times[1:])), [
        round(b - a, 3) for a, b in zip(times, times[1:])
    ]


def test_empty_question_inside_a_graph_is_a_clear_error(key):
    with pytest.raises(ValueError, match="question is empty"):
        run_iterative(Context(), question="   ")


# --- the CLI: bad input, faults and secrets ------------------------------------------------


def test_docs_folder_with_binary_huge_and_odd_files(cli_env, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("The Eiffel Tower was designed by Gustave Eiffel's company.\n")
    (docs / "binary.txt").write_bytes(b"\x00\x01\x02" * 1000)
    (docs / "latin1.txt").write_bytes("Gustave Eiffel \xe9tait ing\xe9nieur.".encode("latin-1"))
    (docs / "huge.txt").write_text("Eiffel tower iron. " * 300_000)  # ~5.7 MB: read in part
    with StubOpenAI(researcher()) as stub:
        cli_env["OPENAI_API_KEY"] = KEY
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--search",
                f"docs:{docs}",
                "--embeddings",
                "none",  # the files' reading is tested here, not their vectors (2 MB of text: a minute to encode)
                "--json",
                "--db",
                str(tmp_path / "r.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    # a warning line for the one file that could not be read, and none for the others
    assert [line for line in r.stderr.splitlines() if "skipped an unreadable file" in line] == [
        line for line in r.stderr.splitlines() if "binary.txt: binary" in line
    ]
    assert len([line for line in r.stderr.splitlines() if "binary.txt" in line]) == 1
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
        r = cli(
            [
                QUESTION,
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--db",
                str(tmp_path / "r.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    assert stub.faults > 0 and "retry" in r.stderr and "HTTP 429" in r.stderr
    assert "## Sources" in r.stdout


# keys of no recognisable shape (no "sk-", no "tvly-"): only hiding the environment's values
# keeps them out of what the run writes
OPENAI_KEY = "Zq7Plain-credential-4417-Hx"
TAVILY_KEY = "Kp2Tavily-credential-9931-Mv"


def test_keys_of_no_recognisable_shape_appear_nowhere(cli_env, tmp_path):
    db = tmp_path / "runs.sqlite"
    cli_env.update(
        OPENAI_API_KEY=OPENAI_KEY, TAVILY_API_KEY=TAVILY_KEY, XDG_CACHE_HOME=str(tmp_path / "cache")
    )  # this run's cache, scanned below

    def search(query):
        return [
            {
                "title": f"Page on {query}",
                "url": f"https://example.org/{abs(hash(query))}",
                "content": f"The Eiffel Tower and {query}.",
            }
        ]

    with (
        StubOpenAI(deep_responder(2), rate_429=0.3, retry_after=0.01, echo_auth=True, seed=3) as stub,
        StubOpenAI(search=search, search_rate_5xx=0.3, search_echo_key=True, seed=1) as web,
    ):
        r = cli(
            [
                QUESTION,
                "--mode",
                "deep",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--json",
                "--search",
                "tavily",
                "--search-base-url",
                web.root_url,
                "--max-iterations",
                "1",
                "--db",
                str(db),
            ],
            cli_env,
        )
        assert r.returncode == 0, r.stderr
        r2 = cli(["threads", "--db", str(db), "--json"], cli_env)
        r3 = cli(["resume", json.loads(r.stdout)["thread_id"], "--db", str(db), "--json"], cli_env)
    # both keys were sent on real requests ...
    assert any(OPENAI_KEY in json.dumps(q["headers"]) for q in stub.requests)
    assert any(TAVILY_KEY in json.dumps(q) for q in web.requests) and web.faults > 0
    # ... and the model server quoted its key back in error replies, which the run reported
    assert stub.faults > 0 and "injected fault for Bearer" in r.stderr
    assert json.loads(r.stdout)["sources"]
    for text in (r.stdout, r.stderr, r2.stdout, r2.stderr, r3.stdout, r3.stderr):
        assert OPENAI_KEY not in text and TAVILY_KEY not in text
    import sqlite3

    conn = sqlite3.connect(db)  # the texts went to the run's store, in the checkpoint file ...
    try:
        assert conn.execute("SELECT count(*) FROM store WHERE prefix LIKE 'deepresearch.texts.%'").fetchone()[0]
    finally:
        conn.close()
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    for f in files:  # ... which, like the cache, holds no key
        data = f.read_bytes()
        assert OPENAI_KEY.encode() not in data and TAVILY_KEY.encode() not in data, f


def test_a_slow_search_cannot_carry_the_run_past_its_time_budget(key, monkeypatch):
    import time as _time

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        _time.sleep(5)
        return [{"title": "Late", "url": "https://example.org/late", "content": "Too late."}]

    with StubOpenAI(researcher()) as model, StubOpenAI(search=search) as web:
        final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url, max_seconds=3))
        # the run ended while the search was still running: it did not wait for its result
        assert len(web.requests) >= 1
        assert not any(s["title"] == "Late" for s in final["sources"])
    timed_out = [e for e in events if e["type"] == "error" and "time budget" in e.get("cause", "")]
    assert timed_out and timed_out[0]["node"] == "execute_tools"
    assert [e["type"] for e in events][-1] == "complete"
    assert final["report"] and final["stopped_by"] != "error"


def test_nested_event_fields_and_stored_urls_carry_no_secrets(monkeypatch):
    from langgraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    from deepresearch.events import emit
    from deepresearch.runtime.runner import run_config

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_KEY)
    stray = "sk-live-notinenv-0123456789"  # key-shaped, in no variable: hidden by its shape

    class S(TypedDict, total=False):
        x: int

    def node(state):
        emit(
            "looping",
            iteration=1,
            gaps=[f"a gap quoting {OPENAI_KEY}", stray],
            usage={"note": TAVILY_KEY, "deeper": [{"k": OPENAI_KEY}]},
        )
        return {"x": 1}

    g = StateGraph(S)
    g.add_node("n", node)
    g.add_edge(START, "n")
    events = [e for e in g.compile().stream({}, stream_mode="custom")]
    text = json.dumps(events)
    assert events and OPENAI_KEY not in text and TAVILY_KEY not in text and stray not in text
    assert events[0]["gaps"][0].startswith("a gap quoting ")  # the rest of the text is kept
    config = run_config("t", Context(base_url="http://user:tok-secret@host:8000/v1"), "iterative", "q")
    assert "tok-secret" not in json.dumps(config) and "http://host:8000/v1" in config["metadata"]["dr_context"]


def test_a_search_whose_turn_comes_after_the_deadline_is_not_sent(key, monkeypatch):
    """One search at a time (search_concurrency 1) and the first takes longer than the time
    left: the node moves on at the deadline, and the queued search, whose turn comes after
    it, is never sent (a request nobody would read)."""
    import time as _time

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")
    release = threading.Event()

    def search(query):
        release.wait(30)
        return [{"title": "Late", "url": f"https://example.org/{len(query)}", "content": "Too late."}]

    with StubOpenAI(researcher()) as model, StubOpenAI(search=search) as web:
        ctx = stub_ctx(model, search="tavily", search_base_url=web.root_url, max_seconds=3, search_concurrency=1)
        try:
            final, events = run_iterative(ctx)
        finally:
            release.set()  # the first search ends after the run
        end = _time.monotonic() + 10
        while _time.monotonic() < end and web.in_flight:
            _time.sleep(0.05)
        _time.sleep(0.3)  # time for a queued search to be sent, if it were
        searches = [r for r in web.requests if r["path"].endswith("/search")]
    late = [e for e in events if e["type"] == "error" and "time budget" in e.get("cause", "")]
    assert len(late) >= 2  # both searches of the round were given up at the deadline
    assert len(searches) == 1  # ... and only the first was ever sent
    assert final["report"]
