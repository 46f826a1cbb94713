"""Exports and the safe rendering they share with the web page.

The report is a real run's (the iterative graph with a fake chat model at the boundary,
checkpointed to a SQLite file), exported by `deepresearch export` in every format; each file
is opened with an independent reader (html.parser, python-docx, pypdf) and must hold the
report's text, its Sources and the verification line. The rendering is then fed hostile
values: nothing in it may become a tag, a script, an event handler or a link but the Sources'
http(s) URLs."""

from __future__ import annotations

import io
import re
import uuid
from html.parser import HTMLParser

import pytest

from deepresearch.config import Context
from deepresearch.graphs import iterative
from deepresearch.llm.budget import recursion_limit
from deepresearch.runtime.checkpoint import open_checkpointer
from deepresearch.web.export import export
from deepresearch.web.render import view
from tests.fakes import researcher
from tests.helpers import cli, one_line_error


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text."""

    def __init__(self, text: str):
        super().__init__()
        self.tags, self.chunks = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.chunks).split())


def words(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished iterative run in a SQLite checkpoint database: (db, thread_id, values)."""
    from deepresearch.llm.models import register_model, unregister_model
    from tests.fakes import ScriptedModel

    name = f"fake-{uuid.uuid4().hex[:8]}"
    register_model(name, ScriptedModel(respond=researcher()))
    db = tmp_path_factory.mktemp("export") / "runs.sqlite"
    tid = uuid.uuid4().hex
    ctx = Context(model=name, max_iterations=2)
    try:
        with open_checkpointer(str(db)) as saver:
            graph = iterative.build(checkpointer=saver)
            config = {"configurable": {"thread_id": tid}, "recursion_limit": recursion_limit(ctx) + 20}
            values = graph.invoke({"question": "Who built the Eiffel Tower, and for which event?"}, config, context=ctx)
    finally:
        unregister_model(name)
    assert values["report"] and len(values["sources"]) >= 2
    return db, tid, values


def body_sentence(values: dict) -> str:
    """A sentence of the report's body, without its citation."""
    line = next(line for line in values["report"].splitlines() if re.search(r"\[\d+\]\.?$", line.strip()))
    return re.sub(r"\s*\[\d+\]", "", line.split(". ")[0]).strip(" .")


def check_holds(text: str, values: dict) -> None:
    text = words(text)
    assert body_sentence(values)[:60] in text
    for s in values["sources"]:
        assert words(s["title"])[:40] in text and s["url"] in text, s
    assert "Verification:" in text


