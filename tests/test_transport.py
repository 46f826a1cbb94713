"""deepresearch.llm.transport: streamed chat calls sent and read without the openai SDK's objects.

The requests must be the ones the SDK would send (body and headers), and the replies the SDK
cannot read must still be read (or fail clearly): a server that ignores `stream`, error and
keep-alive events in the stream, a reply that is neither. A raw server on 127.0.0.1 records
what it was sent and answers with the bytes each test gives it.
"""

import contextvars
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from deepresearch.config import Context
from deepresearch.llm.budget import Budget
from deepresearch.llm.calls import chat, structured
from deepresearch.llm.models import get_model
from deepresearch.llm.retries import ModelCallError

KEY = "sk-FAKE-transport-0123456789abcdef"
TEXT = "Gustave Eiffel's company designed the tower."


class RawServer:
    """Answers each POST with `answer(n, body) -> (status, content type, bytes)`."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                n = len(server.requests)
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body, "peer": self.client_address[1]}
                )
                status, ctype, data, *more = server.answer(n, body)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for name, value in (more[0] if more else {}).items():
                    self.send_header(name, value)
                if callable(data):  # it writes a chunked body itself, and the connection stays open
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    data(lambda piece: self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece)) and self.wfile.flush())
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    return
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def sse(*events: str) -> tuple[int, str, bytes]:
    return 200, "text/event-stream", "".join(events).encode()


def chunk(content: str | None = None, *, usage: dict | None = None, finish: str | None = None) -> str:
    data: dict = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "stub", "choices": []}
    if content is not None or finish:
        data["choices"] = [
            {"index": 0, "delta": {"content": content} if content is not None else {}, "finish_reason": finish}
        ]
    if usage:
        data["usage"] = usage
    return f"data: {json.dumps(data)}\n\n"


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return KEY


def budget() -> Budget:
    return Budget(max_tokens=10_000, max_seconds=100, max_iterations=3)


def ask(server, **ctx) -> tuple[str, Budget]:
    b = budget()
    text = chat(
        Context(model="openai:stub", base_url=server.base_url, max_retries=0, **ctx),
        b,
        [HumanMessage(content="Who designed it?")],
        node="writer",
    )
    return text, b


def test_the_request_is_the_one_the_sdk_sends(key, monkeypatch):
    """Same path, JSON body and headers as the SDK's own streamed call (through ChatOpenAI)."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-transport-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-transport-test")
    with RawServer(lambda n, body: sse(chunk(TEXT), chunk(finish="stop"), chunk(usage=USAGE), "data: [DONE]\n\n")) as s:
        model = get_model("openai:stub", base_url=s.base_url, timeout=30, max_retries=0)
        messages = [SystemMessage(content="You are careful."), HumanMessage(content="Who designed it? ü ✓")]
        kwargs = {"max_tokens": 50, "extra_body": {"response_format": {"type": "json_object"}}}
        ours = "".join(str(c.content) for c in model.stream(messages, **kwargs))
        sdk_model = model.model_copy()
        sdk_model.client = model.root_client.chat.completions  # the SDK's own call
        theirs = "".join(str(c.content) for c in sdk_model.stream(messages, **kwargs))
        tools = model.bind_tools([Finding], tool_choice="Finding")
        list(tools.stream(messages))
        sdk_tools = sdk_model.bind_tools([Finding], tool_choice="Finding")
        list(sdk_tools.stream(messages))
    assert ours == theirs == TEXT
    import copy

    assert copy.copy(model.client)._root is model.root_client  # the stand-in copies (no lookup loop)
    varying = {"content-length", "x-stainless-read-timeout", "x-stainless-retry-count", "host"}
    for a, b in ((s.requests[0], s.requests[1]), (s.requests[2], s.requests[3])):
        assert a["path"] == b["path"] == "/v1/chat/completions"
        assert a["body"] == b["body"]
        ha = {k.lower(): v for k, v in a["headers"].items() if k.lower() not in varying}
        hb = {k.lower(): v for k, v in b["headers"].items() if k.lower() not in varying}
        assert {k: v for k, v in hb.items() if not k.startswith("x-stainless")} == {
            k: v for k, v in ha.items() if not k.startswith("x-stainless")
        }
    first = s.requests[0]
    assert first["body"]["stream"] is True and first["body"]["response_format"] == {"type": "json_object"}
    assert first["headers"]["Authorization"] == f"Bearer {KEY}"
    assert first["headers"]["OpenAI-Organization"] == "org-transport-test"
    assert first["headers"]["OpenAI-Project"] == "proj-transport-test"
    assert s.requests[2]["body"]["tools"][0]["function"]["name"] == "Finding"


