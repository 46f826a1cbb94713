"""Search backends: the offline encyclopedia, the docs folder, Tavily over HTTP."""

import pytest

from deepresearch.tools import check_search_spec, get_search
from deepresearch.tools.base import SearchError
from deepresearch.tools.docs import DocsSearch
from deepresearch.tools.tavily import TavilySearch
from tests.stub_openai import StubOpenAI


def test_wiki_finds_the_eiffel_tower_in_its_top_three():
    results = get_search("wiki").search("Eiffel Tower", 3)
    assert "Eiffel Tower" in [r.title for r in results]
    hit = next(r for r in results if r.title == "Eiffel Tower")
    assert hit.url == "https://en.wikipedia.org/wiki/Eiffel_Tower"
    assert "Gustave Eiffel" in hit.text
    assert hit.backend == "wiki"


def test_wiki_index_is_built_once_and_loaded_after():
    from deepresearch.tools.wiki import WikiSearch

    backend = get_search("wiki")
    backend.index  # noqa: B018 - built or loaded
    files = {f: f.stat().st_mtime_ns for f in backend.index_dir.rglob("*") if f.is_file()}
    assert backend.index_dir / "ok" in files and len(files) >= 2
    fresh = WikiSearch()  # a new process would load the index like this
    assert fresh.index_dir == backend.index_dir
    assert "Eiffel Tower" in [r.title for r in fresh.search("Eiffel Tower", 3)]
    # loaded, not rebuilt: not one file of the index was written again
    assert {f: f.stat().st_mtime_ns for f in backend.index_dir.rglob("*") if f.is_file()} == files


def test_a_local_backend_is_one_instance_whatever_the_runs_timeouts(tmp_path):
    """The encyclopedia and a docs folder take no server, timeout or retries: runs that differ
    only in those share one instance (one index, one linker), while an HTTP backend gets its own."""
    assert get_search("wiki", timeout=5, max_retries=0) is get_search("wiki", timeout=60, max_retries=4)
    (tmp_path / "a.md").write_text("A note on towers.")
    docs = f"docs:{tmp_path}"
    assert get_search(docs, timeout=5) is get_search(docs, timeout=60)
    assert get_search(docs) is not get_search(docs, options=(("include", ("*.md",)),))
    assert get_search("tavily", base_url="http://127.0.0.1:9", timeout=5) is not get_search(
        "tavily", base_url="http://127.0.0.1:9", timeout=60
    )


