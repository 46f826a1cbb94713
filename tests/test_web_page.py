"""The web page as people use research tools (issue 60), in a real headless browser against
`langgraph dev`: the outline as edited, edits on the copy selected, errors that stay, the
search sources the CLI accepts, exports that keep tables and links, APA on the page, a
phone, Stop with a partial report, a live budget line, the thread history, a readable
provenance, the edit panel in words, named controls (axe-core), dark mode.

The deep runs' planner and writer are the OpenAI stub (tests/deep_helpers.py), the iterative
ones the embedded model; a report with a table is put on a thread through the server's
state API. The desktop and phone screenshots of the README are taken here (docs/).
"""

from __future__ import annotations

import io
import json
import re

import httpx
import pytest

from tests.deep_helpers import deep_responder
from tests.dev_server import DevServer, DevServerError
from tests.helpers import cli, one_line_error
from tests.stub_openai import StubOpenAI
from tests.web_helpers import (
    WAIT_MS,
    ask,
    download,
    launch,
    open_page,
    open_thread,
    progress_text,
    select_in_report,
    settle,
    shot,
    unnamed_controls,
    until,
    wait_progress,
    words,
)

KEY = "sk-test-web-page-0123456789"
TWICE = "Tower Bridge (Bridge over the Thames in London, England)"  # both sections' writers say it


@pytest.fixture(scope="module")
def stubs():
    with (
        StubOpenAI(deep_responder(2)) as fast,
        StubOpenAI(deep_responder(2, slow={"How was the Eiffel Tower built": 6})) as slow,
    ):
        yield fast, slow


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    """A docs folder this server offers on the page (DEEPRESEARCH_DOCS)."""
    folder = tmp_path_factory.mktemp("field-notes")
    (folder / "tower.md").write_text("# The tower\n\nThe Eiffel Tower was painted in 1889 by a crew of twenty-five.\n")
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory, stubs, notes):
    server = DevServer(tmp_path_factory.mktemp("web-page"), {"OPENAI_API_KEY": KEY, "DEEPRESEARCH_DOCS": str(notes)})
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


def model(stub) -> str:
    return json.dumps({"model": "openai:stub", "base_url": stub.base_url})


def thread_values(server, page) -> dict:
    tid = page.locator("#threads li.current").get_attribute("data-thread")
    return httpx.get(f"{server.url}/threads/{tid}/state", timeout=30).json()["values"]


def box(page, selector: str) -> dict:
    b = page.locator(selector).bounding_box()
    assert b, selector
    return b


# --- the outline review, the order of the page, copy, provenance, text artifacts ----------------


def test_accepted_outline_is_researched_as_edited(page, stubs):
    fast, _ = stubs
    ask(page, "Tell me about the Eiffel Tower", graph="deep", outline_review=True, extra=model(fast))
    page.wait_for_selector("#outline-form", timeout=WAIT_MS)
    assert settle(page) == "waiting for your review of the outline"
    assert unnamed_controls(page) == []  # the outline's boxes too
    assert page.locator("#outline-sections .sec-title").nth(1).get_attribute("aria-label") == "Section 2 title"
    page.locator("#outline-sections .sec-title").nth(1).fill("How it was built (1887–1889)")
    page.click("#outline-accept")
    assert settle(page).startswith("finished"), page.inner_text("#status")
    assert page.locator("#outline-form").count() == 0  # no other review round
    # numbered as the outline numbered it: its second row is section 2
    assert "section 2 started: How it was built (1887–1889)" in progress_text(page)
    assert "How it was built (1887–1889)" in page.locator("#report h2").all_inner_texts()
    # the report first: above the edit panel and the progress list
    assert box(page, "#report-area")["y"] < box(page, "#edit-panel")["y"] < box(page, "#progress-box")["y"]
    # no `\(` in the Markdown
    page.click("#copy-report")
    until(page, lambda: "copied" in page.inner_text("#copy-note"), "the copy")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "## How it was built (1887–1889)" in copied and "\\(" not in copied, copied[:400]
    # provenance as a view people read, in the sources panel: per source, how it was found, its
    # passages and the sentences they support
    prov = page.locator("#sources-panel")
    assert prov.is_visible() and page.locator("#report details.provenance").count() == 0
    assert prov.locator("pre").count() == 0 and prov.locator(".prov-source").count() >= 2
    first = prov.locator(".prov-source").first
    assert first.locator("blockquote.passage").count() >= 1 and "supports: “" in first.inner_text()
    assert "found by searching wiki for" in first.inner_text()
    assert unnamed_controls(page) == []
    shot(page, "p1-outline-accepted")
    assert page.problems == []


