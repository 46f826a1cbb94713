"""budgets that hold against any provider (a hostile server on 127.0.0.1).

4. a server that ignores the completion cap is cut at the cap (and at the deadline);
5. what comes after the last model call is inside the run's seconds;
6. one reply, one search result, one document: bounded in memory, state and report;
7. a tight time budget is a budget stop, never an error.
"""

import json
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from deepresearch.cli.progress import describe_event
from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build as build_iterative
from deepresearch.llm.budget import Budget
from deepresearch.llm.calls import chat, structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.store import TEXTS
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.fakes import researcher
from tests.hostile_stub import Endless, Flood, HostileStub, Slow, Trickle
from tests.stub_openai import StubOpenAI

QUESTION = "Who built the Eiffel Tower, and for which event?"
KEY = "sk-FAKE-secret-0123456789abcdef"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def prompt_of(body: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


def is_writer(kind: str, body: dict) -> bool:
    return kind == "text" and "Write the" in prompt_of(body)


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


def errors_of(events):
    return [e for e in events if e["type"] == "error"]


# --- 4. the completion cap and the deadline hold whatever the server does --------------------


@pytest.mark.parametrize(
    "how",
    [Flood(3_000_000), Flood(3_000_000, one_chunk=True), Endless(seconds=20)],
    ids=["flood-word-by-word", "flood-one-chunk", "endless-stream"],
)
def test_a_reply_keeps_at_most_its_cap_and_costs_what_was_read(key, how):
    with HostileStub(lambda kind, prompt, n: "A short answer.", plan=lambda kind, n, body: how) as stub:
        ctx = stub_ctx(stub)
        budget = Budget(max_tokens=10_000, max_seconds=100, max_iterations=3)
        try:
            text = chat(ctx, budget, [HumanMessage(content="Tell me everything.")], node="writer", max_output=100)
        except ModelCallError as e:
            text, failure = None, e.cause
        stub.wait_idle()
    request = stub.requests[0]
    assert request["body"]["stream"] is True and request["body"]["stream_options"] == {"include_usage": True}
    # the client stopped reading: the server saw it go (one giant chunk may fit in the socket
    # buffers unnoticed: loopback buffers grow to tens of MB here)
    assert request["hung_up"] or (isinstance(how, Flood) and how.one_chunk)
    if isinstance(how, Flood) and not how.one_chunk:  # what came up to the cap, to its last complete sentence
        assert text == "A short answer."
    else:  # nothing usable: the whole flood at once is past the byte limit; the endless words are no sentence
        assert (
            text is None and failure.startswith("reply cut at") and "the server ignored the completion cap" in failure
        )
    assert budget.usage["output_tokens"] == 100  # the cap was read in full: that is what it cost
    assert budget.usage["cut_replies"] == 1 and budget.usage["llm_calls"] == 1
    assert budget.held == 0


@pytest.mark.parametrize("one_chunk", [False, True], ids=["word-by-word", "one-chunk"])
def test_a_server_ignoring_the_cap_cannot_pass_the_token_budget(key, warm, one_chunk):
    def plan(kind, n, body):
        return Flood(3_000_000, one_chunk=one_chunk) if kind == "text" else None

    with HostileStub(researcher(complete_after=2), plan) as stub:
        final, events = run_iterative(stub_ctx(stub, max_tokens=40_000))
        stub.wait_idle()
    floods = [r for r in stub.requests if r["kind"] == "text"]
    # the client stopped reading (one giant chunk may fit in the socket buffers unnoticed)
    assert floods and (one_chunk or all(r["hung_up"] for r in floods))
    usage = final["usage"]
    assert usage["total_tokens"] <= 40_000
    assert usage["cut_replies"] == len(floods)
    # said once for the run, whatever the number of replies cut
    [said] = [e for e in events if e["type"] == "model_mode"]
    assert said["mode"] == "cap ignored"
    assert describe_event(said).startswith("openai:stub: the server ignores the completion cap")  # the CLI's line
    cuts = [e for e in errors_of(events) if "reply cut" in e["cause"]]
    if one_chunk:  # all of it at once, past the byte limit: nothing usable came, each call failed
        assert len(cuts) == len(floods) and {e["node"] for e in cuts} == {"thinking", "writer"}
    else:  # each reply's complete sentences up to the cap are the reply: no failure
        assert not cuts and final["stopped_by"] == "complete"
    assert len(final["report"].encode()) < 50_000 and "flood" not in final["report"]
    assert citations_resolve(final)


@pytest.mark.parametrize("how", [Flood(2_000_000), Endless(seconds=20)], ids=["json-then-flood", "no-json"])
def test_a_cut_structured_reply_is_used_when_it_parses_and_a_recorded_failure_when_not(key, warm, how):
    def plan(kind, n, body):
        return how if kind == "KnowledgeGapOutput" else None

    with HostileStub(researcher(complete_after=1), plan) as stub:
        final, events = run_iterative(stub_ctx(stub, max_tokens=40_000, max_iterations=2))
    judged = [r for r in stub.requests if r["kind"] == "KnowledgeGapOutput"]
    assert judged and all(r["hung_up"] for r in judged)
    assert final["usage"]["total_tokens"] <= 40_000 and final["usage"]["cut_replies"] == len(judged)
    assert len(judged) == 1  # a cut reply is never asked for again: it would be cut again
    failed = [x for x in final["errors"] if x["node"] == "knowledge_gap" and "reply cut" in x["cause"]]
    if isinstance(how, Flood):  # the JSON came whole before the flood: it is the judgement
        assert not failed and final["stopped_by"] == "complete"
    else:  # no JSON before the cap: nothing usable, the node's failure
        assert failed
    assert final["report"].startswith("#") and "## Sources" in final["report"]


class Finding(BaseModel):
    claim: str
    confidence: int


@pytest.mark.parametrize(
    "rejected,method", [((), "json_schema"), (("json_schema",), "tools"), (("json_schema", "tools"), "json_object")]
)
def test_structured_outputs_work_streamed(key, rejected, method):
    def respond(kind, prompt, n):
        body = stub.requests[n]["body"]
        used = body.get("response_format", {}).get("type") or ("tools" if body.get("tools") else "text")
        if used in rejected:
            return 400, {"error": {"message": f"{used} is not supported"}}
        return {"claim": "Gustave Eiffel's company designed the tower", "confidence": 4}

    stub = HostileStub(respond)
    with stub:
        budget = Budget(max_tokens=10_000, max_seconds=100, max_iterations=3)
        out = structured(stub_ctx(stub), budget, [HumanMessage(content="Who designed it?")], Finding, node="planner")
    assert out == Finding(claim="Gustave Eiffel's company designed the tower", confidence=4)
    last = stub.requests[-1]["body"]
    assert last["stream"] is True
    assert (last.get("response_format", {}).get("type") or "tools") == method
    assert budget.usage["llm_calls"] == 1 and budget.usage["cut_replies"] == 0
    assert budget.usage["output_tokens"] > 0  # the provider's usage figures, from the stream's last chunk


def test_a_trickling_reply_is_cut_at_the_deadline(key, warm):
    """An SSE line that never ends, a byte every 10 ms: no read ever times out."""

    def plan(kind, n, body):
        return Trickle(0.01, seconds=40) if is_writer(kind, body) else None

    with HostileStub(researcher(complete_after=1), plan) as stub:
        final, events = run_iterative(stub_ctx(stub, max_seconds=8))
        stub.wait_idle()
    writer = [r for r in stub.requests if is_writer(r["kind"], r["body"])]
    assert len(writer) == 1 and writer[0]["hung_up"]
    assert final["usage"]["seconds"] <= 8  # the run's own clock: the call ended at the deadline
    assert final["stopped_by"] == "max_seconds"
    assert not errors_of(events) and not final["errors"]
    assert final["sources"] and citations_resolve(final)  # the writer's fallback cites what was found


# --- 7. running out of time is a budget stop --------------------------------------------------


@pytest.mark.parametrize("hang", ["thinking", "writer"])
def test_a_call_cut_by_the_time_budget_is_a_budget_stop(key, warm, hang):
    def plan(kind, n, body):
        if hang == "writer" and is_writer(kind, body):
            return Slow(30)
        if hang == "thinking" and kind == "text" and "careful research assistant" in prompt_of(body):
            return Slow(30)
        return None

    # the writer hangs after research that completed; thinking hangs in a loop that would go on
    responder = researcher(complete_after=1 if hang == "writer" else 99)
    with HostileStub(responder, plan) as stub:
        final, events = run_iterative(stub_ctx(stub, max_seconds=8, max_iterations=10))
    assert final["stopped_by"] == "max_seconds"
    assert not errors_of(events) and not final["errors"]  # no provider failure was reported
    assert final["usage"]["seconds"] <= 8
    assert final["sources"] and citations_resolve(final)
    assert "Partial report" in final["report"]


def test_deep_sections_cut_by_the_time_budget_return_what_they_have(key, warm):
    """1 s per model call, sections whose writer never answers: each section stops on its
    time budget, with its sources and the writer's fallback (extractive: no model call);
    the report cites them."""

    def plan(kind, n, body):
        if kind == "text" and "Write the" in prompt_of(body):
            return Slow(30)
        return Slow(1.0)

    with HostileStub(deep_responder(sections=3), plan) as stub:
        graph = build_deep(checkpointer=InMemorySaver())
        ctx = stub_ctx(stub, max_seconds=14, mode="deep")
        config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
        final, events, _ = run_deep(
            graph, ctx, config, {"question": "Compare the design and purpose of the Eiffel Tower"}
        )
    sections = final["sections"]
    assert len(sections) == 3
    assert all(s["status"] == "done" and s["stopped_by"] == "max_seconds" for s in sections), sections
    assert final["stopped_by"] == "max_seconds"
    assert not errors_of(events) and not final["errors"]
    assert final["usage"]["seconds"] <= 14
    assert final["sources"] and citations_resolve(final)


# --- 5. the run's seconds are the run's wall time --------------------------------------------

BUDGET_S = 60  # the flood test's --max-seconds


def test_cli_seconds_match_the_wall_time_after_a_flood(key, cli_env, tmp_path):
    """A flooding writer: the run's time (the flood's reading included) is inside
    `usage.seconds`, which never claims more than the process's wall time from the moment the
    run starts, and stays inside the time budget."""

    def plan(kind, n, body):  # the writer's report, cited and supported, said again and again
        return Flood(6_600_000, repeat=True) if is_writer(kind, body) else None

    with HostileStub(researcher(complete_after=1), plan) as stub:
        cli_env["OPENAI_API_KEY"] = KEY
        out_file = tmp_path / "report.md"
        proc = subprocess.Popen(
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
                stub.base_url,
                "--json",
                "--max-seconds",
                str(BUDGET_S),
                "-o",
                str(out_file),
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            env=cli_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started: list[float] = []
        lines: list[str] = []

        def read_stderr():
            for line in proc.stderr:
                if not started and line.startswith("thread "):
                    started.append(time.monotonic())  # printed just before the graph runs
                lines.append(line)

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        stdout = proc.stdout.read()
        proc.wait()
        ended = time.monotonic()
        reader.join()
    assert proc.returncode == 0, "".join(lines)
    out = json.loads(stdout)
    wall = ended - started[0]
    seconds = out["usage"]["seconds"]
    assert seconds <= wall + 0.5  # counted from after the line (0.5: the reader may see it late)
    # everything the server saw of the run (the flood read up to its cap included) is counted;
    # what follows the last call (checking citations) is counted too: see
    # test_citation_checking_is_inside_the_runs_seconds_and_ends_with_them. (How close usage
    # comes to the wall time is a figure, not a test: no upper bounds on time here.)
    served = max(r["ended"] for r in stub.requests) - min(r["started"] for r in stub.requests)
    assert seconds >= served, (seconds, served)
    assert seconds <= BUDGET_S  # the run's time budget held (a budget, not a bound on how fast it runs)
    assert out["usage"]["cut_replies"] >= 1
    assert len(out_file.read_bytes()) < 50_000 and len(stdout) < 200_000


# --- 6. one search result, one document --------------------------------------------------------


def test_a_huge_search_result_is_bounded_in_state_store_and_report(key, warm, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")
    big = "The Eiffel Tower was designed by the company of Gustave Eiffel. " * 60_000  # ~4 MB

    def search(query):
        return [
            {"title": "Eiffel " + "x" * 1_000_000, "url": "https://example.org/" + "p" * 100_000, "content": big},
            {"title": "Gustave Eiffel", "url": "https://example.org/gustave", "content": big[:2000]},
        ]

    with StubOpenAI(researcher(complete_after=1)) as model, StubOpenAI(search=search) as web:
        final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url, max_iterations=1))
    assert final["sources"]
    for s in final["evidence"]:
        assert len(s["title"]) <= 300 and len(s["url"]) <= 2048 and len(s["snippet"]) <= 300
        assert len(TEXTS.get(s["key"]) or "") <= 50_000
    assert len(final["report"].encode()) < 50_000
    assert len(json.dumps(final, default=str)) < 200_000


def test_a_search_response_past_the_byte_limit_is_an_error_not_a_memory_hog(key, warm, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-FAKE-0123456789")

    def search(query):
        return [
            {"title": f"Page {i}", "url": f"https://example.org/{i}", "content": "Eiffel " * 400_000} for i in range(4)
        ]  # ~11 MB of JSON

    with StubOpenAI(researcher(complete_after=1)) as model, StubOpenAI(search=search) as web:
        final, events = run_iterative(stub_ctx(model, search="tavily", search_base_url=web.root_url, max_iterations=1))
    failed = [e for e in errors_of(events) if e.get("node") == "execute_tools"]
    assert failed and all("larger than 8,000,000 bytes" in e["cause"] for e in failed)
    assert not final["sources"] and final["report"].startswith("#")


def test_a_specialist_response_past_the_byte_limit_is_a_search_error():
    from deepresearch.tools.base import SearchError
    from deepresearch.tools.http import get

    class Huge(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                for _ in range(2000):  # up to 20 MB, sent until the client hangs up
                    self.wfile.write(b"x" * 10_000)
            except OSError:
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Huge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(SearchError, match="larger than 8,000,000 bytes"):
            get("pubmed", f"http://127.0.0.1:{server.server_address[1]}/x", {}, timeout=10, max_retries=0)
    finally:
        server.shutdown()
        server.server_close()


def test_citation_checking_is_inside_the_runs_seconds_and_ends_with_them():
    from types import SimpleNamespace

    from deepresearch.nodes.source_tracer import source_tracer
    from deepresearch.text.urls import source_key

    url = f"https://example.org/{uuid.uuid4().hex}"
    # a long text, so that checking against it takes measurable time (usage is kept to the ms)
    TEXTS.put(
        source_key(url),
        "The Eiffel Tower was designed by the engineer Gustave Eiffel and his company. "
        + " ".join(f"Rivet row {i} of the lattice was counted in survey {i * 7}." for i in range(4000)),
    )
    evidence = [
        {
            "id": 1,
            "key": source_key(url),
            "title": "The tower",
            "url": url,
            "snippet": "A wrought-iron lattice in Paris.",
        }
    ]
    draft = "# Who designed it?\n\nThe Eiffel Tower was designed by the engineer Gustave Eiffel [1]."
    runtime = SimpleNamespace(context=Context(max_seconds=10))
    # time left: the citation is checked against the source's full text, and the check's time counts
    out = source_tracer({"draft": draft, "evidence": evidence, "usage": {"seconds": 2.0}}, runtime)
    assert out["citations"][0]["verdict"] == "supported"
    assert out["usage"]["seconds"] > 2.0
    # the run's time is up: what is left to check uses the snippet in state, no text is read
    out = source_tracer({"draft": draft, "evidence": evidence, "usage": {"seconds": 10.0}}, runtime)
    assert out["citations"][0]["verdict"] == "unsupported"
    assert out["usage"]["seconds"] >= 10.0


VALIDATION_500 = (
    "1 validation error:\n  {{'type': 'extra_forbidden', 'loc': ('body', '{field}'), "
    "'msg': 'Extra inputs are not permitted'}}"
)


@pytest.mark.parametrize(
    "field,status,message",
    [
        ("stream_options", 400, "Unrecognized request argument supplied: stream_options"),
        ("stream_options", 500, VALIDATION_500),  # a server built on request validation
        ("max_completion_tokens", 422, VALIDATION_500),
    ],
    ids=["stream_options-400", "stream_options-500", "max_completion_tokens-422"],
)
def test_a_field_the_server_refuses_is_dropped_for_it(key, field, status, message):
    def respond(kind, prompt, n):
        if field in stub.requests[n]["body"]:
            return status, {"error": {"message": message.format(field=field)}}
        return (
            {"claim": "Gustave Eiffel's company designed the tower", "confidence": 4}
            if kind != "text"
            else "Gustave Eiffel's company designed the tower."
        )

    stub = HostileStub(respond)
    with stub:
        ctx = Context(model="openai:stub", base_url=stub.base_url)
        budget = Budget(max_tokens=10_000, max_seconds=100, max_iterations=3)
        out = structured(ctx, budget, [HumanMessage(content="Who designed it?")], Finding, node="planner")
        text = chat(ctx, budget, [HumanMessage(content="Who designed it?")], node="writer", max_output=300)
    assert out.confidence == 4 and text == "Gustave Eiffel's company designed the tower."
    # asked once with the field (no retries of the refusal), then without, for this call and every later one
    assert [field in r["body"] for r in stub.requests] == [True, False, False]
    # the cap still goes under the other name
    assert [r["body"]["max_tokens"] for r in stub.requests] == [400, 400, 300]
    assert all(r["body"]["stream"] for r in stub.requests)
    assert budget.usage["llm_calls"] == 2 and budget.usage["output_tokens"] > 0  # counted by what was read
