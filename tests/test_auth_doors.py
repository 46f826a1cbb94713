"""Two users (and an admin) on one `langgraph dev` with DEEPRESEARCH_AUTH=tokens, at the doors
where the server's own checks came too late or said too much (issue 61): a run of one's own
reading another user's stored texts through a source's label in state; streams, commands and
the websocket of another user's thread answering 200; unknown paths under /ui/ answering 500;
query-string credentials in the access log; thread ids confirmed by trying to create them.

No model is called: the runs go straight to the edit step (`report_feedback`) from a state the
user writes, as a client can, and a fact check quotes the text it reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from deepresearch.store import TEXTS_NAMESPACE
from deepresearch.text.urls import source_key
from tests.dev_server import DevServer, DevServerError
from tests.helpers import cli

SECRET = "Alice's own notes say the lighthouse keeper hid the golden key under the third stone."
CLAIM = "The lighthouse keeper hid the golden key under the third stone [1]."
CLI_SECRET = "The lighthouse keeper hid the golden key under the third stone of the ferry pier."  # a CLI user's


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doors")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("DEEPRESEARCH_")}
    env.update(
        PYTHONPATH=str(Path(__file__).resolve().parent.parent),
        HOME=str(folder),
        DEEPRESEARCH_TOKENS_FILE=str(folder / "tokens.json"),
    )
    creds = {}
    for name, extra in (("alice", []), ("bob", []), ("root", ["--admin"])):
        r = cli(["users", "add", name, *extra], env)
        assert r.returncode == 0, r.stderr
        creds[name] = r.stdout.strip()
    # a text a CLI run on the server's machine kept in its file store (the server's HOME)
    texts = folder / ".cache" / "deepresearch" / "texts"
    texts.mkdir(parents=True)
    (texts / f"{source_key('https://example.org/ferry')}.txt").write_text("Filler. " * 60 + CLI_SECRET)
    (folder / "private.txt").write_text("Filler. " * 60 + CLI_SECRET)
    with ExitStack() as stack:
        served = DevServer(
            folder,
            {
                "DEEPRESEARCH_AUTH": "tokens",
                "DEEPRESEARCH_TOKENS_FILE": env["DEEPRESEARCH_TOKENS_FILE"],
                "XDG_CACHE_HOME": str(folder / ".cache"),
            },
            args=("--server-log-level", "INFO"),
        )  # every request in the access log
        stack.callback(served.stop)
        try:
            served.wait_ready()
        except DevServerError as e:
            pytest.fail(str(e))
        served.creds = creds
        yield served


def headers(server, who: str | None, client: str | None = None) -> dict:
    h = {"Authorization": f"Bearer {server.creds[who]}"} if who else {}
    return {**h, "X-Forwarded-For": client} if client else h  # a refusal counts against `client`


def client(server, who: str):
    return get_client(url=server.url, headers=headers(server, who))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=600))


def report_with(url: str) -> str:
    return f"# Report\n\n{CLAIM}\n\n## Sources\n\n1. [Page]({url})\n"


async def fact_check(c, thread: str, source: dict) -> dict:
    """On `thread`: the state a client can write (a finished report citing `source`, editing on),
    the run to the edit step, a fact check of the report's claim; what the check says."""
    report = report_with(source["url"])
    await c.threads.update_state(
        thread,
        {
            "question": "Where is the key?",
            "report": report,
            "evidence": [source],
            "sources": [{"id": 1, "title": source["title"], "url": source["url"]}],
            "editing": True,
        },
        as_node="infer",
    )
    await c.runs.wait(thread, "iterative", input=None)
    start = report.index(CLAIM)
    await c.runs.wait(
        thread,
        "iterative",
        command={"resume": {"action": "fact_check", "selected_text": CLAIM, "start": start, "end": start + len(CLAIM)}},
    )
    [claim] = (await c.threads.get_state(thread))["values"]["last_change"]["claims"]
    return claim


