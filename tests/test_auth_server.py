"""Two users on one `langgraph dev`, in each auth mode (API tokens from `deepresearch users`, JWTs
from an issuer whose JWKS is served on 127.0.0.1): each researches through the API, `/mcp` and
the page (the real browser), and neither reaches the other's threads, assistants or store
items by any door; anonymous and bad tokens are refused in one line; repeated failures from
one client are refused; no token reaches the server's log or its checkpoints.

One server per mode (a module fixture), the embedded offline model, one research round.
Deliberate failures carry an X-Forwarded-For address (uvicorn trusts it from 127.0.0.1, as
from a proxy on the machine), so they count against that address, not against the tests'.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from tests.dev_server import DevServer, DevServerError
from tests.helpers import cli, one_line_error
from tests.stub_jwks import StubIssuer
from tests.web_helpers import CHROMIUM_ARGS, chromium, open_settings, settle

USERS = ("alice", "bob")
OTHER = {"alice": "bob", "bob": "alice"}
QUESTION = {"alice": "Who built the Eiffel Tower?", "bob": "What is the Louvre?"}  # through the API and /mcp
ON_THE_PAGE = {"alice": "Who painted the Mona Lisa?", "bob": "What is the Colosseum?"}
ONE_ROUND = {"max_iterations": 1}
MAX_FAILURES = 5


@dataclass
class Served:
    mode: str
    server: DevServer
    folder: Path
    creds: dict
    env: dict  # for the CLI
    issuer: StubIssuer | None = None
    refused: list = field(default_factory=list)  # every bad token sent: none may be logged either

    def headers(self, who: str | None, client: str | None = None) -> dict:
        h = {"Authorization": f"Bearer {self.creds[who]}"} if who else {}
        return {**h, "X-Forwarded-For": client} if client else h

    def client(self, who: str):
        return get_client(url=self.server.url, headers=self.headers(who))


@pytest.fixture(scope="module", params=["tokens", "jwt"])
def served(request, tmp_path_factory):
    mode = request.param
    folder = tmp_path_factory.mktemp(f"auth-{mode}")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("DEEPRESEARCH_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parent.parent), HOME=str(folder))
    with ExitStack() as stack:
        issuer = None
        if mode == "tokens":
            env["DEEPRESEARCH_TOKENS_FILE"] = str(folder / "tokens.json")
            creds = {}
            for name, extra in (("alice", []), ("bob", []), ("root", ["--admin"])):
                r = cli(["users", "add", name, *extra], env)
                assert r.returncode == 0, r.stderr
                creds[name] = r.stdout.strip()
            server_env = {"DEEPRESEARCH_AUTH": "tokens", "DEEPRESEARCH_TOKENS_FILE": env["DEEPRESEARCH_TOKENS_FILE"]}
        else:
            issuer = stack.enter_context(StubIssuer())
            creds = {
                "alice": issuer.token("alice"),
                "bob": issuer.token("bob"),
                "root": issuer.token("root", roles=["deepresearch-admin"]),
            }
            server_env = issuer.env()
        server = DevServer(folder, {**server_env, "DEEPRESEARCH_AUTH_MAX_FAILURES": str(MAX_FAILURES)})
        stack.callback(server.stop)
        try:
            server.wait_ready()
        except DevServerError as e:
            pytest.fail(str(e))
        yield Served(mode, server, folder, creds, env, issuer)


def run(coro):
    """Run `coro` on a thread of its own: the browser's sync API holds this thread's event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout=600)).result()


async def status(coro) -> int:
    try:
        await coro
        return 200
    except httpx.HTTPStatusError as e:
        return e.response.status_code


async def first(stream):
    async for part in await stream:
        return part


def bad_tokens(served: Served) -> dict[str, str]:
    """Tokens that must be refused, with the reason the 401 gives."""
    if served.mode == "tokens":
        return {"drt_" + "A" * 43: "not valid", served.creds["alice"][:-2]: "not valid"}
    issuer = served.issuer
    return {
        issuer.token("alice", expires_in=-120): "has expired",
        issuer.token("alice", key=issuer.impostor): "signature is not valid",
        issuer.token("alice", iss="https://elsewhere.example"): "another issuer",
        "not-a-jwt": "not a JWT",
    }


