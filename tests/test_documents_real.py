"""Real documents: manuals of the LaTeX team as Debian ships them (texlive-latex-base-doc,
installed by `make texdocs`), with a corrupt, an encrypted and a text-less PDF beside them.

A question whose answer is on page 4 of fntguide.pdf gets that page cited and the citation
marked supported, from the command line (the embedded model) and through the LangGraph server
the web page uses (its view route shows the page's passage); each unreadable PDF is one
warning line and the run reports from the other files.
"""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
from langgraph_sdk import get_client

from tests.dev_server import DevServer, DevServerError
from tests.document_files import CORK_FILE, CORK_PAGE, CORK_QUESTION, corrupt_pdf, pdf, real_pdfs
from tests.fakes import researcher
from tests.helpers import cli
from tests.stub_openai import StubOpenAI

BAD = {
    "corrupt.pdf": "not a readable PDF (corrupt or damaged)",
    "locked.pdf": "encrypted (it needs a password)",
    "scan.pdf": "no text layer (a scanned document? run OCR on it first)",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    docs = real_pdfs(tmp_path_factory.mktemp("real") / "manuals")
    corrupt_pdf(docs / "corrupt.pdf", docs / "lppl.pdf")
    pdf(docs / "locked.pdf", ["The Cork encoding is secret."], password="s3cret")
    pdf(docs / "scan.pdf", ["", ""])
    return docs


def cork_citations(out: dict) -> list[dict]:
    """The citations of fntguide.pdf's page 4 in a result."""
    pages = {s["id"] for s in out["sources"] if s["url"].endswith(f"/{CORK_FILE}#page={CORK_PAGE}")}
    return [c for c in out["citations"] if c["source_id"] in pages]


def test_the_cli_cites_the_page_that_holds_the_answer(folder, cli_env, tmp_path):
    r = cli(
        [
            CORK_QUESTION,
            "--mode",
            "iterative",
            "--search",
            f"docs:{folder}",
            "--json",
            "--db",
            str(tmp_path / "runs.sqlite"),
        ],
        cli_env,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    # each unreadable PDF: one warning line naming it and why
    warnings = [line for line in r.stderr.splitlines() if "warning (docs)" in line]
    assert sorted(w.rsplit("/", 1)[1] for w in warnings) == sorted(f"{n}: {why}" for n, why in BAD.items()), r.stderr
    # the answer's page is cited, and the check found the quote on that page's text
    cited = cork_citations(out)
    assert cited and all(c["verdict"] == "supported" for c in cited), out["citations"]
    assert any("Cork" in c["sentence"] and "Cork" in c["span"] for c in cited), cited
    [source] = [s for s in out["sources"] if s["id"] == cited[0]["source_id"]]
    assert source["meta"]["page"] == CORK_PAGE and source["file"] == str(folder / CORK_FILE)
    line = next(x for x in out["report"].splitlines() if x.startswith(f"[{source['id']}] "))
    assert line == f"[{source['id']}] LaTeX2ε font selection — file `{folder / CORK_FILE}`, p. {CORK_PAGE}", line
    assert not {s["file"].rsplit("/", 1)[1] for s in out["sources"]} & set(BAD)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = DevServer(tmp_path_factory.mktemp("documents-dev"), {"OPENAI_API_KEY": "sk-test-documents-0123456789"})
    try:
        s.wait_ready()
    except DevServerError as e:
        pytest.fail(str(e))
    try:
        yield s
    finally:
        s.stop()


def test_the_server_cites_the_page_and_the_web_page_shows_its_passage(folder, server):
    """The web page's way: a run on the LangGraph server with the docs folder in its context,
    then the page's view route renders the finished values."""
    with StubOpenAI(researcher()) as stub:
        context = {
            "model": "openai:stub",
            "base_url": stub.base_url,
            "search": f"docs:{folder}",
            "writer": "extractive",
            "max_iterations": 1,
            "max_seconds": 300,
        }

        async def go():
            client = get_client(url=server.url)
            thread = await client.threads.create()
            events = []
            async for part in client.runs.stream(
                thread["thread_id"],
                "iterative",
                input={"question": CORK_QUESTION},
                context=context,
                stream_mode=["custom"],
            ):
                assert part.event != "error", part.data
                events.append(part.data)
            return events, (await client.threads.get_state(thread["thread_id"]))["values"]

        events, values = asyncio.run(asyncio.wait_for(go(), timeout=600))
    warned = sorted(e["cause"].rsplit("/", 1)[1] for e in events if isinstance(e, dict) and e.get("warning"))
    assert warned == sorted(f"{n}: {why}" for n, why in BAD.items()), server.log()
    cited = cork_citations(values)
    assert cited and all(c["verdict"] == "supported" for c in cited), values.get("citations")
    shown = httpx.post(f"{server.url}/ui/api/view", json=values, timeout=60).json()
    pops = [c for c in shown["citations"] if c["source_id"] in {c["source_id"] for c in cited}]
    # the popover's title names the page, and its passage is that page's text
    assert pops and all(p["title"] == f"LaTeX2ε font selection, p. {CORK_PAGE}" for p in pops), pops
    assert any("Cork in 1990" in re.sub(r"\s+", " ", p["passage"]) for p in pops), pops
    assert f"file {folder / CORK_FILE}, p. {CORK_PAGE}</li>" in shown["html"]