class Finding(BaseModel):
    claim: str
    confidence: int


def test_a_server_ignoring_stream_is_read_as_one_completion(key):
    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "stub",
        "usage": USAGE,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": TEXT}}],
    }
    with RawServer(lambda n, body: (200, "application/json", json.dumps(completion).encode())) as s:
        text, b = ask(s)
    assert text == TEXT
    assert b.usage["input_tokens"] == 11 and b.usage["output_tokens"] == 7  # the provider's figures


def test_a_server_ignoring_stream_answers_a_tool_call(key):
    args = json.dumps({"claim": "Eiffel's company designed it", "confidence": 4})
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Finding", "arguments": args}}],
    }

    def answer(n, body):
        if body.get("response_format") or "tools" not in body:  # json_schema: not supported here
            return 400, "application/json", b'{"error": {"message": "response_format is not supported"}}'
        return (
            200,
            "application/json",
            json.dumps(
                {
                    "id": "c1",
                    "model": "stub",
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
                }
            ).encode(),
        )

    with RawServer(answer) as s:
        out = structured(
            Context(model="openai:stub", base_url=s.base_url, max_retries=0),
            budget(),
            [HumanMessage(content="Who designed it?")],
            Finding,
            node="planner",
        )
    assert out == Finding(claim="Eiffel's company designed it", confidence=4)
    assert [("tools" in r["body"]) for r in s.requests] == [False, True]


def test_keep_alive_events_and_comments_are_skipped(key):
    with RawServer(
        lambda n, body: sse(
            ": keep-alive\n\n",
            "event: ping\ndata:\n\n",
            chunk("Gustave Eiffel's "),
            ": still here\n\n",
            chunk("company designed the tower."),
            chunk(finish="stop"),
            chunk(usage=USAGE),
            "data: [DONE]\n\n",
        )
    ) as s:
        text, b = ask(s)
    assert text == TEXT and b.usage["output_tokens"] == 7


def test_an_error_event_in_the_stream_fails_the_call_with_its_message(key):
    with RawServer(lambda n, body: sse(chunk("Gustave "), 'data: {"error": {"message": "model overloaded"}}\n\n')) as s:
        with pytest.raises(ModelCallError) as e:
            ask(s)
    assert "model overloaded" in e.value.cause and "APIError" in e.value.cause
    assert len(s.requests) == 1  # an error event is not retried (as with the SDK)


def test_a_reply_that_is_neither_stream_nor_completion_is_a_clear_failure(key):
    with RawServer(lambda n, body: (200, "text/html", b"<html>a login page</html>")) as s:
        with pytest.raises(ModelCallError) as e:
            ask(s)
    assert "neither a stream nor a completion" in e.value.cause


def test_a_status_error_is_the_sdks_error_with_its_message_and_no_key(key):
    body = json.dumps({"error": {"message": f"invalid key {KEY}", "type": "invalid_request_error"}}).encode()
    with RawServer(lambda n, b: (401, "application/json", body)) as s:
        with pytest.raises(ModelCallError) as e:
            ask(s)
    assert e.value.status == 401 and "AuthenticationError" in e.value.cause
    assert KEY not in str(e.value) and "invalid key" in e.value.cause


def reply_events(text: str = TEXT) -> list[bytes]:
    return [chunk(text).encode(), chunk(finish="stop").encode(), chunk(usage=USAGE).encode(), b"data: [DONE]\n\n"]


def streamed(n, body):
    """An answer: `reply_events()` as a chunked stream, the connection left open after it."""
    return 200, "text/event-stream", lambda write: [write(e) for e in reply_events()]


