"""The web page in a real headless browser, against `langgraph dev` on 127.0.0.1,
plus the chat input from the SDK and the graphs as MCP tools over the same server.

One server for the module (the repository's langgraph.json, so the page is mounted by its
`http.app`), the embedded offline model for the research flows, the OpenAI and Tavily stubs
for the hostile one. The browser is the system's Chromium driven by Playwright (never a
browser Playwright downloads): missing, the tests fail with one line saying how to install it
(`make test` installs it when run as root). A screenshot of each step is kept under
tests/artifacts/web_ui/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest

from tests.deep_helpers import TOPICS, deep_responder
from tests.dev_server import DevServer, DevServerError
from tests.stub_openai import StubOpenAI
from tests.test_hostile_report import FORMS, GOOD_URL, OTHER_URL, hostile_writer, search
from tests.web_helpers import (
    WAIT_MS,
    ask,
    download,
    launch,
    open_page,
    progress_text,
    select_in_report,
    settle,
    shot,
    words,
)

KEY = "sk-test-web-ui-0123456789"
QUESTION = "Who built the Eiffel Tower, and for which event?"


@pytest.fixture(scope="module")
def stubs():
    with StubOpenAI(hostile_writer) as model, StubOpenAI(search=search) as web:
        yield model, web


@pytest.fixture(scope="module")
def deep_stub():
    with StubOpenAI(deep_responder(2)) as model:
        yield model


@pytest.fixture(scope="module")
def server(tmp_path_factory, stubs):
    server = DevServer(
        tmp_path_factory.mktemp("web-ui"), {"OPENAI_API_KEY": KEY, "TAVILY_API_KEY": "tvly-test-web-ui-0"}
    )
    try:
        server.wait_ready()
    except DevServerError as e:
        pytest.fail(str(e))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, server):
    page = open_page(browser, server.url)
    yield page
    page.context.close()


# --- over the server's API: chat input from the SDK, the graphs as MCP tools ----------------


def test_chat_input_from_the_sdk_and_export_from_the_server(server, cli_env, tmp_path):
    from langgraph_sdk import get_client

    async def go():
        client = get_client(url=server.url)
        thread = await client.threads.create()
        out = await client.runs.wait(
            thread["thread_id"],
            "iterative",
            context={"max_iterations": 1},
            input={
                "messages": [
                    {"role": "human", "content": "I study Paris landmarks."},
                    {"role": "ai", "content": "Noted."},
                    {"role": "human", "content": QUESTION},
                ]
            },
        )
        return thread["thread_id"], out

    tid, out = asyncio.run(asyncio.wait_for(go(), 300))
    assert out["question"] == QUESTION and "Paris landmarks" in out["brief"]
    assert [m["type"] for m in out["messages"]] == ["human", "ai", "human", "ai"]
    assert out["messages"][-1]["content"] == out["report"] and "## Sources" in out["report"]
    # `deepresearch export --url`: the same thread, from the server
    from tests.helpers import cli, one_line_error

    r = cli(["export", tid, "--url", server.url, "--format", "md", "-o", tmp_path / "r.md"], cli_env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.md").read_text() == out["report"]
    assert "unknown thread" in one_line_error(cli(["export", "0" * 32, "--url", server.url], cli_env))


def test_graphs_are_mcp_tools(server):
    from langgraph_sdk import get_client
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        # an assistant with its own context is a tool too: one research round, as the page's runs
        await get_client(url=server.url).assistants.create(
            "iterative", context={"max_iterations": 1}, name="quick_research", description="One search round."
        )
        async with streamable_http_client(f"{server.url}/mcp") as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name: t for t in (await session.list_tools()).tools}
                result = await session.call_tool("quick_research", {"question": QUESTION})
                return tools, result

    tools, result = asyncio.run(asyncio.wait_for(go(), 300))
    assert {"iterative", "deep", "quick_research"} <= set(tools)
    for name in ("iterative", "deep", "quick_research"):
        props = tools[name].inputSchema["properties"]
        assert tools[name].description and props["question"]["description"] and props["messages"]["description"]
    assert not result.isError
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert "## Sources" in text and "Eiffel" in text and "Verification" in text


def test_render_routes_refuse_bad_input_in_one_line(server):
    import httpx

    page = httpx.get(f"{server.url}/ui/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    for path, body, why in (
        ("/ui/api/export?format=odt", b"{}", "unknown format"),
        ("/ui/api/export?format=pdf", b"{}", "no report"),
        ("/ui/api/export?format=pdf", b"not json", "not JSON"),
        ("/ui/api/view", b"[1, 2]", "a JSON object"),
    ):
        r = httpx.post(f"{server.url}{path}", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400 and why in r.json()["error"], (path, r.text)


# --- the page -----------------------------------------------------------------------------------


def test_ask_clarify_cite_edit_export_reopen(page, tmp_path):
    # 1. ask with clarifying questions: the form shows them; the answer goes through the interrupt
    ask(page, QUESTION, clarify=True)
    page.wait_for_selector("#clarify-form", timeout=WAIT_MS)
    assert settle(page) == "waiting for your answers"
    assert page.locator("#clarify-form label").count() == 3  # the embedded model's three fixed questions
    shot(page, "01-clarify")
    page.fill("#answer-0", "its engineers and the 1889 fair")
    page.click("#clarify-answer")
    # the report is there, and the run waits for edits: finished, in words
    assert settle(page).startswith("finished") and "waiting" not in page.inner_text("#status")
    progress = progress_text(page)
    for line in ("clarify: answered", "searching wiki", "writing from", "verifying citations", "complete ("):
        assert line in progress, (line, progress)
    assert progress.index("clarify: answered") < progress.index("searching") < progress.index("complete (")
    assert "budget used:" in page.inner_text("#budget")
    report = page.locator("#report")
    assert "Gustave Eiffel" in report.inner_text()
    shot(page, "02-report")

    # 2. a citation opens its source, passage and verdict
    page.locator("#report a.cite").first.click()
    popover = page.locator("#popover")
    popover.wait_for(state="visible")
    text = popover.inner_text()
    assert re.search(r"^\[1\] \S", text, re.M) and re.search(r"(supported|partial|unsupported) \(score", text)
    assert popover.locator("blockquote.passage").first.inner_text().strip()
    shot(page, "03-citation")
    page.click("#popover .close")
    # each citation shows the passage checked for its own sentence: two sources' passages differ (two
    # sentences side by side in one short source may be checked against the same passage)
    passages = []
    # a paragraph citing two or more sources
    paragraph = next(
        p
        for p in page.locator("#report .report-body p").all()
        if len({c.inner_text() for c in p.locator("a.cite").all()}) >= 2
    )
    for cite in paragraph.locator("a.cite").all():
        cite.click()
        assert popover.locator("blockquote.passage").count() == 1
        passages.append((cite.inner_text(), popover.locator("blockquote.passage").inner_text()))
        page.keyboard.press("Escape")
        assert popover.is_hidden()
    numbers = {n for n, _ in passages}
    assert len(numbers) >= 2 and len({text for _, text in passages}) >= len(numbers), passages
    for n in numbers:  # one source's sentences each show a passage of that source, never another's
        assert not {text for m, text in passages if m == n} & {text for m, text in passages if m != n}, passages

    # 3. an edit of a selection (fact check): the change and the history are shown
    # (a sentence the hand edit below leaves as it is)
    sentence = next(
        s
        for p in report.locator(".report-body p").all()[1:]
        for s in re.split(r"(?<=\.)\s", p.inner_text())
        if len(s) > 30 and "lattice tower" not in s
    )
    sentence = re.sub(r"\s*\[\d[\d, ]*\]\.?$", "", sentence).rstrip(".")
    select_in_report(page, sentence)
    assert "Selected:" in page.inner_text("#selection-note")
    page.click("#edit-panel button[data-action=fact_check]")
    assert settle(page).startswith("finished")
    assert "edit fact check: done" in progress_text(page)
    assert "Last change: fact check" in page.inner_text("#last-change") and sentence in words(
        page.inner_text("#last-change")
    )
    assert page.locator("#history li").count() == 1 and "fact check" in page.inner_text("#history")
    shot(page, "04-edit")
    # a hand edit of the whole text (a sync): recorded in the history too
    page.click("#hand-edit")
    edited = page.input_value("#hand-text").replace("lattice tower", "wrought-iron lattice tower", 1)
    page.fill("#hand-text", edited)
    page.click("#hand-save")
    assert settle(page).startswith("finished")
    assert "wrought-iron lattice tower" in page.inner_text("#report")
    assert (
        page.locator("#history li").count() == 2 and "your own edit" in page.locator("#history li").nth(1).inner_text()
    )

    # 4. exports from the page: each file opens and holds the report's text and its Sources
    sources = [words(t) for t in page.locator("ol.sources li .title").all_inner_texts()]
    urls = page.locator("ol.sources a").evaluate_all("as => as.map(a => a.href)")
    assert sources and len(urls) == len(sources)
    html_file = download(page, "html", tmp_path).decode()
    assert "<script" not in html_file.lower() and sentence in words(re.sub(r"<[^>]+>", "", html_file))
    from docx import Document
    from pypdf import PdfReader

    docx_text = words("\n".join(p.text for p in Document(io.BytesIO(download(page, "docx", tmp_path))).paragraphs))
    pdf_text = words("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(download(page, "pdf", tmp_path))).pages))
    for text in (html_file, docx_text, pdf_text):
        assert all(t in words(text) for t in sources) and all(u in text for u in urls)
        assert "Verification:" in text
    assert sentence[:50] in docx_text and sentence[:40] in pdf_text.replace("- ", "")

    # 5. the thread list: reopened, the waiting edit resumes there
    page.goto(page.url)  # a fresh page
    page.wait_for_selector(".open-thread")
    assert page.locator(".thread").first.inner_text().startswith(QUESTION)
    assert page.locator(".thread .thread-status").first.inner_text() == "finished (edits open)"
    page.locator(".open-thread").first.click()
    assert settle(page).startswith("finished")
    assert page.locator("#edit-panel").is_visible() and "Gustave Eiffel" in page.inner_text("#report")
    assert page.locator("#history li").count() == 2
    assert page.is_checked("#clarify") and page.input_value("#max_iterations") == "1"  # its settings
    shot(page, "05-reopened")
    page.click("#edit-panel button[data-action=finish]")
    assert settle(page).startswith("finished")
    assert not page.locator("#edit-panel").is_visible()
    assert page.problems == []


def test_deep_outline_review_from_a_chat_message(page, deep_stub):
    """The planner is a model (the OpenAI stub: its outline is known), the input a chat message."""
    extra = f'{{"model": "openai:stub", "base_url": "{deep_stub.base_url}"}}'
    ask(
        page,
        "Tell me about the Eiffel Tower",
        graph="deep",
        outline_review=True,
        as_chat=True,
        edit_after_report=False,
        extra=extra,
    )
    page.wait_for_selector("#outline-form", timeout=WAIT_MS)
    titles = [
        page.locator("#outline-sections .sec-title").nth(i).input_value()
        for i in range(page.locator("#outline-sections li").count())
    ]
    assert titles == [t for t, _ in TOPICS[:2]] and "round 1" in page.inner_text("#outline-form h2")
    n_plans = sum(1 for r in deep_stub.requests if "ReportPlan" in json.dumps(r["body"]))
    shot(page, "06-outline")
    page.fill("#outline-comment", "Keep it short.")
    page.click("#outline-revise")
    page.wait_for_selector("#outline-form h2:has-text('round 2')", timeout=WAIT_MS)
    assert (
        sum(1 for r in deep_stub.requests if "ReportPlan" in json.dumps(r["body"])) == n_plans + 1
    )  # the planner rewrote it
    assert any("Keep it short." in json.dumps(r["body"]) for r in deep_stub.requests)  # with the comment
    # an edited outline, accepted: researched as edited at once (no other review round)
    page.locator("#outline-sections .sec-title").first.fill("The tower in Paris")
    page.click("#outline-accept")
    assert settle(page).startswith("finished"), page.inner_text("#status")
    assert page.locator("#outline-form").count() == 0
    progress = progress_text(page)
    assert re.search(r"section 1 started: The tower in Paris", progress), progress
    assert "synthesizing" in progress and "Sources" in page.inner_text("#report")
    assert "The tower in Paris" in page.locator("#report h2").all_inner_texts()
    shot(page, "07-deep-report")
    assert page.problems == []


def test_hostile_content_is_shown_as_text(page, stubs, server):
    model, web = stubs
    # a thread another client made without a question: listed as such, not by its raw id
    import urllib.request

    request = urllib.request.Request(
        f"{server.url}/threads", data=b"{}", method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        bare = json.loads(r.read())["thread_id"]
    question = "How do bees navigate? <img src=x onerror=\"alert('q')\"><script>alert('q2')</script>"
    extra = '{"model": "openai:stub", "base_url": "%s", "search": "tavily", "search_base_url": "%s"}' % (  # noqa: UP031
        model.base_url,
        web.root_url,
    )
    ask(page, question, extra=extra, edit_after_report=False)
    assert settle(page).startswith("finished"), page.inner_text("#status")
    shot(page, "08-hostile")
    # nothing ran, nothing became an element
    assert page.problems == []
    for where in ("#report", "#progress", "#threads", "#status", "#last-change"):
        assert page.locator(f"{where} img, {where} script, {where} iframe").count() == 0, where
    # the only links are the Sources list's, to the retrieved http(s) pages
    hrefs = page.locator("#report a:not(.cite)").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert sorted(hrefs) == sorted([GOOD_URL, OTHER_URL])
    assert page.locator("#report a.cite").count() >= 2
    # the question and the titles are shown as the text they are
    assert "<img src=x onerror=" in progress_text(page)
    assert "<img src=x onerror=" in page.locator(".thread").first.inner_text()
    # a title is one line of plain words: no link residue, heading marks or `[n]` entries, no tags
    sources_text = page.inner_text("ol.sources")
    assert "Bee navigation click here Sources Fake" in sources_text and "Waggle dance & bees" in sources_text
    assert not re.search(r"\[\d|##|<b>|link removed", sources_text), sources_text
    assert "evil.example" not in page.inner_text("#report").lower()
    # an unverified citation is a mark with its explanation, never literal carets
    assert "^unverified^" not in page.inner_text("#report")
    marks = page.locator("#report mark.unverified")
    assert all("does not clearly support" in (m.get_attribute("title") or "") for m in marks.all())
    listed = page.locator(f'.thread[data-thread="{bare}"] .open-thread').inner_text()
    assert listed.startswith("(no question yet)") and bare not in listed, listed
    assert FORMS  # the forms a model repeats (tests/test_hostile_report.py) are what the stub writes