def test_a_run_reads_only_its_own_stored_texts_whatever_its_state_says(server):
    """Alice's text kept where her runs keep them; her fact check quotes it. Bob's run, whose state
    names her label (or none, or a file of the server's), is checked against his own snippet."""
    url = "https://example.org/alice-page"

    async def go():
        alice, bob = client(server, "alice"), client(server, "bob")
        hers = (await alice.threads.create(graph_id="iterative"))["thread_id"]
        # the store API puts it under her label: (u:alice, deepresearch, texts, t:<thread>), as her runs do
        await alice.store.put_item((*TEXTS_NAMESPACE, f"t:{hers}"), source_key(url), {"text": "Filler. " * 60 + SECRET})
        source = {
            "id": 1,
            "key": source_key(url),
            "title": "Page",
            "url": url,
            "backend": "web",
            "snippet": "A page about a lighthouse.",
            "text_ns": f"u:alice/t:{hers}",
        }
        out = {"alice": await fact_check(alice, hers, source)}
        lures = {
            "her label": source,
            "her thread, no owner": {**source, "text_ns": f"t:{hers}"},
            "the file store": {**source, "key": source_key("https://example.org/ferry"), "text_ns": None},
            "a path": {**source, "key": "../../../private", "text_ns": None},
        }
        for name, lure in lures.items():
            mine = (await bob.threads.create(graph_id="iterative"))["thread_id"]
            out[name] = await fact_check(bob, mine, lure)
        return out

    out = run(go())
    assert out["alice"]["verdict"] == "supported" and SECRET in out["alice"]["quote"], out["alice"]
    for name in ("her label", "her thread, no owner", "the file store", "a path"):
        quote = out[name]["quote"]
        assert "golden key" not in quote and out[name]["verdict"] != "supported", (name, out[name])


async def opening(http: httpx.AsyncClient, method: str, path: str, **kw) -> tuple[int, str]:
    """The status of a request and its body, or "stream" for an event stream (not waited for)."""
    async with http.stream(method, path, **kw) as r:
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            return r.status_code, "stream"
        return r.status_code, (await r.aread()).decode()


async def websocket_opening(server, path: str, who: str | None, address: str) -> tuple[int, str]:
    """The HTTP status of a websocket handshake (101 and the answer to a command when it opens)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    try:
        async with connect(
            server.url.replace("http://", "ws://") + path, additional_headers=headers(server, who, address)
        ) as ws:
            await ws.send(json.dumps({"id": 7, "method": "agent.getTree", "params": {}}))
            return 101, await ws.recv()
    except InvalidStatus as e:
        return e.response.status_code, e.response.body.decode()
    except ConnectionClosed as e:  # accepted, then closed
        return 101, f"closed {e.rcvd.code if e.rcvd else ''}"


def test_streams_commands_runs_and_the_websocket_of_another_users_thread_are_refused_before_they_start(server):
    async def go():
        alice = client(server, "alice")
        thread, spare = [(await alice.threads.create(graph_id="iterative"))["thread_id"] for _ in range(2)]
        later = {"assistant_id": "iterative", "input": {"question": "x"}, "after_seconds": 3600}  # never runs here
        run_id = (await alice.runs.create(thread, "iterative", input={"question": "x"}, after_seconds=3600))["run_id"]
        doors = {
            "run stream": ("GET", f"/threads/{thread}/runs/{run_id}/stream", None),
            "thread stream": ("GET", f"/threads/{thread}/stream", None),
            "events": ("POST", f"/threads/{thread}/stream/events", {"channels": ["values"]}),
            "command": ("POST", f"/threads/{thread}/commands", {"id": 7, "method": "agent.getTree", "params": {}}),
            "run": ("POST", f"/threads/{spare}/runs", later),
        }
        out = {}
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            for who in ("bob", None, "alice"):
                for name, (method, path, body) in doors.items():
                    if who == "bob" and name == "run":
                        path = f"/threads/{thread}/runs"
                    out[who, name] = await opening(
                        http, method, path, json=body, headers=headers(server, who, f"10.61.2.{len(out)}")
                    )
                out[who, "websocket"] = await websocket_opening(
                    server, f"/threads/{thread}/stream/events", who, f"10.61.3.{len(out)}"
                )
        for t in (thread, spare):  # nothing left waiting
            for r in await alice.runs.list(t):
                await alice.runs.cancel(t, r["run_id"])
        return out

    out = run(go())
    for name in ("run stream", "thread stream", "events", "command", "run", "websocket"):
        code, body = out["bob", name]
        assert code == 404 and json.loads(body)["detail"].endswith("not found"), (name, out["bob", name])
        code, body = out[None, name]
        assert code == 401 and json.loads(body)["detail"].startswith("sign in"), (name, out[None, name])
    # the owner's doors open as before
    assert {n: out["alice", n] for n in ("run stream", "thread stream", "events")} == {
        n: (200, "stream") for n in ("run stream", "thread stream", "events")
    }
    assert out["alice", "command"][0] == 200 and json.loads(out["alice", "command"][1])["id"] == 7
    assert out["alice", "run"][0] == 200 and json.loads(out["alice", "run"][1])["status"] == "pending"
    assert out["alice", "websocket"][0] == 101 and json.loads(out["alice", "websocket"][1])["id"] == 7


def raw_get(server, path: str, method: str = "GET", who: str | None = None) -> int:
    """A request whose path is sent as written (httpx would resolve its dot segments)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(method, path, headers=headers(server, who))
        return conn.getresponse().status
    finally:
        conn.close()


