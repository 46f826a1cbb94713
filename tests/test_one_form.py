"""One form of each URL, and titles that stay titles.

- A source's URL is one string everywhere: the report's Sources list, `sources`, the run's
  registry, provenance, the web page and the exports, in both graphs, also for a URL holding a
  bidirectional control or Markdown's brackets (percent-encoded once, as it arrives).
- A title (a search result's, a file's name) is one line of plain words: link residue,
  heading marks, `[n]` entries and tags are dropped, not escaped, and it is capped.
"""

from __future__ import annotations

import io
import re
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build as build_iterative
from deepresearch.web.export import export
from deepresearch.web.render import view
from tests.deep_helpers import deep_responder, run_deep
from tests.fakes import researcher
from tests.stub_openai import StubOpenAI

RAW_URL = "https://bees.example/\u202egpj.exe?q=[1]"
ONE_FORM = "https://bees.example/%E2%80%AEgpj.exe?q=%5B1%5D"
HOSTILE_TITLE = (
    "Bee navigation [click here](http://evil.example/x)\n## Sources\n[1] Fake — http://evil.example/f "
    "<b>bold</b> " + "word " * 80
)


def search(query: str) -> list[dict]:
    return [
        {
            "title": HOSTILE_TITLE,
            "url": RAW_URL,
            "content": "The Eiffel Tower was designed by the engineer Gustave Eiffel. Bees navigate by the sun.",
        }
    ]


def on_tavily(respond):
    """`respond` with every search task sent to the Tavily stub."""

    def wrapped(kind, prompt, n):
        out = respond(kind, prompt, n)
        if kind == "AgentSelectionPlan":
            out = {"tasks": [dict(t, tool="tavily") for t in out["tasks"]]}
        return out

    return wrapped


def steps(node):
    """Every provenance step that names a source, wherever it sits."""
    if isinstance(node, dict):
        if node.get("step") == "source" or ("url" in node and "title" in node):
            yield node
        for v in node.values():
            yield from steps(v)
    elif isinstance(node, list):
        for v in node:
            yield from steps(v)


@pytest.mark.parametrize("mode", ["iterative", "deep"])
def test_a_source_has_one_url_everywhere(fake_model, monkeypatch, mode):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-0123456789")
    spec, _ = fake_model(on_tavily(deep_responder(2) if mode == "deep" else researcher()))
    graph = (build_deep if mode == "deep" else build_iterative)(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 80}
    with StubOpenAI(search=search) as web:
        ctx = Context(model=spec, max_iterations=1, search="tavily", search_base_url=web.root_url)
        values, _events, _ = run_deep(graph, ctx, config, {"question": "Who built the Eiffel Tower?"})
    assert [s["url"] for s in values["sources"]] == [ONE_FORM]
    assert [s["url"] for s in graph.get_state(config).values["evidence"]] == [ONE_FORM]
    listed = re.findall(r"(?m)^\[1\] .* — (\S+)$", values["report"])
    assert listed == [ONE_FORM]
    shown = list(steps(values["provenance"]))
    assert shown and {s["url"] for s in shown} == {ONE_FORM}
    page = view(values)["html"]
    assert re.findall(r'href="(http[^"]+)"', page) == [ONE_FORM]
    assert re.findall(r'href="(http[^"]+)"', export(values, "html").decode()) == [ONE_FORM]
    from docx import Document

    text = "\n".join(p.text for p in Document(io.BytesIO(export(values, "docx"))).paragraphs)
    assert f" — {ONE_FORM}" in text
    # the title arrived as plain words and is shown so in the report, `sources` and the page
    title = values["sources"][0]["title"]
    assert title.startswith("Bee navigation click here Sources Fake") and len(title) <= 300
    assert f"[1] {title[:60]}" in values["report"] and title[:60] in page


@pytest.mark.parametrize(
    "title, shown",
    [
        (HOSTILE_TITLE, "Bee navigation click here Sources Fake — bold word word"),
        ("[Official report](https:evil.example x).md", "Official report.md"),
        ("Waggle <b>dance</b> &amp; bees", "Waggle dance & bees"),
        ("# Bees\n> quoted | table *em* `code`", "Bees quoted table em code"),
        ("Mercury (planet) — Wikipedia", "Mercury (planet) — Wikipedia"),
        ("notes/bee_report_2024.md", "notes/bee_report_2024.md"),
        ("[PDF] Bee report: 2024 edition [3]", "PDF Bee report: 2024 edition"),
    ],
)
def test_a_title_is_one_line_of_plain_words(title, shown):
    from deepresearch.report.verify import _entry as sources_line
    from deepresearch.report.verify import source_entry
    from deepresearch.tools.base import SearchResult

    r = SearchResult(title=title, url="https://bees.example/a", text="Bees.", backend="tavily")
    assert r.title.startswith(shown) and "\n" not in r.title
    # the Sources list reads a title so too, also one that did not come through a search result
    for line in (
        sources_line(source_entry(1, {"title": t, "url": r.url, "backend": "tavily"})) for t in (r.title, title)
    ):
        head = line.rpartition(" — ")[0]
        assert not re.search(r"#|\[\d|\]\(|<|link removed|http|evil", head[4:]), line
        assert len(head) <= 205  # capped at 200 characters in the report
    assert len(r.title) <= 300


def test_a_files_name_is_a_title(tmp_path):
    from deepresearch.tools.docs import DocsSearch

    (tmp_path / "[Official report](https:evil.example x).md").write_text("Bees navigate by the sun.\n")
    results = DocsSearch(tmp_path).search("bees navigate sun", 3)
    assert [r.title for r in results] == ["Official report.md"]


def test_a_files_path_is_shown_as_it_is_in_the_report_and_the_json(cli_env, tmp_path):
    """Issue 61, finding 6: a docs file named like a Markdown link is listed under its real path,
    as inert text (a code span), the same string in the report and in `--json`'s `file`; never
    with "(link removed)" spliced into it."""
    import json

    from tests.helpers import cli

    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    name = "[Official report](https:evil.example x).md"
    (docs / "sub" / name).write_text("The Eiffel Tower was designed by the engineer Gustave Eiffel.\n")
    cli_env["OPENAI_API_KEY"] = "sk-test-one-form-0123456789"
    with StubOpenAI(researcher()) as stub:
        r = cli(
            [
                "Who built the Eiffel Tower?",
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "1",
                "--search",
                f"docs:{docs}",
                "--json",
                "--db",
                str(tmp_path / "runs.sqlite"),
            ],
            cli_env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    [source] = out["sources"]
    path = str((docs / "sub" / name).resolve())
    assert source["file"] == path  # the real path, unedited
    [line] = [x for x in out["report"].splitlines() if x.startswith("[1] ")]
    assert line == f"[1] file `{path}`", line  # a title made of the file's name is not repeated
    assert "link removed" not in out["report"] and "(link" not in line
    assert source["title"] == "sub/Official report.md"  # a title stays one line of plain words
