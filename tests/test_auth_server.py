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
import sys
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
from tests.test_web_ui import CHROMIUM_ARGS, WAIT_MS, chromium, settle

QUESTION = {"alice": "Who designed the Eiffel Tower?", "bob": "What is the Louvre?"}
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
    threads: dict = field(default_factory=dict)

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
            creds = {"alice": issuer.token("alice"), "bob": issuer.token("bob"),
                     "root": issuer.token("root", roles=["deepresearch-admin"])}
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
    return {issuer.token("alice", expires_in=-120): "has expired",
            issuer.token("alice", key=issuer.impostor): "signature is not valid",
            issuer.token("alice", iss="https://elsewhere.example"): "another issuer",
            "not-a-jwt": "not a JWT"}


def test_anonymous_and_bad_tokens_are_refused_in_one_line(served):
    url = served.server.url
    doors = [("POST", "/threads/search", {}), ("GET", f"/threads/{uuid.uuid4()}/state", None),
             ("POST", "/assistants/search", {}), ("POST", "/store/items/search", {"namespace_prefix": []}),
             ("POST", "/ui/api/view", {}), ("POST", "/ui/api/export?format=md", {}),
             ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]
    cases = {None: "sign in", "Basic YWxpY2U6eA==": "sign in", **{f"Bearer {t}": why for t, why in bad_tokens(served).items()}}
    served.refused += [c.split(" ", 1)[1] for c in cases if c]
    studio = {"x-auth-scheme": "langsmith"}  # LangGraph Studio's own sign-in is no way around this one
    for n, (auth, why) in enumerate([*cases.items(), (None, "sign in")]):
        for method, path, body in doors:
            headers = {"X-Forwarded-For": f"10.1.{n}.{len(path)}", **({"Authorization": auth} if auth else {}),
                       **(studio if n == len(cases) else {})}
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

    async def go():
        alice, bob, root = served.client("alice"), served.client("bob"), served.client("root")
        # alice researches through the API, and keeps an assistant of her own
        tid = (await alice.threads.create(metadata={"dr_question": QUESTION["alice"]}))["thread_id"]
        out = await alice.runs.wait(tid, "iterative", input={"question": QUESTION["alice"]}, context=ONE_ROUND)
        mine = await alice.assistants.create("iterative", context=ONE_ROUND, name="alice_quick")
        # bob researches through /mcp with his own assistant; alice's is no tool of his
        await bob.assistants.create("iterative", context=ONE_ROUND, name="bob_quick")
        # nobody passes an item off as the server's own or as another user's
        await bob.assistants.create("iterative", name="fake_system", metadata={"created_by": "system", "owner": "alice"})
        gift = await bob.threads.create(metadata={"owner": "alice"})
        gift = await bob.threads.update(gift["thread_id"], metadata={"owner": "alice", "note": "for alice"})
        bob_tools, result = await mcp_tools("bob", "bob_quick")
        _, foreign = await mcp_tools("bob", "alice_quick")
        alice_tools, _ = await mcp_tools("alice")
        # bob, by every call of the API, on alice's thread and assistant: as if they did not exist
        attempts = {
            "get": bob.threads.get(tid), "state": bob.threads.get_state(tid),
            "history": bob.threads.get_history(tid), "update": bob.threads.update(tid, metadata={"x": 1}),
            "edit": bob.threads.update_state(tid, {"report": "changed by bob"}),
            "runs": bob.runs.list(tid),
            "resume": bob.runs.wait(tid, "iterative", command={"resume": {"action": "finish"}}, context=ONE_ROUND),
            "stream": bob.runs.create(tid, "iterative", input={"question": "x"}, context=ONE_ROUND),
            "assistant": bob.assistants.get(mine["assistant_id"]),
            "assistant-edit": bob.assistants.update(mine["assistant_id"], name="taken"),
            "assistant-delete": bob.assistants.delete(mine["assistant_id"]),
            "delete": bob.threads.delete(tid)}
        cron = await alice.crons.create_for_thread(tid, "iterative", schedule="0 0 1 1 *", input={"question": "x"})
        attempts.update({"cron-on-her-thread": bob.crons.create_for_thread(tid, "iterative", schedule="0 0 1 1 *"),
                         "cron-delete": bob.crons.delete(cron["cron_id"])})
        codes = {name: await status(c) for name, c in attempts.items()}
        crons = {who: [c["cron_id"] for c in await client.crons.search()] for who, client in (("alice", alice), ("bob", bob))}
        await alice.crons.delete(cron["cron_id"])
        # a copy answers as for a thread that does not exist; a joined stream says no more than that
        copies = [await status(bob.threads.copy(t)) for t in (tid, str(uuid.uuid4()))]
        joined = await first(bob.threads.join_stream(tid))
        listed = {who: [t["thread_id"] for t in await c.threads.search(limit=100)]
                  for who, c in (("alice", alice), ("bob", bob), ("root", root))}
        assistants = {who: {a["name"] for a in await c.assistants.search(limit=100)} for who, c in (("alice", alice), ("bob", bob))}
        after = await alice.threads.get_state(tid)
        # the store: alice's run kept its sources' texts under her label; bob reaches none of them
        texts = {who: await c.store.search_items(("u:alice",), limit=100) for who, c in (("alice", alice), ("bob", bob))}
        everything = (await bob.store.search_items((), limit=100))["items"]
        key = texts["alice"]["items"][0] if texts["alice"]["items"] else None
        peek = await bob.store.get_item(key["namespace"], key["key"]) if key else "no item"
        return tid, out, result, foreign, bob_tools, alice_tools, codes, copies, joined, listed, assistants, after, \
            texts, everything, peek, gift, crons

    (tid, out, result, foreign, bob_tools, alice_tools, codes, copies, joined, listed, assistants, after, texts,
     everything, peek, gift, crons) = run(go())
    served.threads["alice"] = tid
    assert "## Sources" in out["report"]
    assert not result.isError and "## Sources" in " ".join(getattr(c, "text", "") for c in result.content)
    assert {"iterative", "deep", "bob_quick"} <= bob_tools and "alice_quick" not in bob_tools
    assert "alice_quick" in alice_tools and "bob_quick" not in alice_tools
    assert foreign == "Unknown tool: alice_quick"
    assert codes == {name: 404 for name in codes}, codes
    assert copies[0] == copies[1] == 409
    assert len(crons["alice"]) == 1 and crons["bob"] == []
    assert joined.event == "error" and joined.data["message"] == "404: Thread not found"
    assert tid in listed["alice"] and tid not in listed["bob"] and tid in listed["root"]  # the admin sees all
    assert "alice_quick" in assistants["alice"] and "alice_quick" not in assistants["bob"]
    assert "fake_system" in assistants["bob"] and "fake_system" not in assistants["alice"]
    assert gift["metadata"]["owner"] == "bob" and gift["metadata"]["note"] == "for alice" and gift["thread_id"] in listed["bob"] and gift["thread_id"] not in listed["alice"]
    assert after["values"]["report"] == out["report"]  # untouched by bob
    assert texts["alice"]["items"] and texts["bob"]["items"] == [] and peek is None
    assert not any(i["namespace"][0] == "u:alice" for i in everything)
    assert all(i["namespace"][0] == "u:bob" for i in everything) and everything  # bob's own MCP run
    # `deepresearch export --url`: alice's token exports her report; bob's finds no such thread
    target = tmp_path / "r.md"
    r = cli(["export", tid, "--url", served.server.url, "--token", served.creds["alice"], "-o", target], served.env)
    assert r.returncode == 0, r.stderr
    assert target.read_text() == out["report"]
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