def test_unknown_paths_under_ui_answer_404(server):
    thread = httpx.post(f"{server.url}/threads", json={}, headers=headers(server, "alice")).json()["thread_id"]
    unknown = ["/ui/foo", "/ui/a/b/c.js", "/ui/static/nope.js", f"/ui/../threads/{thread}", "/ui/%2e%2e/threads"]
    codes = {(path, "GET", None): raw_get(server, path) for path in unknown}  # the page's GETs need no token
    codes |= {
        (path, method, "bob"): raw_get(server, path, method, "bob")
        for path in unknown
        for method in ("GET", "HEAD", "PUT", "POST")
        if not (path.startswith("/ui/static/") and method in ("PUT", "POST"))
    }  # the page's files: 405
    assert codes == {k: 404 for k in codes}, {k: c for k, c in codes.items() if c != 404}
    # the page is there
    assert [raw_get(server, p) for p in ("/ui/", "/ui/static/app.js", "/ui/static/style.css")] == [200, 200, 200]


def test_thread_ids_cannot_be_confirmed_by_another_user(server):
    """Every way of creating a thread with an id: the same answer for alice's id as for an unused one."""

    def same(answer: tuple[int, str], thread: str) -> tuple[int, str]:
        return answer[0], answer[1].replace(thread, "<id>")

    async def go():
        alice = client(server, "alice")
        hers = (await alice.threads.create(graph_id="iterative"))["thread_id"]
        assistant = (await alice.assistants.search(graph_id="iterative"))[0]["assistant_id"]
        later = {
            "assistant_id": "iterative",
            "input": {"question": "x"},
            "after_seconds": 3600,
            "if_not_exists": "create",
        }
        tries = {
            "create": ("POST", "/threads", lambda t: {"thread_id": t}),
            "create or get": ("POST", "/threads", lambda t: {"thread_id": t, "if_exists": "do_nothing"}),
            "run creating it": ("POST", "/threads/{}/runs", lambda t: later),
            "waited run creating it": ("POST", "/threads/{}/runs/wait", lambda t: later),
            "command creating it": (
                "POST",
                "/threads/{}/commands",
                lambda t: {
                    "id": 1,
                    "method": "run.start",
                    "params": {"assistant_id": "iterative", "input": {"question": "x"}},
                },
            ),
            "a2a": (
                "POST",
                "/a2a/" + assistant,
                lambda t: {  # off in langgraph.json: our graphs take no messages
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "message/send",
                    "params": {
                        "message": {
                            "role": "user",
                            "parts": [{"kind": "text", "text": "x"}],
                            "messageId": "m1",
                            "contextId": t,
                        }
                    },
                },
            ),
            "copy": ("POST", "/threads/{}/copy", lambda t: {}),
            "state": ("POST", "/threads/{}/state", lambda t: {"values": {"question": "x"}}),
        }
        answers, unused = {}, []
        async with httpx.AsyncClient(base_url=server.url, timeout=60, headers=headers(server, "bob")) as http:
            for name, (method, path, body) in tries.items():
                fresh = str(uuid.uuid4())
                unused.append(fresh)
                answers[name] = [
                    same(await opening(http, method, path.format(t), json=body(t)), t) for t in (hers, fresh)
                ]
            mine = (await http.post("/threads", json={})).json()["thread_id"]  # his own: as before
            own = [
                (await http.post("/threads", json={"thread_id": mine, **extra})).status_code
                for extra in ({}, {"if_exists": "do_nothing"})
            ]
        root = client(server, "root")  # nothing was created, nothing of hers changed
        left = [await status(root.threads.get(t)) for t in unused]
        owner = (await root.threads.get(hers))["metadata"]["owner"]
        for r in await alice.runs.list(hers):
            await alice.runs.cancel(hers, r["run_id"])
        return answers, own, left, owner

    answers, own, left, owner = run(go())
    for name, (taken, free) in answers.items():
        assert taken == free and (taken[0] in (403, 404, 409) or name == "a2a"), (name, taken, free)
    assert answers["create"][0][0] == 403
    assert own == [409, 200] and left == [404] * len(left) and owner == "alice"


