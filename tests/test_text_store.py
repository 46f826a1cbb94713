"""Where the sources' full texts live: the run's LangGraph store when it has
one (namespaced per run), the local file store only for a graph compiled with neither store nor
server. In-process here; the CLI over PostgreSQL and SQLite, and `langgraph dev`, are in
tests/test_resume_elsewhere.py.
"""

from __future__ import annotations

import uuid

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from deepresearch.config import Context
from deepresearch.graphs.deep import build as build_deep
from deepresearch.graphs.iterative import build as build_iterative
from deepresearch.runtime.runner import research
from deepresearch.store import TEXTS, TEXTS_NAMESPACE
from deepresearch.text.urls import SNIPPET_CHARS, snippet
from tests.deep_helpers import citations_resolve, deep_responder, run_deep
from tests.fakes import researcher
from tests.stub_openai import StubOpenAI

FILLER = "Filler sentence about the streets of Paris. " * 12


def page_search(url: str, tail: str):
    """A web search answering every query with one page at `url` whose text ends with `tail`
    (past the snippet kept in state)."""

    def search(query):
        return [{"title": "Tower page", "url": url, "content": f"Eiffel Tower facts. {FILLER}{tail}"}]

    return search


def citing(sentence: str):
    return lambda ids: f"# R\n\n{sentence} [1]."


def test_two_runs_in_one_store_never_read_each_others_texts(fake_model, monkeypatch):
    """Run A stops before its citations are checked; run B, in the same store, retrieves the same
    URL with another text; A resumed checks its citation against its own text, not B's."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")
    url = f"https://example.org/{uuid.uuid4().hex}"
    a_tail = "The 1889 Exposition Universelle celebrated the centennial of the French Revolution."
    b_tail = "Sheep graze quietly on the green hills of Wales."
    saver, store = InMemorySaver(), InMemoryStore()
    spec_a, _ = fake_model(researcher(complete_after=1, cite=citing(a_tail)))
    spec_b, _ = fake_model(researcher(complete_after=1, cite=citing(b_tail)))
    with StubOpenAI(search=page_search(url, a_tail)) as web_a, StubOpenAI(search=page_search(url, b_tail)) as web_b:
        ctx_a = Context(model=spec_a, writer="single", search="tavily", search_base_url=web_a.root_url)
        ctx_b = Context(model=spec_b, writer="single", search="tavily", search_base_url=web_b.root_url)
        config_a = {"configurable": {"thread_id": "run.a"}, "recursion_limit": 60}  # '.' is escaped in the label
        config_b = {"configurable": {"thread_id": "run.b"}, "recursion_limit": 60}
        graph = build_iterative(checkpointer=saver, store=store)
        for _ in graph.stream(
            {"question": "Why was the Eiffel Tower built?"}, config_a, context=ctx_a, interrupt_before=["source_tracer"]
        ):
            pass
        assert graph.get_state(config_a).next == ("source_tracer",)
        b = graph.invoke({"question": "Why was the Eiffel Tower built?"}, config_b, context=ctx_b)
        a = build_iterative(checkpointer=saver, store=store).invoke(None, config_a, context=ctx_a)

    for final, tail in ((a, a_tail), (b, b_tail)):
        [c] = final["citations"]
        assert c["verdict"] == "supported" and tail in c["span"], c
        assert citations_resolve(final)
    # each run keeps its texts under its own label; the state holds a snippet and the label
    evidence = {
        t: build_iterative(checkpointer=saver).get_state(cfg).values["evidence"]
        for t, cfg in (("a", config_a), ("b", config_b))
    }
    labels = {t: ev[0]["text_ns"] for t, ev in evidence.items()}
    assert labels == {"a": "t:run%2Ea", "b": "t:run%2Eb"}
    for t, tail in (("a", a_tail), ("b", b_tail)):
        [s] = evidence[t]
        assert tail not in s["snippet"] and len(s["snippet"]) <= SNIPPET_CHARS
        assert store.get((*TEXTS_NAMESPACE, labels[t]), s["key"]).value["text"].endswith(tail)
    assert TEXTS.get(evidence["a"][0]["key"]) is None  # nothing on this machine's disk


def test_deep_sections_keep_their_texts_in_the_runs_store(fake_model, monkeypatch):
    """The sections run as subgraphs inside nodes: their texts reach the deep run's store too,
    under the root thread's label, and the report is checked against them."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")
    prefix = f"https://example.org/{uuid.uuid4().hex}"
    long_tail = "The 1889 Exposition Universelle celebrated the centennial of the French Revolution."

    def search(query):
        return [
            {
                "title": f"Page on {query}",
                "url": f"{prefix}/{abs(hash(query))}",
                "content": f"{query} facts. {FILLER}{long_tail}",
            }
        ]

    spec, _ = fake_model(deep_responder(3, write=lambda prompt, ids: " ".join(f"{long_tail} [{i}]." for i in ids[:1])))
    store = InMemoryStore()
    graph = build_deep(checkpointer=InMemorySaver(), store=store)
    with StubOpenAI(search=search) as web:
        ctx = Context(model=spec, writer="single", max_iterations=1, search="tavily", search_base_url=web.root_url)
        final, _, _ = run_deep(
            graph, ctx, {"configurable": {"thread_id": "deep-store"}}, {"question": "Eiffel overview"}
        )
    assert [s["status"] for s in final["sections"]] == ["done"] * 3
    assert citations_resolve(final)
    spans = [c for c in final["citations"] if long_tail in c["sentence"]]
    assert len(spans) >= 3 and all(c["verdict"] == "supported" for c in spans), final["citations"]
    stored = store.search((*TEXTS_NAMESPACE, "t:deep-store"), limit=100)
    assert len(stored) >= len(final["sources"]) and all(i.value["text"].endswith(long_tail) for i in stored)
    assert all(TEXTS.get(i.key) is None for i in stored)