# --- edits: on the copy selected, in words, from the keyboard, by hand ---------------------------


def test_edits_land_on_the_copy_selected(page, server, stubs):
    fast, _ = stubs
    ask(page, "Tell me about the Eiffel Tower", graph="deep", extra=model(fast))
    assert settle(page).startswith("finished")
    report = thread_values(server, page)["report"]
    first = report.index(TWICE)
    second = report.index(TWICE, first + 1)  # the deep report says it in both sections
    select_in_report(page, TWICE, copy=1)
    page.click("#edit-panel button[data-action=fact_check]")
    assert settle(page).startswith("finished")
    change = thread_values(server, page)["last_change"]
    assert (change["action"], change["start"]) == ("fact_check", second), (change, first, second)
    # the edit in words: its name, the source and the quote behind each verdict, rendered text
    last = page.locator("#last-change")
    assert last.locator("h3").inner_text() == "Last change: fact check"
    assert "source: [3] Tower Bridge" in last.inner_text() and last.locator("blockquote.passage").count() >= 1
    assert "edit fact check: done" in progress_text(page)
    assert "^unverified^" not in last.inner_text() and "fact_check" not in page.inner_text("#history")
    # from the keyboard: Tab from the exports to the report's first block, Enter selects it
    page.focus("#export-csljson")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('.report-body') !== null")
    page.keyboard.press("Enter")
    assert page.inner_text("#selection-note").startswith("Selected: “The Eiffel Tower")
    # a sentence typed by hand cites nothing: marked so (the source it named does not exist: the
    # citation goes, and no space is left before the full stop). The box is the panel's width,
    # its label above it
    page.click("#hand-edit")
    text_box, label = box(page, "#hand-text"), box(page, "label[for=hand-text]")
    assert text_box["width"] >= 0.9 * box(page, "#edit-panel")["width"], text_box
    assert label["y"] + label["height"] <= text_box["y"] and label["x"] <= text_box["x"] + 2, (label, text_box)
    typed = page.input_value("#hand-text").replace(
        f"{TWICE} [3].", f"{TWICE} [3]. I typed this sentence myself [42].", 1
    )
    page.fill("#hand-text", typed)
    page.click("#hand-save")
    assert settle(page).startswith("finished")
    marks = page.locator("#report .report-body mark.uncited")
    assert marks.count() == 1 and marks.first.get_attribute("title") == "This sentence cites no source."
    assert page.evaluate("() => document.querySelector('#report mark.uncited').previousSibling.textContent").endswith(
        "I typed this sentence myself."
    )
    assert page.problems == []


# --- errors, refused settings -------------------------------------------------------------------


def test_a_failed_run_says_why_and_keeps_saying_it(page, server):
    ask(page, "Who built the Eiffel Tower?", extra='{"model": "nonsense:x"}')
    why = "unknown model 'nonsense:x'"
    assert settle(page).startswith("the run failed: ") and why in page.inner_text("#status")
    page.click("#refresh-threads")
    page.wait_for_timeout(500)
    assert why in page.inner_text("#status")  # not overwritten by "no report"
    row = page.locator(".thread").first
    assert row.locator(".thread-status").inner_text() == "failed"
    page.reload()
    assert open_thread(page, "Who built the Eiffel Tower?").startswith(f"the run failed: {why}")
    assert "ModelConfigError" not in page.inner_text("#status")


def test_an_unknown_search_source_is_refused_as_the_cli_refuses_it(page, server, cli_env):
    before = len(httpx.post(f"{server.url}/threads/search", json={"limit": 100}, timeout=30).json())
    ask(page, "Who built the Eiffel Tower?", search="google")
    said = settle(page)
    cli_said = one_line_error(cli(["Who built the Eiffel Tower?", "--search", "google"], cli_env))
    assert said.startswith("unknown search backend 'google'; valid: wiki") and cli_said.endswith(said), (said, cli_said)
    assert len(httpx.post(f"{server.url}/threads/search", json={"limit": 100}, timeout=30).json()) == before