def test_the_page_signs_in_and_shows_only_the_users_threads(served, browser, tmp_path):
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    sent = []  # every call of the page to the server's API, with its Authorization header
    page.on("request", lambda r: sent.append((r.url, r.headers.get("authorization"))) if "/ui/static" not in r.url
            and not r.url.endswith("/ui/") else None)
    page.goto(f"{served.server.url}/ui/")
    page.wait_for_selector("#sign-in:not([hidden])")  # the thread list was refused: sign in
    page.fill("#token", "drt_not-a-token")
    served.refused.append("drt_not-a-token")
    page.click("#sign-in-button")
    page.wait_for_selector("#sign-in-note:has-text('not')")
    assert page.is_visible("#sign-in") and page.evaluate("sessionStorage.length") == 0
    page.fill("#token", served.creds["bob"])
    page.click("#sign-in-button")
    assert page.is_hidden("#sign-in") and page.is_visible("#sign-out")
    page.fill("#question", QUESTION["bob"])
    page.fill("#max_iterations", "1")
    page.set_checked("#edit_after_report", False)
    page.click("#ask")
    assert settle(page).startswith("done"), page.inner_text("#status")
    assert "Sources" in page.inner_text("#report")
    with page.expect_download() as d:  # an export goes through the same sign-in
        page.click("#export-md")
    d.value.save_as(str(tmp_path / "r.md"))
    assert "## Sources" in (tmp_path / "r.md").read_text()
    page.reload()  # the token is kept for the tab
    page.wait_for_selector(".open-thread")
    listed = page.locator(".open-thread").all_inner_texts()
    assert QUESTION["bob"] in listed and QUESTION["alice"] not in listed
    bob_thread = page.get_attribute(".thread", "data-thread")
    page.click("#sign-out")  # forgotten: nothing shown, nothing kept
    assert page.is_visible("#sign-in") and page.evaluate("sessionStorage.length") == 0
    assert page.locator(".thread").count() == 0 and page.inner_text("#report") == ""
    context.close()
    calls = [(u, a) for u, a in sent if "/threads" in u or "/runs" in u or "/ui/api/" in u]
    assert len(calls) >= 6 and calls[0][1] is None  # before signing in: refused
    signed = calls[calls.index(next(c for c in calls if c[1] == f"Bearer {served.creds['bob']}")):]
    assert all(a == f"Bearer {served.creds['bob']}" for _, a in signed), signed
    assert any("/runs/stream" in u for u, _ in signed) and any("/ui/api/export" in u for u, _ in signed)

    url, alice = served.server.url, served.headers("alice")
    alice_sees = [t["thread_id"] for t in httpx.post(f"{url}/threads/search", json={"limit": 100}, headers=alice).json()]
    assert bob_thread not in alice_sees and httpx.get(f"{url}/threads/{bob_thread}", headers=alice).status_code == 404