class PoolLog:
    """What urllib3's pools for one server were asked to send and were given back (the library's
    methods, counted: no product code). A call returns at [DONE] while the end of its chunked
    body is still read: `ask_in_turn` waits for the connection to come back before the next call,
    as a caller that is not in a hurry would, so the test does not depend on thread timing."""

    def __init__(self, port: int):
        import urllib3

        self.port, self.sent, self.returned = port, [], 0
        self.cls, self.urlopen, self.put = (
            urllib3.HTTPConnectionPool,
            urllib3.HTTPConnectionPool.urlopen,
            urllib3.HTTPConnectionPool._put_conn,
        )
        self.back = threading.Condition()

    def __enter__(self):
        log, urlopen, put = self, self.urlopen, self.put

        def counted_urlopen(pool, method, url, *args, **kwargs):
            if pool.port == log.port:
                log.sent.append((method, url))
            return urlopen(pool, method, url, *args, **kwargs)

        def counted_put(pool, conn):
            put(pool, conn)
            if pool.port == log.port:
                with log.back:
                    log.returned += 1
                    log.back.notify_all()

        self.cls.urlopen, self.cls._put_conn = counted_urlopen, counted_put
        return self

    def __exit__(self, *exc):
        self.cls.urlopen, self.cls._put_conn = self.urlopen, self.put

    def ask_in_turn(self, server, times: int) -> list[str]:
        texts = []
        for i in range(times):
            texts.append(ask(server)[0])
            with self.back:
                assert self.back.wait_for(lambda i=i: self.returned > i, timeout=30), "the connection never came back"
        return texts


def test_streamed_replies_keep_their_connection(key):
    """The end of the chunked body is read after [DONE]: the next call uses the same connection
    (stopping at [DONE], as the SDK does, drops it)."""
    with RawServer(streamed) as s, PoolLog(s.server.server_address[1]) as log:
        assert log.ask_in_turn(s, 3) == [TEXT] * 3
    assert len({r["peer"] for r in s.requests}) == 1


def test_a_plain_http_server_is_sent_to_through_urllib3s_pool(key):
    """A server on http:// with no proxy in between: the requests go through urllib3's pool for
    that server (httpx's client costs several times as much per call), on one kept connection."""
    with RawServer(streamed) as s, PoolLog(s.server.server_address[1]) as log:
        assert log.ask_in_turn(s, 3) == [TEXT] * 3
    assert log.sent == [("POST", "/v1/chat/completions")] * 3
    assert log.returned == 3
    assert len({r["peer"] for r in s.requests}) == 1


def test_a_proxy_setting_keeps_the_request_with_httpx(key, monkeypatch):
    """HTTP_PROXY applies to the server's URL: the request goes to the proxy, as httpx (the SDK's
    client) routes it; the server itself is never reached."""
    with RawServer(streamed) as proxy, RawServer(streamed) as server:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server.server_address[1]}")
        assert ask(server)[0] == TEXT
    assert server.requests == []
    assert [r["path"] for r in proxy.requests] == [f"{server.base_url}/chat/completions"]


def test_a_redirect_is_followed_as_the_sdks_client_follows_it(key):
    """A plain-HTTP server that redirects (307): the call ends where the redirect points, as the
    SDK's httpx client takes it there; from then on httpx sends to that server (the first redirect
    cost one request more, which generated nothing)."""
    with RawServer(streamed) as target:
        moved = f"{target.base_url}/chat/completions"
        with RawServer(lambda n, body: (307, "text/plain", b"moved", {"Location": moved})) as first:
            assert [ask(first)[0] for _ in range(2)] == [TEXT] * 2
    assert len(first.requests) == 3 and len(target.requests) == 2
    assert target.requests[0]["body"] == first.requests[0]["body"]


def test_a_server_stalling_after_done_does_not_hold_the_reply(key):
    """[DONE] ends the reply: a server that keeps the body open after it (sending nothing, or
    more events) cannot hold the call to its timeout; events after [DONE] are not read."""
    release = threading.Event()

    def answer(n, body):
        def write(w):
            for e in reply_events():
                w(e)
            if n == 1:
                w(chunk(" And more text after the end.").encode())
            release.wait(30)  # a stall after [DONE], until the test has its reply

        return 200, "text/event-stream", write

    with RawServer(answer) as s:
        try:
            first, b = ask(s, request_timeout=10.0)
            second, _ = ask(s, request_timeout=10.0)
        finally:
            release.set()
    assert first == second == TEXT and b.usage["output_tokens"] == 7