# --- exports and APA ----------------------------------------------------------------------------

WIKI = {"type": "webpage", "publisher": "Wikipedia", "site": "en.wikipedia.org"}
TABLE_REPORT = """# Compare the Sun and the Moon

The Sun is a star [1]. The Moon orbits the Earth [2].

## Comparison

| aspect | Sun | Moon |
|---|---|---|
| kind | a star [1] | a satellite [2] |
| light | its own [1] | reflected [2] |

## Sources

[1] Solar system — https://en.wikipedia.org/wiki/Solar_System
[2] Moon — https://en.wikipedia.org/wiki/Moon

_Verification: 4 citations checked against the retrieved text: 4 supported, 0 partial, 0 unverified._
"""


def crafted_thread(server, question: str) -> str:
    """A thread whose report has a table, in APA (put there through the server's state API)."""
    t = httpx.post(
        f"{server.url}/threads",
        json={"metadata": {"dr_question": question, "dr_graph": "iterative", "graph_id": "iterative"}},
        timeout=30,
    ).json()
    sources = [
        {"id": 1, "title": "Solar system", "url": "https://en.wikipedia.org/wiki/Solar_System", "meta": WIKI},
        {"id": 2, "title": "Moon", "url": "https://en.wikipedia.org/wiki/Moon", "meta": WIKI},
    ]
    citations = [
        {
            "source_id": 1,
            "sentence": "The Sun is a star [1].",
            "verdict": "supported",
            "score": 0.9,
            "span": "The Sun is the star at the centre of the Solar System.",
        }
    ]
    r = httpx.post(
        f"{server.url}/threads/{t['thread_id']}/state",
        timeout=30,
        json={
            "as_node": "source_tracer",
            "values": {
                "question": question,
                "report": TABLE_REPORT,
                "sources": sources,
                "citations": citations,
                "citation_style": "apa",
                "stopped_by": "complete",
            },
        },
    )
    assert r.status_code == 200, r.text
    return question


@pytest.fixture(scope="module")
def table_thread(server) -> str:
    return crafted_thread(server, "Compare the Sun and the Moon")


def test_exports_keep_tables_and_links_in_the_run_s_style(page, table_thread, tmp_path):
    from docx import Document
    from pypdf import PdfReader

    assert open_thread(page, table_thread).startswith("finished")
    doc = Document(io.BytesIO(download(page, "docx", tmp_path)))
    assert doc.core_properties.author == "deepresearch" and doc.core_properties.title == table_thread
    [table] = doc.tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["aspect", "Sun", "Moon"],
        ["kind", "a star (Solar system, n.d.)", "a satellite (Moon, n.d.)"],
        ["light", "its own (Solar system, n.d.)", "reflected (Moon, n.d.)"],
    ]
    headings = [(p.style.name, p.text) for p in doc.paragraphs if p.style.name.startswith(("Heading", "Title"))]
    assert headings == [("Title", table_thread), ("Heading 1", "Comparison"), ("Heading 1", "Sources")]
    links = sorted(r.target_ref for r in doc.part.rels.values() if r.reltype.endswith("/hyperlink"))
    assert links == ["https://en.wikipedia.org/wiki/Moon", "https://en.wikipedia.org/wiki/Solar_System"]
    entries = [p.text for p in doc.paragraphs if "wikipedia.org" in p.text]
    assert entries[1].startswith("Solar system. (n.d.). Wikipedia. — "), entries
    pdf = PdfReader(io.BytesIO(download(page, "pdf", tmp_path)))
    uris = sorted(
        a.get_object()["/A"]["/URI"]
        for pg in pdf.pages
        for a in pg.get("/Annots") or []
        if "/URI" in a.get_object().get("/A", {})
    )
    assert uris == links
    pdf_text = words(" ".join(pg.extract_text() for pg in pdf.pages))
    assert "light its own (Solar system, n.d.) reflected (Moon, n.d.)" in pdf_text, pdf_text
    md = download(page, "md", tmp_path).decode()
    assert "| kind | a star (Solar system, n.d.) | a satellite (Moon, n.d.) |" in md
    assert page.problems == []