def test_anonymous_and_bad_tokens_are_refused_in_one_line(served):
    url = served.server.url
    doors = [
        ("POST", "/threads/search", {}),
        ("GET", f"/threads/{uuid.uuid4()}/state", None),
        ("POST", "/assistants/search", {}),
        ("POST", "/store/items/search", {"namespace_prefix": []}),
        ("POST", "/ui/api/view", {}),
        ("POST", "/ui/api/export?format=md", {}),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ]
    cases = {
        None: "sign in",
        "Basic YWxpY2U6eA==": "sign in",
        **{f"Bearer {t}": why for t, why in bad_tokens(served).items()},
    }
    served.refused += [c.split(" ", 1)[1] for c in cases if c]
    studio = {"x-auth-scheme": "langsmith"}  # LangGraph Studio's own sign-in is no way around this one
    for n, (auth, why) in enumerate([*cases.items(), (None, "sign in")]):
        for method, path, body in doors:
            headers = {
                "X-Forwarded-For": f"10.1.{n}.{len(path)}",
                **({"Authorization": auth} if auth else {}),
                **(studio if n == len(cases) else {}),
            }
            r = httpx.request(method, f"{url}{path}", json=body, headers=headers)
            assert r.status_code == 401, (auth, path, r.status_code, r.text)
            detail = r.json()["detail"]
            assert set(r.json()) == {"detail"} and why in detail and "\n" not in detail, (path, r.text)
    assert httpx.get(f"{url}/ui/").status_code == 200  # the page itself loads, to sign in