async def status(coro) -> int:
    try:
        await coro
        return 200
    except httpx.HTTPStatusError as e:
        return e.response.status_code


def test_the_a2a_door_is_closed_to_everyone_with_the_refusals_status(server):
    """A2A is off (`disable_a2a`): the owner's own task list and her message answer what a
    refusal answers a signed-in user (404, one line), and with no token 401, like every door."""

    async def go():
        alice = client(server, "alice")
        assistant = (await alice.assistants.search(graph_id="iterative"))[0]["assistant_id"]
        thread = (await alice.threads.create(graph_id="iterative"))["thread_id"]
        calls = {
            "tasks/list": {"contextId": thread},
            "tasks/get": {"id": str(uuid.uuid4())},
            "message/send": {
                "message": {
                    "role": "user",
                    "parts": [{"kind": "text", "text": "x"}],
                    "messageId": "m1",
                    "contextId": thread,
                }
            },
        }
        out = {}
        for who in ("alice", None):
            async with httpx.AsyncClient(base_url=server.url, timeout=60, headers=headers(server, who)) as http:
                for method, params in calls.items():
                    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                    r = await http.post(f"/a2a/{assistant}", json=body)
                    out[(who, method)] = (r.status_code, r.text)
                r = await http.get(f"/a2a/{assistant}/.well-known/agent-card.json")
                out[(who, "card")] = (r.status_code, r.text)
                r = await http.get(f"/threads/{uuid.uuid4()}")
                out[(who, "refusal")] = (r.status_code, r.text)
        return out

    out = run(go())
    for (who, what), (code, text) in out.items():
        refusal = out[(who, "refusal")]
        assert code == refusal[0] == (404 if who else 401), (who, what, code, text)
        assert json.loads(text).keys() == {"detail"} and "\n" not in text, (who, what, text)
        if not who:
            assert text == refusal[1]  # the sign-in line, the same at every door


def test_no_query_string_credential_is_logged(server):
    """The module's last test: it stops the server to read its whole log. Tokens and secrets in
    query strings, on refused and on answered requests, by a credential's name or by its shape."""
    secret = f"hunter2-{uuid.uuid4().hex}"
    alice = headers(server, "alice")
    thread = httpx.post(f"{server.url}/threads", json={}, headers=alice).json()["thread_id"]
    sent = [  # (method, path, headers, expected status)
        ("GET", f"/threads/{thread}/state?token={server.creds['alice']}", headers(server, None, "10.61.4.1"), 401),
        ("GET", f"/threads/{thread}/state?access_token={server.creds['bob']}", headers(server, None, "10.61.4.2"), 401),
        ("POST", f"/threads/search?q={secret}", headers(server, None, "10.61.4.3"), 401),
        ("GET", f"/threads/{thread}/state?note={secret}", headers(server, "bob"), 404),
        ("GET", f"/ui/?next={server.creds['root']}", {}, 200),
        ("GET", f"/ui/?api_key=not-a-token-{secret}", {}, 200),
        ("GET", f"/threads/{thread}/history?limit=2&Authorization=Bearer%20{server.creds['alice']}", alice, 200),
        ("GET", f"/threads/{thread}/stream?x-api-key={secret}", headers(server, "bob"), 404),
    ]
    got = [
        httpx.request(method, server.url + path, headers=h, json={} if method == "POST" else None).status_code
        for method, path, h, _ in sent
    ]
    assert got == [expected for *_, expected in sent]
    server.stop()  # the log is all written out
    log = server.log(10**8)
    lines = re.findall(r"\] (GET|POST) (\S+) (\d{3}) \d+ms .*? query_string=(\S*)", log)
    # answered: what is left of the query string; refused: none; the requests are there
    assert ("GET", f"/threads/{thread}/history", "200", "'limit=2'") in lines
    assert lines.count(("GET", "/ui/", "200", "")) >= 2
    assert {
        ("GET", f"/threads/{thread}/state", "401", ""),
        ("POST", "/threads/search", "401", ""),
        ("GET", f"/threads/{thread}/state", "404", ""),
    } <= set(lines)
    assert all(q == "" for *_, code, q in lines if int(code) >= 400), [x for x in lines if x[3] and int(x[2]) >= 400]
    for leak in (*server.creds.values(), secret):
        assert leak not in log, leak
