"""Open and local models: Ollama, vLLM, llama.cpp's server and LM Studio, as stubs on 127.0.0.1
(tests/stub_local.py) that answer, stream, reason, refuse and run out of context as they do."""

import json
import uuid

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build as build_iterative
from deepresearch.llm import providers
from deepresearch.llm.budget import Budget, BudgetExhausted, recursion_limit
from deepresearch.llm.calls import chat, structured
from deepresearch.llm.models import get_model
from deepresearch.llm.retries import ModelCallError
from tests.deep_helpers import DEEP_QUESTION, citations_resolve, deep_responder, run_deep
from tests.fakes import researcher
from tests.helpers import QUESTION, cli, one_line_error
from tests.stub_local import FLAVORS, REASONING_MARK, LocalServerStub

MODEL = {"ollama": "qwen3", "vllm": "Qwen/Qwen3-4B", "llamacpp": "qwen3-4b-q4_k_m.gguf", "lmstudio": "qwen/qwen3-4b"}


def ctx_for(stub, **kw) -> Context:
    return Context(model=f"{stub.flavor}:{MODEL[stub.flavor]}", base_url=stub.base_url, **kw)


def run_iterative_saved(ctx, question=QUESTION):
    saver = InMemorySaver()
    graph = build_iterative(checkpointer=saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": recursion_limit(ctx)}
    events, final = [], None
    for mode, chunk in graph.stream({"question": question}, config, context=ctx, stream_mode=["custom", "values"]):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    return final, events, saver


def saved_bytes(saver: InMemorySaver) -> bytes:
    """Everything the checkpointer holds, as bytes (checkpoints and pending writes)."""
    return (repr(saver.storage) + repr(saver.writes)).encode()


def assert_no_reasoning(final, events, saver):
    assert REASONING_MARK not in final["report"]
    assert REASONING_MARK not in json.dumps(events, default=str)
    assert REASONING_MARK.encode() not in saved_bytes(saver)
    assert "<think>" not in final["report"] and "<think>" not in json.dumps(events, default=str)


# --- 1. provider shorthands -------------------------------------------------------------


@pytest.mark.parametrize(
    "flavor,url",
    [
        ("ollama", "http://127.0.0.1:11434/v1"),
        ("vllm", "http://127.0.0.1:8000/v1"),
        ("llamacpp", "http://127.0.0.1:8080/v1"),
        ("lmstudio", "http://127.0.0.1:1234/v1"),
    ],
)
def test_shorthands_reach_their_usual_local_address_unless_told(flavor, url, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-never-sent-to-a-local-server-123")
    model = get_model(f"{flavor}:some/model:tag")
    assert model.openai_api_base == url and model.model_name == "some/model:tag"
    assert model.openai_api_key.get_secret_value() == providers.NO_KEY  # the OpenAI key stays home
    other = get_model(f"{flavor}:m", base_url="http://10.0.0.5:9999/v1")
    assert other.openai_api_base == "http://10.0.0.5:9999/v1"


@pytest.mark.parametrize(
    "spec,base_url,names",
    [
        ("openai:gpt-4o-mini", None, ["max_completion_tokens"]),  # OpenAI's own endpoint: its name only
        ("openai:some-model", "http://127.0.0.1:9/v1", ["max_completion_tokens", "max_tokens"]),
        ("llamacpp:some-model", None, ["max_completion_tokens", "max_tokens"]),
    ],
    ids=["openai", "openai-base-url", "local-shorthand"],
)
def test_the_cap_goes_under_the_names_the_server_reads(spec, base_url, names, monkeypatch):
    from deepresearch.llm import compat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-never-sent-anywhere-here-123")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = get_model(spec, base_url=base_url)
    kwargs = compat.request_kwargs(Context(model=spec, base_url=base_url), model, 77, {})
    payload = model._get_request_payload([HumanMessage(content="hi")], stream=True, **kwargs)
    body = {**payload, **payload.pop("extra_body", {})}  # the body as the transport sends it
    assert sorted(k for k in body if k in compat.CAP_NAMES) == names and all(body[n] == 77 for n in names)


@pytest.mark.parametrize("flavor", list(FLAVORS))
def test_every_server_runs_an_iterative_question_to_a_cited_report_without_its_reasoning(flavor):
    with LocalServerStub(flavor, researcher(complete_after=2)) as stub:
        final, events, saver = run_iterative_saved(ctx_for(stub))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert stub.reasoning_tokens > 0  # the model reasoned on every call
    assert_no_reasoning(final, events, saver)
    assert not [e for e in events if e["type"] == "error"]
    usage = final["usage"]
    # reasoning counts: in the output tokens (the server's figures) and on its own (our count:
    # the server's, plus the <think> tags a few tokens a call)
    assert stub.reasoning_tokens <= usage["reasoning_tokens"] <= stub.reasoning_tokens + 4 * usage["llm_calls"]
    assert usage["output_tokens"] > usage["reasoning_tokens"]


@pytest.mark.parametrize("flavor", ["vllm", "ollama"])
def test_every_server_runs_a_deep_question_to_a_cited_report(flavor):
    with LocalServerStub(flavor, deep_responder(sections=2)) as stub:
        saver = InMemorySaver()
        graph = build_deep(checkpointer=saver)
        config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 200}
        final, events, _ = run_deep(
            graph, ctx_for(stub, mode="deep", max_iterations=2), config, {"question": DEEP_QUESTION}
        )
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert_no_reasoning(final, events, saver)
    assert final["usage"]["reasoning_tokens"] >= stub.reasoning_tokens > 0


def test_cli_refuses_a_model_the_server_does_not_list_before_any_research(cli_env):
    with LocalServerStub("ollama", researcher()) as stub:
        r = cli([QUESTION, "--model", "ollama:mistral", "--base-url", stub.base_url], cli_env)
        line = one_line_error(r, 2)
        assert "does not serve 'mistral'" in line and "llama3.2:3b, qwen3:latest" in line
        assert not [q for q in stub.requests if "/chat/" in q["path"]]  # no research began
        assert stub.gets == ["/v1/models"]


def test_cli_says_a_server_is_down_in_one_line(cli_env):
    r = cli([QUESTION, "--model", "vllm:Qwen/Qwen3-4B", "--base-url", "http://127.0.0.1:9/v1"], cli_env)
    line = one_line_error(r, 2)
    assert "cannot reach the vllm server at http://127.0.0.1:9/v1" in line and "vllm serve" in line


def test_the_context_window_is_read_where_the_server_says_it():
    with LocalServerStub("vllm", n_ctx=4096) as stub:
        assert providers.served_context_window("vllm:Qwen/Qwen3-4B", stub.base_url) == 4096
    with LocalServerStub("ollama", ollama_num_ctx=2048) as stub:
        assert providers.served_context_window("ollama:qwen3", stub.base_url) == 2048  # the running num_ctx
    with LocalServerStub("ollama") as stub:
        # no num_ctx: Ollama's default (the model's own 40,960 would be cut silently by the server)
        assert providers.served_context_window("ollama:qwen3", stub.base_url) == 4096
    with LocalServerStub("llamacpp", n_ctx=3072) as stub:
        assert providers.served_context_window("llamacpp:qwen3-4b-q4_k_m.gguf", stub.base_url) == 3072
    with LocalServerStub("lmstudio") as stub:
        assert providers.served_context_window("lmstudio:qwen/qwen3-4b", stub.base_url) is None


# --- 2. reasoning -------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["think", "reasoning_content", "reasoning"])
@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_is_never_read_as_the_answer(style, stream):
    # the reasoning holds a JSON object of the schema with other values: the answer's are used
    class Gaps(BaseModel):
        research_complete: bool
        outstanding_gaps: list[str]

    def respond(kind, prompt, n):
        return {"research_complete": True, "outstanding_gaps": ["the answer's gap"]}

    with LocalServerStub("vllm", respond, reasoning=style, ignore_stream=not stream) as stub:
        ctx = ctx_for(stub)
        budget = Budget.of(ctx, {})
        out = structured(ctx, budget, [HumanMessage(content="Is the research complete?")], Gaps, node="t")
    assert out.outstanding_gaps == ["the answer's gap"]
    assert budget.usage["reasoning_tokens"] >= stub.reasoning_tokens > 0


def test_a_reply_cut_at_its_cap_inside_the_reasoning_is_a_failed_call_whose_tokens_count():
    with LocalServerStub("llamacpp", lambda k, p, n: "The tower is 330 m tall.", reasoning="think") as stub:
        ctx = ctx_for(stub)
        budget = Budget.of(ctx, {})
        with pytest.raises(ModelCallError, match="empty reply"):
            chat(ctx, budget, [HumanMessage(content="How tall is the tower?")], node="writer", max_output=50)
    # the server stopped at the cap (50 tokens), all of it reasoning: all of it counted
    assert budget.usage["output_tokens"] == 50 and budget.usage["reasoning_tokens"] >= 50


# --- 3. servers with less -----------------------------------------------------------------


def method_of(request: dict) -> str:
    body = request["body"]
    return body.get("response_format", {}).get("type") or ("tools" if body.get("tools") else "text")


def structured_methods(stub) -> list[str]:
    """The structured-output method of each structured request (text requests left out)."""
    return [
        method_of(r)
        for r in stub.requests
        if "/chat/" in r["path"]
        and (method_of(r) != "text" or "matches this JSON schema" in json.dumps(r["body"]["messages"][-1:]))
    ]


def test_a_server_refusing_every_structured_mode_works_from_the_prompt_and_is_asked_once():
    with LocalServerStub("llamacpp", researcher(complete_after=2), supports=set()) as stub:
        final, events, _ = run_iterative_saved(ctx_for(stub))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    methods = structured_methods(stub)
    # discovered on the first structured call (each refusal at once, not retried), then remembered
    assert methods[:4] == ["json_schema", "tools", "json_object", "text"]
    assert methods[4:] and set(methods[4:]) == {"text"}
    modes = [e for e in events if e["type"] == "model_mode"]
    assert len(modes) == 1 and modes[0]["mode"] == "text" and "rejected" in modes[0]["note"]
    assert not [e for e in events if e["type"] == "error"]


def test_lm_studio_refusing_json_mode_keeps_json_schema():
    with LocalServerStub("lmstudio", researcher(complete_after=2)) as stub:
        final, events, _ = run_iterative_saved(ctx_for(stub))
    assert final["stopped_by"] == "complete"
    assert set(structured_methods(stub)) == {"json_schema"}
    assert not [e for e in events if e["type"] == "model_mode"]  # the first choice worked: nothing to say


def test_a_server_ignoring_the_structured_modes_is_read_from_its_prose():
    with LocalServerStub("ollama", researcher(complete_after=2), supports=set(), ignores=True) as stub:
        final, events, _ = run_iterative_saved(ctx_for(stub))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert set(structured_methods(stub)) == {"json_schema"}  # its fenced JSON was read at once: no retries
    assert not [e for e in events if e["type"] == "error"]


# --- 4. small-model robustness: each repair, the retry, the failed calls ----------------------


class Task(BaseModel):
    query: str
    tool: str = "wiki"


class Plan(BaseModel):
    research_complete: bool
    outstanding_gaps: list[str]
    task: Task
    year: int = 0
    label: str = Field("", description="a short label")


GOOD = {
    "research_complete": True,
    "outstanding_gaps": ["costs"],
    "task": {"query": "Eiffel"},
    "year": 1889,
    "label": "x",
}


def ask(fake_model, reply, schema=Plan):
    """One structured call to a fake model answering `reply` (then the good object): the
    result and how many calls it took."""
    spec, model = fake_model(lambda kind, prompt, n: reply if n == 0 else GOOD)
    ctx = Context(model=spec)
    out = structured(ctx, Budget.of(ctx, {}), [HumanMessage(content="Plan the research.")], schema, node="t")
    return out, len(model.calls)


@pytest.mark.parametrize(
    "reply,expected",
    [
        # a fenced block with text around it
        ("Sure! Here it is:\n```json\n" + json.dumps(GOOD) + "\n```\nAnything else?", GOOD),
        # text around a bare object
        ("The plan is " + json.dumps(GOOD) + " as asked.", GOOD),
    ],
)
def test_json_is_taken_from_the_text_around_it(fake_model, reply, expected):
    out, calls = ask(fake_model, reply)
    assert out.model_dump() == Plan.model_validate(expected).model_dump() and calls == 1


def test_a_reply_cut_short_is_closed_after_its_last_complete_member(fake_model):
    cut = '{"research_complete": true, "task": {"query": "Eiffel"}, "outstanding_gaps": ["costs", "the archi'
    out, calls = ask(fake_model, cut)
    assert calls == 1 and out.outstanding_gaps == ["costs"] and out.task.query == "Eiffel"  # the half item dropped


def test_known_wrong_field_names_are_mapped(fake_model):
    reply = {"researchComplete": True, "gaps": ["costs"], "Task": {"Query": "Eiffel"}, "Year": 1889}
    out, calls = ask(fake_model, reply)
    assert calls == 1 and out.research_complete and out.outstanding_gaps == ["costs"] and out.task.query == "Eiffel"
    assert out.year == 1889


def test_near_types_are_repaired(fake_model):
    # a one-item list for one task, one gap for a list, a number for text, text for a number
    reply = {
        "research_complete": "true",
        "outstanding_gaps": "costs",
        "task": [{"query": "Eiffel"}],
        "year": "1889",
        "label": 42,
    }
    out, calls = ask(fake_model, reply)
    assert calls == 1 and out.outstanding_gaps == ["costs"] and out.task.query == "Eiffel"
    assert out.year == 1889 and out.label == "42"


def test_an_ambiguous_reply_is_retried_once_with_the_validation_error(fake_model):
    reply = {"research_complete": True, "outstanding_gaps": [], "task": [{"query": "a"}, {"query": "b"}]}
    spec, model = fake_model(lambda kind, prompt, n: reply if n == 0 else GOOD)
    ctx = Context(model=spec)
    out = structured(ctx, Budget.of(ctx, {}), [HumanMessage(content="Plan.")], Plan, node="t")
    assert len(model.calls) == 2 and out.task.query == "Eiffel"  # two tasks for one: not guessed
    assert "not valid" in model.calls[1]["prompt"] and "task" in model.calls[1]["prompt"]


@pytest.mark.parametrize("reply", ["", "   ", "You are a careful researcher. Answer the question below."])
def test_empty_and_echoed_replies_are_failed_calls(fake_model, reply):
    spec, _ = fake_model(lambda kind, prompt, n: reply)
    ctx = Context(model=spec)
    with pytest.raises(ModelCallError, match="empty reply|repeats the prompt"):
        chat(
            ctx,
            Budget.of(ctx, {}),
            [
                SystemMessage(content="You are a careful researcher."),
                HumanMessage(content="Answer the question below.\n\nHow tall is it?"),
            ],
            node="writer",
        )


def test_a_text_given_back_unchanged_is_an_answer(fake_model):
    text = "The tower is 330 metres tall [1]."
    spec, _ = fake_model(lambda kind, prompt, n: text)  # a copy editor with nothing to change
    ctx = Context(model=spec)
    assert (
        chat(
            ctx,
            Budget.of(ctx, {}),
            [HumanMessage(content=f"Fix the grammar of this text:\n\n{text}")],
            node="proofreader",
        )
        == text
    )


def test_empty_replies_end_in_the_nodes_fallback_with_a_report():
    def respond(kind, prompt, n):
        return "" if kind == "text" and "Write the report" in prompt else researcher()(kind, prompt, n)

    with LocalServerStub("vllm", respond, reasoning=None) as stub:
        final, events, _ = run_iterative_saved(ctx_for(stub))
    assert [e["cause"] for e in events if e["type"] == "error" and e["node"] == "writer"][:1] == [
        "the model sent an empty reply"
    ]
    assert final["report"].startswith("#") and "## Sources" in final["report"]


# --- 5. context windows -------------------------------------------------------------------


def deep_run_in(flavor, n_ctx, window):
    with LocalServerStub(flavor, deep_responder(sections=2), n_ctx=n_ctx) as stub:
        graph = build_deep(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 200}
        ctx = ctx_for(stub, mode="deep", max_iterations=2, results_per_query=6, context_window=window)
        final, events, _ = run_deep(graph, ctx, config, {"question": DEEP_QUESTION})
    return final, events, stub


@pytest.mark.parametrize("flavor,window", [("vllm", 2048), ("llamacpp", 2048), ("vllm", 1536)])
def test_a_small_context_window_holds_on_a_deep_run(flavor, window):
    final, events, stub = deep_run_in(flavor, window, window)
    assert stub.refused == 0 and len(stub.requests) >= 8  # no call was refused
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert not [e for e in events if e["type"] == "error"]
    if window == 1536:  # without the window, the same run's prompts do not fit this server
        assert deep_run_in(flavor, window, None)[2].refused > 0


@pytest.mark.parametrize("flavor", ["vllm", "llamacpp"])
def test_the_cli_reads_the_window_from_the_server(cli_env, tmp_path, flavor):
    # 1,280 tokens: this run's section writers ask for 700 with prompts of about as many
    with LocalServerStub(flavor, deep_responder(sections=2), n_ctx=1280) as stub:
        r = cli(
            [
                DEEP_QUESTION,
                "--mode",
                "deep",
                "--model",
                f"{flavor}:{MODEL[flavor]}",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "2",
                "--db",
                str(tmp_path / "db.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr[-2000:]
    assert stub.refused == 0 and "[1]" in r.stdout


def test_sources_are_dropped_whole_least_relevant_first_and_never_cut_mid_sentence():
    from deepresearch.llm.budget import estimate_tokens
    from deepresearch.llm.context_fit import fit

    def block(i, text):
        return f'<source id="{i}" title="S{i}">\n{text}\n</source>'

    tower = " ".join(["The Eiffel Tower was built by Gustave Eiffel for the 1889 exposition in Paris."] * 3)
    bees = " ".join(["Honeybees navigate by the sun and dance to share the direction of flowers."] * 3)
    prompt = (
        f"Question: who built the Eiffel Tower in Paris?\n\n{block(1, bees)}\n\n{block(2, tower)}\n\n"
        f"{block(3, bees)}\n\nWrite the answer."
    )
    msgs = [HumanMessage(content=prompt)]

    def count(ms):
        return sum(estimate_tokens(str(m.content)) for m in ms)

    out, cap = fit(msgs, window=count(msgs) - 60 + 100, max_output=100, count=count, need_full=True)
    kept = out[0].content
    assert cap == 100 and count(out) <= count(msgs) - 60
    assert 'id="2"' in kept and not ('id="1"' in kept and 'id="3"' in kept)  # a bee source went, whole
    out, _ = fit(
        msgs, window=count([HumanMessage(content=block(2, tower))]) + 100, max_output=100, count=count, need_full=True
    )
    kept = out[0].content
    assert 'id="1"' not in kept and 'id="3"' not in kept and 'id="2"' in kept
    body = kept.split('title="S2">\n', 1)[1].split("\n</source>")[0]
    assert body in (" ".join([tower.split(" Paris. ")[0] + " Paris."] * k) for k in (1, 2))  # whole sentences only


def test_a_prompt_that_cannot_fit_even_bare_is_a_budget_stop_and_is_not_sent():
    with LocalServerStub("vllm", lambda k, p, n: "ok", n_ctx=512) as stub:
        ctx = ctx_for(stub, context_window=512)
        with pytest.raises(BudgetExhausted) as e:
            chat(ctx, Budget.of(ctx, {}), [HumanMessage(content="Read this. " * 400)], node="writer")
    assert e.value.reason == "context_window" and not stub.requests


@pytest.mark.parametrize(
    "text,reasoning,answer",
    [
        ('<think>\\nplan {"a": 1}\\n</think>\\n\\n{"a": 2}', 'plan {"a": 1}', '{"a": 2}'),
        ("<thinking>x</thinking>The answer.", "x", "The answer."),
        ("<think>cut in the middle of", "cut in the middle of", ""),  # reached the cap while reasoning
        ("the template opened it</think>The answer.", "the template opened it", "The answer."),
        ("The answer mentions <think> later.", None, "The answer mentions <think> later."),
    ],
)
def test_reasoning_is_split_from_the_answer(text, reasoning, answer):
    from deepresearch.llm.reasoning import split

    text = text.replace("\\n", "\n")
    assert split(text) == (
        reasoning if reasoning is None else reasoning.replace("\\n", "\n"),
        answer.replace("\\n", "\n"),
    )


def test_a_reasoning_model_answering_with_a_tool_call_is_read_after_its_reasoning():
    with LocalServerStub("vllm", researcher(complete_after=2), supports={"tools"}) as stub:
        final, events, saver = run_iterative_saved(ctx_for(stub))
    assert final["stopped_by"] == "complete" and citations_resolve(final)
    assert [e["mode"] for e in events if e["type"] == "model_mode"] == ["function_calling"]
    assert_no_reasoning(final, events, saver)