def test_two_users_through_the_api_mcp_and_export(served, tmp_path):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import McpError

    async def mcp_tools(who: str, call: str | None = None):
        async with httpx.AsyncClient(headers=served.headers(who), timeout=600) as http:
            async with streamable_http_client(f"{served.server.url}/mcp", http_client=http) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {t.name for t in (await session.list_tools()).tools}
                    try:
                        result = await session.call_tool(call, {"question": QUESTION[who]}) if call else None
                    except McpError as e:
                        result = str(e)
                    return tools, result

    async def trespass(who: str, victim: str, tid: str, assistant_id: str) -> dict:
        """`who`, by every call of the API, on `victim`'s thread, assistant and cron."""
        me, owner = served.client(who), served.client(victim)
        cron = await owner.crons.create_for_thread(tid, "iterative", schedule="0 0 1 1 *", input={"question": "x"})
        attempts = {
            "get": me.threads.get(tid),
            "state": me.threads.get_state(tid),
            "history": me.threads.get_history(tid),
            "update": me.threads.update(tid, metadata={"x": 1}),
            "edit": me.threads.update_state(tid, {"report": f"changed by {who}"}),
            "runs": me.runs.list(tid),
            "resume": me.runs.wait(tid, "iterative", command={"resume": {"action": "finish"}}, context=ONE_ROUND),
            "stream": me.runs.create(tid, "iterative", input={"question": "x"}, context=ONE_ROUND),
            "assistant": me.assistants.get(assistant_id),
            "assistant-edit": me.assistants.update(assistant_id, name="taken"),
            "assistant-delete": me.assistants.delete(assistant_id),
            "cron-on-the-thread": me.crons.create_for_thread(tid, "iterative", schedule="0 0 1 1 *"),
            "cron-delete": me.crons.delete(cron["cron_id"]),
            "delete": me.threads.delete(tid),
        }
        codes = {name: await status(c) for name, c in attempts.items()}
        # a copy answers as for a thread that does not exist; a joined stream is refused before it starts
        codes["copy"] = [await status(me.threads.copy(t)) for t in (tid, str(uuid.uuid4()))]
        codes["join"] = await status(first(me.threads.join_stream(tid)))
        codes["crons"] = (
            [c["cron_id"] for c in await owner.crons.search()],
            [c["cron_id"] for c in await me.crons.search()],
        )
        await owner.crons.delete(cron["cron_id"])
        return codes

    async def go():
        c = {who: served.client(who) for who in (*USERS, "root")}
        tids, outs, mine, tools, results, foreign = {}, {}, {}, {}, {}, {}
        for who in USERS:  # each researches through the API and keeps an assistant of their own
            tids[who] = (await c[who].threads.create(metadata={"dr_question": QUESTION[who]}))["thread_id"]
            outs[who] = await c[who].runs.wait(
                tids[who], "iterative", input={"question": QUESTION[who]}, context=ONE_ROUND
            )
            mine[who] = (await c[who].assistants.create("iterative", context=ONE_ROUND, name=f"{who}_quick"))[
                "assistant_id"
            ]
        for who in USERS:  # ... and through /mcp with it: the other's is no tool of theirs
            tools[who], results[who] = await mcp_tools(who, f"{who}_quick")
            _, foreign[who] = await mcp_tools(who, f"{OTHER[who]}_quick")
        # nobody passes an item off as the server's own or as another user's
        await c["bob"].assistants.create(
            "iterative", name="fake_system", metadata={"created_by": "system", "owner": "alice"}
        )
        gift = await c["bob"].threads.create(metadata={"owner": "alice"})
        gift = await c["bob"].threads.update(gift["thread_id"], metadata={"owner": "alice", "note": "for alice"})
        codes = {who: await trespass(who, OTHER[who], tids[OTHER[who]], mine[OTHER[who]]) for who in USERS}
        listed = {who: [t["thread_id"] for t in await c[who].threads.search(limit=100)] for who in c}
        assistants = {who: {a["name"] for a in await c[who].assistants.search(limit=100)} for who in USERS}
        after = {who: (await c[who].threads.get_state(tids[who]))["values"] for who in USERS}
        # the store: each run kept its sources' texts under its owner's label; the other reaches none
        store = {}
        for who in USERS:
            own = (await c[who].store.search_items((f"u:{who}",), limit=100))["items"]
            theirs = (await c[OTHER[who]].store.search_items((f"u:{who}",), limit=100))["items"]
            peek = await c[OTHER[who]].store.get_item(own[0]["namespace"], own[0]["key"]) if own else "no item"
            everything = (await c[who].store.search_items((), limit=100))["items"]
            store[who] = (own, theirs, peek, {tuple(i["namespace"][:1]) for i in everything})
        return tids, outs, results, foreign, tools, codes, listed, assistants, after, store, gift

    tids, outs, results, foreign, tools, codes, listed, assistants, after, store, gift = run(go())
    for who in USERS:
        other = OTHER[who]
        assert "## Sources" in outs[who]["report"]
        assert not results[who].isError and "## Sources" in " ".join(
            getattr(x, "text", "") for x in results[who].content
        )
        assert {"iterative", "deep", f"{who}_quick"} <= tools[who] and f"{other}_quick" not in tools[who]
        assert foreign[who] == f"Unknown tool: {other}_quick"
        tried = codes[who]
        copies, joined, (owners_crons, my_crons) = tried.pop("copy"), tried.pop("join"), tried.pop("crons")
        assert tried == {name: 404 for name in tried}, (who, tried)
        assert copies == [409, 409] and len(owners_crons) == 1 and my_crons == []
        assert joined == 404
        assert (
            tids[who] in listed[who] and tids[who] not in listed[other] and tids[who] in listed["root"]
        )  # an admin sees all
        assert f"{who}_quick" in assistants[who] and f"{who}_quick" not in assistants[other]
        assert after[who]["report"] == outs[who]["report"]  # untouched by the other
        own, theirs, peek, namespaces = store[who]
        assert own and theirs == [] and peek is None and namespaces == {(f"u:{who}",)}
    assert "fake_system" in assistants["bob"] and "fake_system" not in assistants["alice"]
    assert gift["metadata"]["owner"] == "bob" and gift["metadata"]["note"] == "for alice"
    assert gift["thread_id"] in listed["bob"] and gift["thread_id"] not in listed["alice"]
    # `deepresearch export --url`: alice's token exports her report; bob's finds no such thread
    tid, target = tids["alice"], tmp_path / "r.md"
    r = cli(["export", tid, "--url", served.server.url, "--token", served.creds["alice"], "-o", target], served.env)
    assert r.returncode == 0, r.stderr
    assert target.read_text() == outs["alice"]["report"]
    bob_env = {**served.env, "DEEPRESEARCH_TOKEN": served.creds["bob"]}
    assert "unknown thread" in one_line_error(cli(["export", tid, "--url", served.server.url], bob_env))
    assert "refused the request" in one_line_error(cli(["export", tid, "--url", served.server.url], served.env))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def use_the_page(served: Served, browser, who: str, tmp_path: Path, *, wrong_token: str | None = None) -> str:
    """`who` signs in on a fresh page, researches, exports and signs out; the thread's id."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    sent = []  # every call of the page to the server's API, with its Authorization header
    page.on(
        "request",
        lambda r: (
            sent.append((r.url, r.headers.get("authorization")))
            if any(p in r.url for p in ("/threads", "/runs", "/ui/api/")) and "/ui/static/" not in r.url
            else None
        ),
    )
    page.goto(f"{served.server.url}/ui/")
    page.wait_for_selector("#sign-in:not([hidden])")  # the thread list was refused: sign in
    if wrong_token:
        page.fill("#token", wrong_token)
        page.click("#sign-in-button")
        page.wait_for_selector("#sign-in-note:has-text('not')")
        assert page.is_visible("#sign-in") and page.evaluate("sessionStorage.length") == 0
    page.fill("#token", served.creds[who])
    page.click("#sign-in-button")
    assert page.is_hidden("#sign-in") and page.is_visible("#sign-out")
    page.fill("#question", ON_THE_PAGE[who])
    open_settings(page)  # the budgets are folded under Settings
    page.fill("#max_iterations", "1")
    page.set_checked("#edit_after_report", False)
    page.click("#ask")
    assert settle(page).startswith("finished"), page.inner_text("#status")
    assert "Sources" in page.inner_text("#report")
    with page.expect_download() as d:  # an export goes through the same sign-in
        page.click("#export-md")
    d.value.save_as(str(tmp_path / f"{who}.md"))
    assert "## Sources" in (tmp_path / f"{who}.md").read_text()
    page.reload()  # the token is kept for the tab
    page.wait_for_selector(".open-thread")
    listed = page.locator(".open-thread").all_inner_texts()
    assert ON_THE_PAGE[who] in listed
    assert not any(q in listed for q in (ON_THE_PAGE[OTHER[who]], QUESTION[OTHER[who]]))
    thread = page.get_attribute(".thread", "data-thread")
    page.click("#sign-out")  # forgotten: nothing shown, nothing kept
    assert page.is_visible("#sign-in") and page.evaluate("sessionStorage.length") == 0
    assert page.locator(".thread").count() == 0 and page.inner_text("#report") == ""
    context.close()
    bearer = f"Bearer {served.creds[who]}"
    assert sent[0][1] is None  # before signing in: refused
    signed = sent[[a for _, a in sent].index(bearer) :]
    assert all(a == bearer for _, a in signed), [
        u for u, a in signed if a != bearer
    ]  # then the token goes with every call
    assert any("/runs/stream" in u for u, _ in signed) and any("/ui/api/export" in u for u, _ in signed)
    return thread


def test_each_user_signs_in_on_the_page_and_sees_only_their_threads(served, browser, tmp_path):
    served.refused.append("drt_not-a-token")
    threads = {
        who: use_the_page(served, browser, who, tmp_path, wrong_token="drt_not-a-token" if who == "bob" else None)
        for who in USERS
    }
    url = served.server.url
    for who in USERS:  # and the other's page thread is not there for them, by the API either
        mine = served.headers(who)
        seen = [t["thread_id"] for t in httpx.post(f"{url}/threads/search", json={"limit": 100}, headers=mine).json()]
        assert threads[who] in seen and threads[OTHER[who]] not in seen
        assert httpx.get(f"{url}/threads/{threads[OTHER[who]]}/state", headers=mine).status_code == 404


def test_repeated_failures_from_one_client_are_refused(served):
    url = served.server.url
    for _ in range(MAX_FAILURES):
        r = httpx.post(
            f"{url}/threads/search", json={}, headers={"Authorization": "Bearer wrong", "X-Forwarded-For": "10.9.9.9"}
        )
        assert r.status_code == 401 and "not" in r.json()["detail"]
    # now even a good token from that address is refused without being looked at; elsewhere it works
    blocked = httpx.post(f"{url}/threads/search", json={}, headers=served.headers("alice", "10.9.9.9"))
    assert blocked.status_code == 401 and "too many failed attempts" in blocked.json()["detail"]
    assert httpx.post(f"{url}/threads/search", json={}, headers=served.headers("alice", "10.9.9.10")).status_code == 200


def test_no_token_in_the_log_or_the_checkpoints(served):
    """The module's last test for each server: it searches what the runs above left."""
    served.server.stop()  # the dev server writes its state out as it stops
    stored = [p for p in (served.folder / ".langgraph_api").rglob("*") if p.is_file()]
    data = b"".join(p.read_bytes() for p in stored)
    assert all(q.encode() in data for q in (*QUESTION.values(), *ON_THE_PAGE.values()))  # the runs are there
    log = served.server.log_path.read_bytes()
    assert b"Using custom authentication" in log or b"custom" in log
    secrets = list(served.creds.values()) + [t for t in served.refused if len(t) > 8]
    for token in secrets:
        for part in {token, token.split(".")[-1]}:  # a JWT's signature alone would be a leak too
            assert part.encode() not in data, "a token in the checkpoints"
            assert part.encode() not in log, "a token in the log"


def test_a_server_on_a_public_address_without_auth_says_so_and_a_bad_mode_does_not_start(tmp_path):
    for name in ("public", "broken"):
        (tmp_path / name).mkdir()
    public = DevServer(tmp_path / "public", {"DEEPRESEARCH_AUTH": "none"}, host="0.0.0.0")
    try:
        public.wait_ready()
        assert httpx.post(f"{public.url}/threads/search", json={}).status_code == 200  # open, as it says
    finally:
        public.stop()
    warning = [line for line in public.log(10**6).splitlines() if "deepresearch: WARNING" in line]
    assert len(warning) == 1 and "listens on 0.0.0.0 with DEEPRESEARCH_AUTH=none" in warning[0]
    broken = DevServer(tmp_path / "broken", {"DEEPRESEARCH_AUTH": "ldap"})
    with pytest.raises(DevServerError):
        broken.wait_ready()
    assert broken.proc.returncode == 2
    assert (
        "deepresearch: the server cannot start: DEEPRESEARCH_AUTH='ldap': use one of none, tokens, jwt" in broken.log()
    )
    assert "Traceback" not in broken.log()