def test_repeated_failures_from_one_client_are_refused(served):
    url = served.server.url
    for _ in range(MAX_FAILURES):
        r = httpx.post(f"{url}/threads/search", json={}, headers={"Authorization": "Bearer wrong", "X-Forwarded-For": "10.9.9.9"})
        assert r.status_code == 401 and "not" in r.json()["detail"]
    # now even a good token from that address is refused without being looked at; elsewhere it works
    blocked = httpx.post(f"{url}/threads/search", json={}, headers=served.headers("alice", "10.9.9.9"))
    assert blocked.status_code == 401 and "too many failed attempts" in blocked.json()["detail"]
    assert httpx.post(f"{url}/threads/search", json={}, headers=served.headers("alice", "10.9.9.10")).status_code == 200


def test_no_token_in_the_log_or_the_checkpoints(served):
    served.server.stop()  # the dev server writes its state out as it stops
    stored = [p for p in (served.folder / ".langgraph_api").rglob("*") if p.is_file()]
    data = b"".join(p.read_bytes() for p in stored)
    assert QUESTION["alice"].encode() in data and QUESTION["bob"].encode() in data  # the runs are there
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
    assert "deepresearch: the server cannot start: DEEPRESEARCH_AUTH='ldap': use one of none, tokens, jwt" in broken.log()
    assert "Traceback" not in broken.log()