def test_apa_is_shown_on_the_page(page, tmp_path):
    ask(page, "Who built the Eiffel Tower?", citation_style="apa", edit_after_report=False)
    assert settle(page).startswith("finished"), page.inner_text("#status")
    body = page.locator("#report .report-body")
    assert body.locator("sup.cites").count() == 0 and not re.search(r"\[\d+\]", body.inner_text())
    cites = body.locator("a.cite.styled")
    assert cites.count() >= 2 and re.fullmatch(r"\(Eiffel Tower, n\.d\.\)", cites.first.inner_text())
    assert cites.first.get_attribute("aria-label") == "source 1: Eiffel Tower"  # named for its source
    # the list: APA entries, each title once, as the in-text form writes it
    entries = page.locator("ul.sources li .title").all_inner_texts()
    assert "Eiffel Tower. (n.d.). Wikipedia." in entries, entries
    assert all(e.count(e.split(". (n.d.)")[0]) == 1 for e in entries), entries
    cites.first.click()
    popover = page.locator("#popover")
    popover.wait_for(state="visible")
    assert popover.locator("h3").first.inner_text() == "Eiffel Tower" and popover.locator("blockquote.passage").count()
    md = download(page, "md", tmp_path).decode()
    assert "(Eiffel Tower, n.d.)" in md and "Eiffel Tower. (n.d.). Wikipedia." in md
    shot(page, "p2-apa")
    assert page.problems == []


# --- the first screen: the question first, two choices, Settings folded; the sources panel -------

OFFLINE_QUESTION = "Who built the Eiffel Tower?"


def first_screen(page) -> dict:
    """The page as it opens: the question box first, then the mode and the sources, the primary
    button, everything else folded under Settings. The sources offered: {spec: ticked}."""
    page.wait_for_selector("#source-boxes input[data-offered]")
    assert page.evaluate("() => document.getElementById('workspace').firstElementChild.id") == "ask-form"
    assert box(page, "#question")["y"] < box(page, "#graph")["y"] < box(page, "#source-choice")["y"] + 1
    assert box(page, "#source-choice")["y"] < box(page, "#ask")["y"] < box(page, "#settings")["y"]
    for hidden in ("#max_iterations", "#max_tokens", "#max_seconds", "#outline_style", "#search", "#extra-context"):
        assert not page.is_visible(hidden), hidden  # folded under Settings
    assert page.is_hidden("#progress-box") and page.is_hidden("#report-area")  # nothing to show yet
    background = page.locator("#ask").evaluate("b => getComputedStyle(b).backgroundColor")
    assert background != page.locator("#new-question").evaluate("b => getComputedStyle(b).backgroundColor")
    return {b.get_attribute("value"): b.is_checked() for b in page.locator("#source-boxes input").all()}