def test_docs_finds_a_file_by_its_content(tmp_path):
    (tmp_path / "a.md").write_text("# Gardening\n\nTomatoes need sun and water.\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("The quokka is a small marsupial living on Rottnest Island.\n")
    (tmp_path / "c.html").write_text("<html><body><p>Bicycles have two wheels.</p></body></html>")
    (tmp_path / "skip.bin").write_bytes(b"\x00\x01quokka")
    results = DocsSearch(tmp_path).search("quokka marsupial island", 2)
    assert results[0].title == "sub/b.txt"
    assert results[0].url == (tmp_path / "sub" / "b.txt").resolve().as_uri()
    assert DocsSearch(tmp_path).search("wheels bicycles", 1)[0].title == "c.html"


def test_docs_reads_restructuredtext(tmp_path):
    (tmp_path / "guide.rst").write_text("Installation\n============\n\nThe axolotl package installs with pip.\n")
    (tmp_path / "other.md").write_text("# Cooking\n\nBoil the pasta for nine minutes.\n")
    hit = DocsSearch(tmp_path).search("axolotl installs", 1)[0]
    assert hit.title == "guide.rst" and "axolotl package installs" in hit.text
    assert hit.url == (tmp_path / "guide.rst").resolve().as_uri()


def test_docs_skips_binary_and_reads_odd_encodings(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"\x00\x00\x00binary")
    (tmp_path / "latin.txt").write_bytes("Caf\xe9 cr\xe8me recipes from Montr\xe9al".encode("latin-1"))
    backend = DocsSearch(tmp_path)
    assert any("bin.txt" in s and "binary" in s for s in backend.skipped)
    hit = backend.search("Montréal recipes", 1)[0]
    assert hit.title == "latin.txt" and "Montréal" in hit.text


@pytest.mark.parametrize(
    "spec,message",
    [("bing", "unknown search backend"), ("docs:", "needs a folder"), ("docs:/definitely/not/here", "not found")],
)
def test_bad_search_specs_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        check_search_spec(spec)


def test_tavily_through_an_overridden_base_url(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key-0000")

    def search(query):
        return [{"title": "Page", "url": "https://example.org/page", "content": f"about {query}"}]

    with StubOpenAI(search=search) as stub:
        results = TavilySearch(base_url=stub.root_url).search("bees", 2)
        assert [(r.title, r.url, r.text) for r in results] == [("Page", "https://example.org/page", "about bees")]
        assert stub.requests[0]["body"]["query"] == "bees"


def test_tavily_without_a_key_fails_cleanly(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(SearchError, match="TAVILY_API_KEY"):
        TavilySearch(base_url="http://127.0.0.1:9").search("x", 1)


def test_tavily_keeps_its_connection_until_the_key_changes(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    """Searches reuse one client and connection, from any thread, while the key is the same;
    a new key (or another TAVILY_* setting) makes a new client, which sends the new key."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-first-key-0000")
    monkeypatch.delenv("TAVILY_PROJECT", raising=False)
    backend = TavilySearch(base_url=None)
    with StubOpenAI(search=lambda q: [{"title": "P", "url": "https://example.org/p", "content": q}]) as stub:
        backend.base_url = stub.root_url
        for q in ("a", "b", "c"):  # "b" from another thread, as from the search pool of the next round
            if q == "b":
                with ThreadPoolExecutor(1) as pool:
                    assert [r.text for r in pool.submit(backend.search, q, 1).result()] == [q]
            else:
                assert [r.text for r in backend.search(q, 1)] == [q]
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-second-key-000")
        backend.search("d", 1)
        monkeypatch.setenv("TAVILY_PROJECT", "proj-1")
        backend.search("e", 1)
        backend.search("f", 1)
        found = [
            (r["body"]["query"], r["headers"].get("Authorization"), r["headers"].get("X-Project-ID"), r["peer"])
            for r in stub.requests
        ]
    assert [f[:3] for f in found] == [
        ("a", "Bearer tvly-first-key-0000", None),
        ("b", "Bearer tvly-first-key-0000", None),
        ("c", "Bearer tvly-first-key-0000", None),
        ("d", "Bearer tvly-second-key-000", None),
        ("e", "Bearer tvly-second-key-000", "proj-1"),
        ("f", "Bearer tvly-second-key-000", "proj-1"),
    ]
    peers = [f[3] for f in found]
    assert peers[0] == peers[1] == peers[2] and peers[4] == peers[5]  # one connection per client
    assert len({peers[0], peers[3], peers[4]}) == 3  # a new client for each change


def test_tavily_goes_through_the_environments_proxy_and_follows_its_changes(monkeypatch):
    """The proxy settings requests reads from the environment apply (read once per client):
    HTTP_PROXY sends the search through the proxy; NO_PROXY, set later, takes it direct."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-proxy-key-0000")

    def search(q):
        return [{"title": "P", "url": "https://example.org/p", "content": q}]

    with StubOpenAI(search=search) as proxy, StubOpenAI(search=search) as server:
        backend = TavilySearch(base_url=server.root_url)
        monkeypatch.setenv("HTTP_PROXY", proxy.root_url)
        assert [r.text for r in backend.search("a", 1)] == ["a"]
        assert [r.text for r in backend.search("b", 1)] == ["b"]
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert [r.text for r in backend.search("c", 1)] == ["c"]
        via_proxy = [(r["path"], r["body"]["query"]) for r in proxy.requests]
        direct = [(r["path"], r["body"]["query"]) for r in server.requests]
    assert via_proxy == [(f"{server.root_url}/search", "a"), (f"{server.root_url}/search", "b")]  # absolute form
    assert direct == [("/search", "c")]
