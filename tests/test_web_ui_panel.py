"""The page's data without a browser: the sources panel beside the report (deepresearch/web/panel.py)
and the search sources the page offers as checkboxes (deepresearch/web/checks.py). The browser
tests (tests/test_web_page.py) drive both on the page."""

from __future__ import annotations

from html.parser import HTMLParser

from deepresearch.web.checks import DOCS_ENV, offered_sources
from deepresearch.web.render import view


class Tags(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


SOURCES = [
    {"id": 1, "title": "Bees <b>navigate</b>", "url": "https://bees.example/a"},
    {"id": 2, "title": "Field notes", "url": "file:///home/me/notes/bees.md", "meta": {"page": 3}},
    {"id": 3, "title": "Sneaky", "url": "javascript:alert(1)"},
]
REPORT = "# Bees\n\nBees use the sun [1]. They keep notes [2].\n\n## Sources\n\n[1] Bees — https://bees.example/a\n"


def chain(sid: int, title: str, url: str, query: str, passage: str) -> list[dict]:
    return [
        {"step": "search", "backend": "wiki", "query": query, "round": 1},
        {"step": "source", "id": sid, "title": title, "url": url},
        {"step": "passage", "text": passage, "verdict": "supported"},
    ]


def test_the_panel_shows_each_source_how_it_was_found_and_the_passages_cited():
    values = {
        "report": REPORT,
        "sources": SOURCES,
        "provenance": {
            "sentences": [
                {
                    "text": "Bees use the sun.",
                    "chains": [chain(1, "Bees", SOURCES[0]["url"], "bee navigation", "Bees fly by the sun.")],
                },
                {
                    "text": "They keep notes.",
                    "chains": [chain(2, "Field notes", SOURCES[1]["url"], "<script>q</script>", "Notes p. 3.")],
                },
                {"text": "I typed this."},
            ],
            "uncited": [{"title": "Wasps", "why": "no sentence used it"}],
        },
    }
    panel = view(values)["panel"]
    page = Tags(panel)
    ids = [a["id"] for t, a in page.tags if t == "section"]
    assert ids == ["panel-src-1", "panel-src-2", "panel-src-3"]  # each source, where a citation scrolls to
    text = "".join(page.text)
    assert "found by searching wiki for “bee navigation” (round 1)" in text
    assert "Bees fly by the sun." in text and "supports: “Bees use the sun.”" in text
    assert "<script>q</script>" in text  # a query is text, shown as it is
    assert "Sentences that cite no source" in text and "I typed this." in text
    assert "Retrieved but not cited" in text and "Wasps: no sentence used it" in text
    # only the retrieved http(s) page is a link; a file is its path as text, a javascript: URL no link
    assert [a["href"] for t, a in page.tags if t == "a"] == ["https://bees.example/a"]
    assert "/home/me/notes/bees.md" in text
    assert not {t for t, _ in page.tags} & {"script", "b", "img"}
    # the report on the page leaves the provenance to the panel; the HTML export keeps it
    assert "details" not in {t for t, _ in Tags(view(values)["html"]).tags}


def test_without_provenance_the_panel_shows_the_checked_passages():
    values = {
        "report": REPORT,
        "sources": SOURCES[:1],
        "citations": [
            {
                "source_id": 1,
                "sentence": "Bees use the sun [1].",
                "verdict": "supported",
                "span": "Bees fly by the sun.",
            }
        ],
    }
    text = "".join(Tags(view(values)["panel"]).text)
    assert "Bees fly by the sun." in text and "supports: “Bees use the sun [1].”" in text
    assert view({"report": "# Nothing\n\nNo sources.\n"})["panel"] == ""  # no panel without sources


def test_the_page_offers_the_sources_this_server_has(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    plain = offered_sources({})
    assert [s["spec"] for s in plain] == ["wiki", "pubmed", "clinicaltrials", "europepmc", "arxiv"]
    assert [s["spec"] for s in plain if s.get("checked")] == ["wiki"]  # the default
    assert all(s["title"] for s in plain)
    with_more = offered_sources(
        {"TAVILY_API_KEY": "tvly-x", DOCS_ENV: f"{notes}:{tmp_path / 'missing'}"}  # a missing folder is left out
    )
    specs = [s["spec"] for s in with_more]
    assert specs == ["wiki", f"docs:{notes}", "tavily", "pubmed", "clinicaltrials", "europepmc", "arxiv"]
    docs = with_more[1]
    assert docs["label"] == "docs: notes" and not docs.get("checked")
    assert "tvly-x" not in repr(with_more)  # a key says the backend is there, and nothing more