def test_research_without_a_checkpointer_keeps_texts_in_memory(fake_model, monkeypatch):
    """`research()` with no checkpointer: the run and its texts stay in memory, none on disk."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")
    url = f"https://example.org/{uuid.uuid4().hex}"
    tail = "The 1889 Exposition Universelle celebrated the centennial of the French Revolution."
    spec, _ = fake_model(researcher(complete_after=1, cite=citing(tail)))
    with StubOpenAI(search=page_search(url, tail)) as web:
        out = research(
            "Why was the Eiffel Tower built?",
            Context(model=spec, writer="single", search="tavily", search_base_url=web.root_url),
            mode="iterative",
        )
    [c] = out["citations"]
    assert c["verdict"] == "supported" and tail in c["span"]
    from deepresearch.text.urls import source_key

    assert TEXTS.get(source_key(url)) is None


def test_a_graph_with_neither_store_nor_server_falls_back_to_the_local_file_store(fake_model, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")
    url = f"https://example.org/{uuid.uuid4().hex}"
    tail = "The 1889 Exposition Universelle celebrated the centennial of the French Revolution."
    spec, _ = fake_model(researcher(complete_after=1, cite=citing(tail)))
    with StubOpenAI(search=page_search(url, tail)) as web:
        ctx = Context(model=spec, writer="single", search="tavily", search_base_url=web.root_url)
        final = build_iterative(checkpointer=InMemorySaver()).invoke(
            {"question": "Why was the Eiffel Tower built?"},
            {"configurable": {"thread_id": uuid.uuid4().hex}},
            context=ctx,
        )
    [c] = final["citations"]
    assert c["verdict"] == "supported" and tail in c["span"]
    from deepresearch.text.urls import source_key

    assert TEXTS.get(source_key(url)).endswith(tail) and snippet(TEXTS.get(source_key(url))) != TEXTS.get(
        source_key(url)
    )


def test_sources_checkpointed_before_the_store_still_read_their_file_texts():
    """A thread checkpointed by an earlier version (no `text_ns`, its texts in the file store)
    resumed with a store still reads them; a source whose store lost its text falls back to
    the snippet."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from deepresearch.store import full_text
    from deepresearch.text.urls import source_key

    old_url, new_url = (f"https://example.org/{uuid.uuid4().hex}" for _ in range(2))
    TEXTS.put(source_key(old_url), "The old text, kept on this machine's disk.")
    old = {"key": source_key(old_url), "snippet": "old snippet"}
    lost = {"key": source_key(new_url), "snippet": "new snippet", "text_ns": "t:gone"}

    class S(TypedDict, total=False):
        texts: list

    def read(state: S) -> S:
        return {"texts": [full_text(old), full_text(lost)]}

    g = StateGraph(S)
    g.add_node("read", read)
    g.add_edge(START, "read")
    g.add_edge("read", END)
    out = g.compile(store=InMemoryStore()).invoke({})
    assert out["texts"] == ["The old text, kept on this machine's disk.", "new snippet"]