def test_the_page_opens_on_the_question_with_the_sources_beside_the_report(page, server, notes):
    offered = first_screen(page)
    # what this server offers: the encyclopedia (ticked), its docs folder, the public services; no
    # web search (no key)
    assert offered == {
        "wiki": True,
        f"docs:{notes}": False,
        "pubmed": False,
        "clinicaltrials": False,
        "europepmc": False,
        "arxiv": False,
    }, offered
    assert box(page, "#question")["width"] >= 700 and box(page, "#question")["height"] >= 60
    assert unnamed_controls(page) == []
    # the ticked sources and what "Also search" adds make the run's search, checked as the CLI checks it
    page.check(f'#source-boxes input[value="docs:{notes}"]')
    with page.expect_request("**/ui/api/check") as checked:
        ask(page, OFFLINE_QUESTION, search="google")
    assert checked.value.post_data_json["search"] == f"wiki,docs:{notes},google"
    assert settle(page).startswith("unknown search backend 'google'")
    page.uncheck(f'#source-boxes input[value="docs:{notes}"]')
    ask(page, OFFLINE_QUESTION, search="", edit_after_report=False)
    assert settle(page).startswith("finished"), page.inner_text("#status")
    tid = page.locator("#threads li.current").get_attribute("data-thread")
    meta = httpx.get(f"{server.url}/threads/{tid}", timeout=30).json()["metadata"]
    assert json.loads(meta["dr_context"])["search"] == "wiki"
    # no model is called offline: the budget line shows what applies, no token count at 0
    budget = page.inner_text("#budget")
    assert re.fullmatch(r"budget used: \d+ of 600 s, \d+ of 1 iteration\(s\) \(no model called\)", budget), budget
    # the sources beside the report: each source, how it was found, the passages cited
    report, panel = box(page, "#report"), box(page, "#sources-panel")
    assert panel["x"] >= report["x"] + report["width"] and abs(panel["y"] - report["y"]) < 40, (report, panel)
    entries = page.locator("#sources-panel .prov-source")
    assert entries.count() == len(page.locator("#report ol.sources li").all()) >= 2
    first = entries.first
    assert "found by searching wiki for" in first.inner_text() and first.locator("blockquote.passage").count()
    assert first.locator("a").get_attribute("href").startswith("https://en.wikipedia.org/")
    # a citation scrolls the panel to its source: the first source, after reading the panel to its end
    page.set_viewport_size({"width": 1280, "height": 600})
    cite = page.locator('#report .report-body a.cite[data-source="1"]').first
    n = "1"
    cite.scroll_into_view_if_needed()
    page.locator("#sources-panel").evaluate("p => { p.scrollTop = p.scrollHeight; }")
    e, p = box(page, f"#panel-src-{n}"), box(page, "#sources-panel")
    assert e["y"] + 40 < p["y"], (e, p)  # scrolled out of the panel's view
    cite.click()
    assert "current" in page.locator(f"#panel-src-{n}").get_attribute("class")
    e, p = box(page, f"#panel-src-{n}"), box(page, "#sources-panel")
    assert p["y"] <= e["y"] < p["y"] + p["height"] - 20, (e, p)
    assert page.locator("#sources-panel .prov-source.current").count() == 1
    page.keyboard.press("Escape")
    assert unnamed_controls(page) == []
    # the picture: the first screen, the panel showing the source clicked, no focus ring
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    shot(page, "p0-desktop", docs="web-ui.png")
    assert page.problems == []


def test_a_phone_opens_on_the_question_with_the_report_under_it(browser, server):
    page = open_page(browser, server.url, width=390, height=844)
    try:
        first_screen(page)
        assert page.is_hidden("#threads-panel") and page.is_visible("#threads-toggle")  # behind a button
        assert page.get_attribute("#threads-toggle", "aria-expanded") == "false"
        assert unnamed_controls(page) == []
        ask(page, OFFLINE_QUESTION, edit_after_report=False)
        assert settle(page).startswith("finished"), page.inner_text("#status")
        # the report right under the question: its start on the first screen, nothing scrolled
        assert page.evaluate("() => window.scrollY") == 0
        report = box(page, "#report")
        assert report["y"] + 120 < 844 and report["width"] >= 330, report
        assert "Gustave Eiffel" in page.inner_text("#report")
        budget = page.inner_text("#budget")
        assert "tokens" not in budget and not re.search(r"\d model call", budget) and "no model called" in budget
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        # the sources panel under the report, the screen's width
        assert box(page, "#sources-panel")["y"] > report["y"] and box(page, "#sources-panel")["width"] >= 330
        assert unnamed_controls(page) == []
        shot(page, "p3-phone-first", docs="web-ui-phone.png")
        # the thread list behind the button: it opens over the work, and a thread chosen closes it
        page.click("#threads-toggle")
        assert page.is_visible("#threads-panel") and page.get_attribute("#threads-toggle", "aria-expanded") == "true"
        assert page.locator(".open-thread").first.inner_text() == OFFLINE_QUESTION
        page.locator(".open-thread").first.click()
        assert settle(page).startswith("finished")
        assert page.is_hidden("#threads-panel") and "Gustave Eiffel" in page.inner_text("#report")
        assert page.problems == []
    finally:
        page.context.close()


def test_a_phone_gets_one_column_and_the_popover_fits(browser, server, table_thread):
    page = open_page(browser, server.url, width=390, height=844)
    try:
        assert open_thread(page, table_thread).startswith("finished")
        assert box(page, "#report")["width"] >= 300
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
        assert page.is_hidden("#threads-panel")  # the list behind its button, not beside
        page.locator("#report a.cite").last.click()
        page.locator("#popover").wait_for(state="visible")
        pop = box(page, "#popover")
        assert pop["x"] >= 0 and pop["x"] + pop["width"] <= 390, pop
        page.keyboard.press("Escape")
        assert unnamed_controls(page) == []
        page.locator("#report").scroll_into_view_if_needed()
        shot(page, "p3-phone")
        assert page.problems == []
    finally:
        page.context.close()