# --- the reader threads (deepresearch.llm.streaming) -------------------------------------------

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402

from deepresearch.llm.streaming import read_reply  # noqa: E402
from deepresearch.worker_threads import KeptThreads  # noqa: E402


class ThreadNoting(GenericFakeChatModel):
    """A fake chat model noting the thread each reply is streamed from (and, with a barrier,
    waiting until that many replies are being streamed at once)."""

    seen: list = []
    barrier: object = None

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(threading.current_thread())
        if self.barrier is not None:
            self.barrier.wait(timeout=20)
        yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)


def noting(n: int, barrier=None) -> ThreadNoting:
    return ThreadNoting(messages=iter([AIMessage(content=f"reply {i}") for i in range(n)]), seen=[], barrier=barrier)


def readers_alive() -> set:
    return {t for t in threading.enumerate() if t.name == "reply-reader"}


def test_replies_are_read_by_kept_threads():
    """Calls one after another start no new reader: the ones alive after the first call
    (kept readers, possibly left by other tests) read all the replies."""
    model = noting(8)
    ask = lambda: read_reply(model, [HumanMessage(content="q")], {}, cap=50, timeout=10).message.content  # noqa: E731
    first = ask()
    kept = readers_alive()
    texts = [first] + [ask() for _ in range(7)]
    assert texts == [f"reply {i}" for i in range(8)]
    assert set(model.seen) <= kept and threading.current_thread() not in model.seen


def test_concurrent_replies_never_wait_for_a_reader():
    """Five replies that can only end together (a barrier of five): each got a reader at once."""
    from concurrent.futures import ThreadPoolExecutor

    model = noting(5, barrier=threading.Barrier(5))
    with ThreadPoolExecutor(5) as pool:
        replies = list(
            pool.map(lambda _: read_reply(model, [HumanMessage(content="q")], {}, cap=50, timeout=30), range(5))
        )
    assert sorted(r.message.content for r in replies) == [f"reply {i}" for i in range(5)]
    assert len(set(model.seen)) == 5 and set(model.seen) <= readers_alive()


def test_an_idle_reader_ends():
    readers = KeptThreads("test-kept", idle_seconds=0.05)
    ran = []
    readers.run(lambda: ran.append(threading.current_thread()))
    deadline = threading.Event()
    while not ran:
        deadline.wait(0.01)
    ran[0].join(timeout=10)
    assert not ran[0].is_alive() and readers.idle == 0
    readers.run(lambda: ran.append(threading.current_thread()))  # a new reader for the next task
    ran[1].join(timeout=10)
    assert len(ran) == 2 and ran[1] is not ran[0]


def test_a_kept_thread_holds_nothing_of_the_tasks_it_ran():
    """A kept thread lives on after its task (for the next one): it must not keep the task, nor
    the context the task was submitted in (a run's config, hence the whole run), alive."""
    import gc
    import weakref

    class RunState:  # something a run holds, in the submitting context and in the task
        pass

    group = KeptThreads("test-holds-nothing", idle_seconds=60)
    var = contextvars.ContextVar("test_run_state")
    state = RunState()
    var.set(state)
    assert group.submit(lambda s: s is state, state).result(timeout=10)  # noqa: F821 - `state` is deleted below on purpose
    assert group.submit(var.get).result(timeout=10) is state  # a second task: the thread was kept
    pause = threading.Event()
    for _ in range(1000):  # until the thread has let go of its task and waits for the next
        if group.idle == 1:
            break
        pause.wait(0.01)
    assert group.idle == 1
    var.set(None)
    gone = weakref.ref(state)
    del state
    gc.collect()
    assert [t for t in threading.enumerate() if t.name == "test-holds-nothing"]  # idle, alive
    assert gone() is None


# --- a reply no callback sees (deepresearch.llm.streaming.unobserved_stream) -------------------

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402


class Tokens(BaseCallbackHandler):
    def __init__(self):
        self.tokens: list[str] = []

    def on_llm_new_token(self, token, **kwargs):
        self.tokens.append(token)