def test_the_file_store_follows_the_cache_folder_and_makes_a_removed_folder_again(tmp_path, monkeypatch):
    import shutil

    from deepresearch.store import TextStore

    store = TextStore()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a"))
    store.put("k1", "one")
    assert (tmp_path / "a" / "deepresearch" / "texts" / "k1.txt").read_text(encoding="utf-8") == "one"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "b"))  # a new cache folder: texts go there
    store.put("k2", "two")
    assert (store.get("k1"), store.get("k2")) == (None, "two")
    shutil.rmtree(tmp_path / "b")  # someone clears the cache during a run
    assert store.get("k2") is None
    store.put("k3", "three")
    assert store.get("k3") == "three" and (tmp_path / "b" / "deepresearch" / "texts" / "k3.txt").exists()


def test_a_node_reads_each_text_once_and_the_next_node_reads_it_again():
    """Inside a `reads_texts_once` node a source's text is read from the store once (a source
    naming another run's label, the same page kept by another run, is never read: its snippet);
    the next node, or a node without it, reads the store again; once the run's time is up the
    snippet is used, read or not."""
    import time
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from deepresearch.store import full_text, reads_texts_once, texts_until

    class CountingStore(InMemoryStore):
        gets = 0

        def get(self, *args, **kwargs):
            CountingStore.gets += 1
            return super().get(*args, **kwargs)

    store = CountingStore()
    a = {"key": "s1", "snippet": "a snippet", "text_ns": "t:a"}
    b = {"key": "s1", "snippet": "b snippet", "text_ns": "t:b"}  # the same page in another run (thread b)
    for src, text in ((a, "A one"), (b, "B one")):
        store.put((*TEXTS_NAMESPACE, src["text_ns"]), src["key"], {"text": text})

    class S(TypedDict, total=False):
        seen: list

    def rewrite(text: str) -> None:
        store.put((*TEXTS_NAMESPACE, "t:a"), "s1", {"text": text})

    @reads_texts_once
    def first(state: S) -> S:
        seen = [full_text(a), full_text(b)]
        rewrite("A two")
        seen += [full_text(a), full_text(a), full_text(b)]
        with texts_until(time.monotonic() - 1):
            seen.append(full_text(a))
        return {"seen": seen + [CountingStore.gets]}

    @reads_texts_once
    def second(state: S) -> S:
        return {"seen": state["seen"] + [full_text(a)]}

    def plain(state: S) -> S:
        seen = [full_text(a)]
        rewrite("A three")
        return {"seen": state["seen"] + seen + [full_text(a)]}

    g = StateGraph(S)
    for name, node in (("first", first), ("second", second), ("plain", plain)):
        g.add_node(name, node)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", "plain")
    g.add_edge("plain", END)
    out = g.compile(store=store).invoke({}, {"configurable": {"thread_id": "a"}})  # the run of thread a
    assert out["seen"] == [
        "A one",
        "b snippet",
        "A one",
        "A one",
        "b snippet",
        "a snippet",
        1,
        "A two",
        "A two",
        "A three",
    ]
    # outside a graph (the file store): read once within the block, afresh after it
    from deepresearch.store import texts_read_once

    key = f"s{uuid.uuid4().hex[:12]}"
    TEXTS.put(key, "file one")
    with texts_read_once():
        assert full_text({"key": key}) == "file one"
        TEXTS.put(key, "file two")
        assert full_text({"key": key}) == "file one"
    assert full_text({"key": key}) == "file two"
