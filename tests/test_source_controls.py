"""Source controls: include and exclude domains, a time range or start date and the depth for web
search (sent as Tavily's own parameters), and globs for documents. The domains hold on our side
too: a web search stub that ignores them, and the encyclopedia that has no such parameter, bring
nothing from outside the allowed set into the run."""

from __future__ import annotations

import pytest

from deepresearch.choices.controls import allowed
from deepresearch.config import Context
from deepresearch.runtime.runner import research
from deepresearch.tools.docs import DocsSearch
from deepresearch.tools.registry import backend_for
from tests.helpers import cli, one_line_error
from tests.source_helpers import cite_all
from tests.stub_openai import StubOpenAI

PAGES = [
    "https://pubmed.ncbi.nlm.nih.gov/1/",
    "https://www.nih.gov/news/aspirin",
    "https://ads.nih.gov/promo",
    "https://nih.gov.evil.example/aspirin",
    "https://evil.example/aspirin",
]


def ignoring_search(query):
    """A web search that ignores every parameter it is given: pages from anywhere."""
    return [
        {"title": f"Aspirin page {i}", "url": url, "content": f"Aspirin prevents heart attacks, says page {i}."}
        for i, url in enumerate(PAGES)
    ]


def test_a_domain_filter_holds_against_a_backend_that_ignores_it(fake_model, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key-0000")
    model, _ = fake_model(cite_all())
    events = []
    with StubOpenAI(search=ignoring_search) as web:
        ctx = Context(
            model=model,
            search="tavily,wiki",
            search_base_url=web.root_url,
            max_iterations=1,
            results_per_query=5,
            include_domains=["nih.gov"],
            exclude_domains=["ads.nih.gov"],
            time_range="year",
            search_depth="advanced",
        )
        out = research("Does aspirin prevent heart attacks?", ctx, mode="iterative", on_event=events.append)
        sent = [r["body"] for r in web.requests if r["path"].rstrip("/").endswith("/search")]
    assert sent and all(
        b["include_domains"] == ["nih.gov"]
        and b["exclude_domains"] == ["ads.nih.gov"]
        and b["time_range"] == "year"
        and b["search_depth"] == "advanced"
        for b in sent
    )
    urls = {s["url"] for s in out["sources"]}
    assert urls == {"https://pubmed.ncbi.nlm.nih.gov/1/", "https://www.nih.gov/news/aspirin"}
    done = [e for e in events if e["type"] == "search_complete"]
    assert any(e["tool"] == "tavily" and e["results"] == 2 and e["outside_domains"] == 3 for e in done)
    assert all(e["results"] == 0 for e in done if e["tool"] == "wiki")  # Wikipedia is outside the set too


def test_start_date_is_sent_and_no_control_sends_nothing(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key-0000")
    with StubOpenAI(search=ignoring_search) as web:
        backend_for(Context(search="tavily", search_base_url=web.root_url, start_date="2024-01-31"), "tavily").search(
            "aspirin", 2
        )
        backend_for(Context(search="tavily", search_base_url=web.root_url), "tavily").search("aspirin", 2)
        dated, plain = [r["body"] for r in web.requests]
    assert dated["start_date"] == "2024-01-31"
    assert not {"start_date", "include_domains", "time_range", "search_depth"} & set(plain)  # defaults unchanged


@pytest.mark.parametrize(
    "url,ok",
    [
        ("https://nih.gov/a", True),
        ("https://sub.nih.gov/a", True),
        ("https://nih.gov.evil.example/", False),
        ("https://notnih.gov/", False),
        ("https://ads.nih.gov/", False),
        ("file:///home/me/notes.md", True),
    ],
)
def test_allowed_matches_whole_domain_names(url, ok):
    assert allowed(url, ["nih.gov"], ["ads.nih.gov"]) is ok


def test_docs_globs_choose_the_files_read(tmp_path):
    (tmp_path / "reports").mkdir()
    for name in ("a.md", "b.txt", "reports/c.md", "reports/draft.md"):
        (tmp_path / name).write_text(f"Quokkas live on Rottnest Island ({name}).", encoding="utf-8")
    found = DocsSearch(tmp_path, include=("*.md",), exclude=("*draft*",)).search("quokkas Rottnest", 5)
    assert sorted(r.title for r in found) == ["a.md", "reports/c.md"]
    ctx = Context(search=f"docs:{tmp_path}", docs_include=["reports/*"])
    assert sorted(r.title for r in backend_for(ctx, "docs").search("quokkas", 5)) == [
        "reports/c.md",
        "reports/draft.md",
    ]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--include-domains", "nih gov"], "not a domain name"),
        (["--start-date", "31/01/2024"], "YYYY-MM-DD"),
        (["--time-range", "decade"], "invalid choice"),
    ],
)
def test_bad_controls_are_refused_in_one_line(cli_env, args, message):
    assert message in one_line_error(cli(["Why?", *args], cli_env))


def test_globs_that_leave_no_file_are_one_line(cli_env, tmp_path):
    (tmp_path / "a.md").write_text("Quokkas.", encoding="utf-8")
    with pytest.raises(ValueError, match="no readable file matching"):
        DocsSearch(tmp_path, include=("*.txt",))
    r = cli(["Why?", "--search", f"docs:{tmp_path}", "--docs-include", "*.txt"], cli_env)
    assert "no readable file matching" in one_line_error(r)
