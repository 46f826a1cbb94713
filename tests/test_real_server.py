"""A real OpenAI-compatible server: llama-cpp-python's own (tests/llama_server.py), serving the
packaged SmolLM2, as a user would run it (README, Local models). Its request log (a recording
proxy in front of it) shows what went over the wire:

- the completion cap under the name the server reads (`max_tokens`; it passes over
  `max_completion_tokens`), and every reply ended by the server at it, none cut by us;
- `response_format: json_schema` refused with HTTP 500 (the server's request validation),
  asked once, then function calling, kept for the rest of the run;
- both graphs through `llamacpp:` to a cited report with no failed model call and no `error`
  line; the cap and the ladder through `openai:<id>` with a base URL too (the same client).

Runs are kept small (one iteration, two sections at most) and model requests may take 300 s
(not 60): the model is real, if tiny, and the machine may be busy.
"""

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.llm.budget import Budget, recursion_limit
from deepresearch.llm.calls import chat, structured
from tests.deep_helpers import run_deep
from tests.helpers import QUESTION, citations_resolve, of_type, run_iterative
from tests.llama_server import ALIAS, LlamaServer, LlamaServerError, RecordingProxy, method_of

MODEL = f"llamacpp:{ALIAS}"
SPECS = [MODEL, f"openai:{ALIAS}"]  # the shorthand, and OpenAI's client given the server's base URL
TIMEOUT = 300.0


@pytest.fixture(scope="session")
def llama_server():
    """llama-cpp-python's server for the session, stopped at its end. Never skipped: without it
    (the dev dependency `llama-cpp-python[server]` missing) these tests fail, saying why."""
    try:
        server = LlamaServer.start()
    except (LlamaServerError, OSError) as e:
        pytest.fail(f"llama-cpp-python's server did not start: {e}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-the-server-checks-no-key-0123")  # openai:<id> wants one


@pytest.fixture
def wire(llama_server):
    """The server behind a recording proxy: a new base URL per test (nothing remembered across)."""
    with RecordingProxy(llama_server.url) as proxy:
        yield proxy


def budget() -> Budget:
    return Budget(max_tokens=20_000, max_seconds=300, max_iterations=3)


def assert_the_wire_is_clean(chats: list[dict]) -> None:
    """The ladder's choice and the cap honoured, in the server's request log."""
    asked = [method_of(r["body"]) for r in chats if method_of(r["body"]) != "text"]
    # json_schema refused once with 500 (not retried), then function calling for every structured call
    assert asked and asked[0] == "json_schema" and set(asked[1:]) == {"tools"}
    assert [r["status"] for r in chats].count(500) == 1 and "response_format" in chats[0]["error"]
    for r in chats:
        assert r["body"]["max_tokens"] == r["body"]["max_completion_tokens"] > 0
        if r["status"] == 200:  # the server ended each reply itself, within its cap
            seen = {k: v for k, v in r.items() if k != "body"} | {"cap": r["body"]["max_tokens"]}
            assert not r["hung_up"] and r["finish"] in ("stop", "length", "tool_calls"), seen
            assert r["pieces"] <= r["body"]["max_tokens"], seen


def assert_a_clean_run(final: dict, events: list[dict]) -> None:
    assert final["stopped_by"] != "error", final.get("errors")
    assert not of_type(events, "error") and not final.get("errors")
    assert final["usage"]["cut_replies"] == 0 and final["usage"]["llm_calls"] >= 2
    assert citations_resolve(final) and "[1]" in final["report"].split("## Sources")[0]
    assert [e["mode"] for e in of_type(events, "model_mode")] == ["function_calling"]


# --- the completion cap ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_the_cap_goes_under_the_name_the_server_reads_and_the_server_keeps_to_it(wire, key, spec):
    b = budget()
    text = chat(
        Context(model=spec, base_url=wire.base_url, max_retries=0, request_timeout=TIMEOUT),
        b,
        [HumanMessage(content="Tell the long history of Paris, from the Romans to today.")],
        node="writer",
        max_output=24,
    )
    [r] = wire.chats()
    assert r["body"]["max_tokens"] == 24 and r["body"]["max_completion_tokens"] == 24
    # the server stopped at the cap: nothing for the client to cut
    assert r["status"] == 200 and r["finish"] == "length" and 0 < r["pieces"] <= 24 and not r["hung_up"], r
    assert text and b.usage["cut_replies"] == 0 and b.usage["output_tokens"] == 24  # the server's own count


# --- the structured-output ladder ----------------------------------------------------------------


class Tower(BaseModel):
    built_for_a_world_fair: bool
    year_completed: int


@pytest.mark.parametrize("spec", SPECS)
def test_a_500_refusing_json_schema_steps_down_once_and_the_way_that_worked_is_kept(wire, key, spec):
    ctx = Context(model=spec, base_url=wire.base_url, request_timeout=TIMEOUT)  # four retries of a transient failure
    ask = [HumanMessage(content="The Eiffel Tower was completed in 1889 for the World's Fair in Paris.")]
    first = structured(ctx, budget(), ask, Tower, node="planner", max_output=120)
    second = structured(ctx, budget(), ask, Tower, node="planner", max_output=120)
    assert isinstance(first, Tower) and isinstance(second, Tower)
    chats = wire.chats()
    # asked once with json_schema (a refusal is no transient failure), then tools; tools first from then on
    assert [(method_of(r["body"]), r["status"]) for r in chats] == [
        ("json_schema", 500),
        ("tools", 200),
        ("tools", 200),
    ]
    assert "Input should be 'text' or 'json_object'" in chats[0]["error"]


# --- both graphs, end to end -------------------------------------------------------------------


def test_an_iterative_question_through_llamacpp_ends_with_a_cited_report(wire, warm):
    final, events = run_iterative(
        Context(model=MODEL, base_url=wire.base_url, max_iterations=1, request_timeout=TIMEOUT)
    )
    assert_a_clean_run(final, events)
    assert_the_wire_is_clean(wire.chats())


def test_a_deep_question_through_llamacpp_ends_with_a_cited_report(wire, warm):
    ctx = Context(model=MODEL, base_url=wire.base_url, max_iterations=1, max_sections=2, request_timeout=TIMEOUT)
    config = {"configurable": {"thread_id": "real-server-deep"}, "recursion_limit": recursion_limit(ctx)}
    final, events, _ = run_deep(build_deep(checkpointer=InMemorySaver()), ctx, config, {"question": QUESTION})
    assert_a_clean_run(final, events)
    assert [s["status"] for s in final["sections"]] and all(s["status"] == "done" for s in final["sections"])
    assert_the_wire_is_clean(wire.chats())