TOOL_ARGS = json.dumps({"claim": "Eiffel's company designed it", "confidence": 4})
REPLIES = {
    "text": [
        chunk("Gustave Eiffel's "),
        chunk("company designed the tower."),
        chunk(finish="stop"),
        chunk(usage=USAGE),
        "data: [DONE]\n\n",
    ],
    "tool call": [
        'data: {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "stub", "choices": '
        '[{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "t1", "type": "function", "function": '
        '{"name": "Finding", "arguments": ' + json.dumps(TOOL_ARGS[:20]) + '}}]}, "finish_reason": null}]}\n\n',
        'data: {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "stub", "choices": '
        '[{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '
        + json.dumps(TOOL_ARGS[20:])
        + '}}]}, "finish_reason": "tool_calls"}]}\n\n',
        chunk(usage=USAGE),
        "data: [DONE]\n\n",
    ],
    "reasoning": [
        'data: {"id": "c3", "object": "chat.completion.chunk", "created": 1, "model": "stub", "choices": '
        '[{"index": 0, "delta": {"reasoning_content": "Think first."}, "finish_reason": null}]}\n\n',
        chunk(TEXT),
        chunk(finish="stop"),
        "data: [DONE]\n\n",
    ],
}


@pytest.mark.parametrize("kind", list(REPLIES))
def test_a_reply_no_callback_sees_is_the_one_langchains_stream_gives(key, kind):
    """Without a callback to see it, a reply is read from the model's own stream of pieces, not
    through LangChain's callback run: the same message (content, tool calls, usage, metadata)."""
    with RawServer(lambda n, body: sse(*REPLIES[kind])) as s:
        model = get_model("openai:stub", base_url=s.base_url, timeout=30, max_retries=0)
        runnable = model.bind_tools([Finding], tool_choice="Finding") if kind == "tool call" else model
        messages = [SystemMessage(content="You are careful."), HumanMessage(content="Who designed it?")]
        kwargs = {"max_tokens": 50, "stream_usage": True}
        unseen = read_reply(runnable, messages, kwargs, cap=500, timeout=10).message
        seen = Tokens()
        watched = RunnableLambda(lambda _: read_reply(runnable, messages, kwargs, cap=500, timeout=10).message).invoke(
            None, config={"callbacks": [seen]}
        )
    assert seen.tokens  # a callback saw the second reply: LangChain's own stream read it
    for field in ("content", "tool_calls", "invalid_tool_calls", "usage_metadata", "response_metadata"):
        assert getattr(unseen, field) == getattr(watched, field), field
    assert s.requests[0]["body"] == s.requests[1]["body"]
    if kind == "tool call":
        assert unseen.tool_calls[0]["args"] == json.loads(TOOL_ARGS)
    else:
        assert TEXT in unseen.content


def test_a_callback_or_a_rate_limiter_keeps_langchains_stream():
    from langchain_core.rate_limiters import InMemoryRateLimiter

    from deepresearch.llm.streaming import unobserved_stream

    model = GenericFakeChatModel(messages=iter([AIMessage(content="one two")]))
    messages = [HumanMessage(content="q")]
    assert unobserved_stream(model, messages, {}) is not None
    assert (
        RunnableLambda(lambda _: unobserved_stream(model, messages, {})).invoke(None, config={"callbacks": [Tokens()]})
        is None
    )
    limited = GenericFakeChatModel(messages=iter([]), rate_limiter=InMemoryRateLimiter(requests_per_second=100))
    assert unobserved_stream(limited, messages, {}) is None


def test_the_messages_stream_mode_still_gets_the_replys_pieces(key):
    """A graph streamed with `messages` (Studio, the SDK) sees every model call's pieces: its
    stream handler is a callback, so the reply goes through LangChain's stream."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict, total=False):
        answer: str

    with RawServer(lambda n, body: sse(*REPLIES["text"])) as s:
        ctx = Context(model="openai:stub", base_url=s.base_url, max_retries=0)
        g = StateGraph(S)
        g.add_node("ask", lambda state: {"answer": chat(ctx, budget(), [HumanMessage(content="Who?")], node="writer")})
        g.add_edge(START, "ask")
        g.add_edge("ask", END)
        pieces = [m.content for m, meta in g.compile().stream({}, stream_mode="messages") if m.content]
    assert "".join(pieces) == TEXT