@pytest.mark.parametrize("fmt", ["md", "html", "docx", "pdf"])
def test_export_cli_writes_each_format(finished, cli_env, tmp_path, fmt):
    db, tid, values = finished
    out = tmp_path / f"report.{fmt}"
    r = cli(["export", tid, "--format", fmt, "--db", db, "-o", out], cli_env)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    if fmt == "md":
        assert data.decode() == values["report"]
    elif fmt == "html":
        page = Tags(data.decode())
        check_holds(page.text, values)
        assert not [t for t, _ in page.tags if t in ("script", "img", "iframe", "object")]
        links = [a["href"] for t, a in page.tags if t == "a" and not a["href"].startswith("#")]
        assert sorted(links) == sorted(s["url"] for s in values["sources"])  # only the Sources list links out
        cites = [a["href"] for t, a in page.tags if t == "a" and a["href"].startswith("#src-")]
        assert cites and all(f'id="{h[1:]}"' in data.decode() for h in cites)  # citations link to the list
    elif fmt == "docx":
        from docx import Document

        check_holds("\n".join(p.text for p in Document(io.BytesIO(data)).paragraphs), values)
    else:
        from pypdf import PdfReader

        check_holds("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages), values)


def test_export_bad_input_is_one_line(finished, cli_env, tmp_path):
    db, tid, _ = finished
    assert "unknown thread" in one_line_error(cli(["export", "no-such-thread", "--db", db], cli_env))
    assert "invalid choice" in one_line_error(cli(["export", tid, "--format", "odt", "--db", db], cli_env))
    assert "no such database" in one_line_error(cli(["export", tid, "--db", tmp_path / "none.sqlite"], cli_env))


HOSTILE = {
    "question": "<b>bold</b> question",
    "report": (
        "# Bees <script>alert(1)</script>\n\nBees navigate by the sun [1]. See [here](https://evil.example/a), "
        "![pixel](https://evil.example/p.png), <img src=x onerror=alert(2)> and <https://evil.example/auto> "
        '[2].\n\n<iframe src="https://evil.example"></iframe>\n\n## Sources\n\n[1] x — https://bees.example/a\n\n'
        "_Verification: 2 citations checked._\n"
    ),
    "sources": [
        {"id": 1, "title": "<script>alert('title')</script>Bees & <b>sun</b>", "url": "https://bees.example/a"},
        {"id": 2, "title": '" onmouseover="alert(3)', "url": "javascript:alert(4)"},
    ],
    "citations": [
        {
            "sentence": "Bees navigate by the sun.",
            "source_id": 1,
            "score": 0.9,
            "verdict": "supported",
            "span": "<img src=x onerror=alert(5)> Bees use the sun.",
        }
    ],
    "charts": [{"title": "<svg onload=alert(6)>", "kind": "bar", "points": [["<b>a</b>", 1], ["b", "2"], ["c", "x"]]}],
    "provenance": {"sentences": [{"text": "<script>alert(7)</script>"}]},
}


def test_an_unverified_citation_is_a_mark_with_its_explanation():
    report = (
        "# Bees\n\nBees navigate by the sun [1]^unverified^. They dance [1].\n\n## Sources\n\n"
        "[1] Bees — https://bees.example/a\n\n^unverified^: the cited source does not clearly support that "
        "sentence.\n\n_Verification: 2 citations checked._\n"
    )
    v = view({"report": report, "sources": [{"id": 1, "title": "Bees", "url": "https://bees.example/a"}]})
    page = Tags(v["html"])
    assert "^" not in page.text  # no literal carets
    marks = [attrs for tag, attrs in page.tags if tag == "mark"]
    assert len(marks) == 2 and all(
        m["class"] == "unverified" and "does not clearly support" in m["title"] for m in marks
    )
    assert "the sun [ 1 ] unverified . They dance [ 1 ] ." in page.text  # the mark right after its citation


def test_hostile_values_render_as_text():
    v = view(HOSTILE)
    page = Tags(v["html"])
    tags = {t for t, _ in page.tags}
    assert not tags & {"script", "img", "iframe", "object", "embed", "style", "b"}, tags
    assert not [a for _, attrs in page.tags for a in attrs if a.startswith("on")]  # no event handler
    links = [a.get("href") for t, a in page.tags if t == "a"]
    assert [h for h in links if not h.startswith("#src-")] == ["https://bees.example/a"]
    for shown in (
        "<script>alert(1)</script>",
        "[here](https://evil.example/a)",
        "<img src=x onerror=alert(2)>",
        "<svg onload=alert(6)>",
    ):
        assert shown in page.text, shown  # shown as the text it is
    assert "alert('title') Bees & sun" in page.text  # a title is plain words: its tags are dropped
    assert "(no link)" in page.text  # a javascript: URL is no link
    # the popover's data is data: the page sets it as text
    assert v["citations"][0]["passage"].startswith("<img") and v["citations"][0]["title"] == "alert('title') Bees & sun"


@pytest.mark.parametrize("fmt", ["html", "docx", "pdf"])
def test_hostile_values_export(fmt):
    data = export(HOSTILE, fmt)
    if fmt == "html":
        page = Tags(data.decode())
        assert not {t for t, _ in page.tags} & {"script", "img", "iframe"}
        assert "Content-Security-Policy" in data.decode()
    elif fmt == "docx":
        from docx import Document

        text = "\n".join(p.text for p in Document(io.BytesIO(data)).paragraphs)
        assert "[1] alert('title') Bees & sun — https://bees.example/a" in text
    else:
        from pypdf import PdfReader

        assert "https://bees.example/a" in "".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)