def test_dark_mode_follows_the_system(browser, server, table_thread):
    page = open_page(browser, server.url, dark=True)
    try:
        first_screen(page)
        assert unnamed_controls(page) == []  # the first screen: the question, the primary button
        assert open_thread(page, table_thread).startswith("finished")
        rgb = [
            int(x) for x in re.findall(r"\d+", page.evaluate("() => getComputedStyle(document.body).backgroundColor"))
        ]
        assert sum(rgb[:3]) < 150, rgb
        assert unnamed_controls(page) == []  # contrast included
        assert page.locator("#sources-panel .prov-source").count() == 2  # without provenance: from the checks
        page.set_viewport_size({"width": 390, "height": 844})
        assert unnamed_controls(page) == []  # and on a phone
    finally:
        page.context.close()


# --- Stop, the live budget line, the thread list while a run goes, the log of a reopened thread --


def test_stop_keeps_what_was_found_as_a_partial_report(page, stubs):
    _, slow = stubs
    question = "Tell me about the Eiffel Tower, slowly"
    ask(page, question, graph="deep", extra=model(slow), iterations="3", edit_after_report=False)
    wait_progress(page, r"section 1 done: Design", timeout_s=120)
    # the thread list shows the run going, the budget line counts, the list shows its newest line
    until(
        page,
        lambda: "running" in page.locator(f".thread:has(.open-thread:text-is({question!r}))").first.inner_text(),
        "the thread listed as running",
    )
    spent = int(re.search(r"budget used: (\d+) of \d+ tokens", page.inner_text("#budget")).group(1))
    assert spent > 0, page.inner_text("#budget")
    seconds = lambda: int(re.search(r"(\d+) of \d+ s", page.inner_text("#budget")).group(1))  # noqa: E731
    before = seconds()
    until(page, lambda: seconds() > before, "the budget line's seconds to go on", timeout_s=10)
    assert page.evaluate(
        "() => { const p = document.getElementById('progress');"
        " return p.scrollHeight > p.clientHeight && p.scrollTop + p.clientHeight >= p.scrollHeight - 4; }"
    )
    page.click("#stop")
    assert settle(page) == "finished, stopped by you: a partial report", page.inner_text("#status")
    assert page.locator("#report h2").all_inner_texts()[:1] == ["Design"]  # what section 1 found
    assert "Construction" not in page.locator("#report h2").all_inner_texts()
    assert "research stopped early because the person stopped it" in page.inner_text("#report")
    # reopened: the thread says what happened, and its progress log is back
    page.reload()
    assert open_thread(page, question) == "finished, stopped by you: a partial report"
    log = progress_text(page)
    assert "section 1 done: Design" in log and "stopped by you (Stop)" in log
    row = page.locator(f".thread:has(.open-thread:text-is({question!r}))").first
    assert row.locator(".thread-status").inner_text() == "finished, stopped by you: a partial report"
    assert page.problems == []


def test_thread_history_has_dates_modes_a_search_box_and_delete(page, server, table_thread):
    doomed = crafted_thread(server, "Compare the Sun and the Earth")
    page.click("#refresh-threads")
    page.wait_for_selector(f".open-thread:text-is({doomed!r})")
    rows = page.locator(".thread")
    assert rows.count() >= 2
    for i in range(rows.count()):
        row = rows.nth(i)
        assert row.locator("time").get_attribute("datetime") and row.locator("time").inner_text()
        assert row.locator(".thread-mode").inner_text() in ("· iterative", "· deep")
        assert row.locator(".thread-status").inner_text() not in ("idle", "waiting", "interrupted", "busy")
    page.fill("#thread-filter", "sun and the earth")
    assert page.locator(".thread").count() == 1 and page.locator(".open-thread").inner_text() == doomed
    row = page.locator(".thread").first
    tid = row.get_attribute("data-thread")
    row.locator(".delete-thread").click()
    page.click(".confirm-yes")
    until(page, lambda: page.locator(f'.thread[data-thread="{tid}"]').count() == 0, "the thread gone from the list")
    assert httpx.get(f"{server.url}/threads/{tid}", timeout=30).status_code == 404
