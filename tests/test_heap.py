"""Long-lived objects leave the collector's full passes once loaded (deepresearch.heap)."""

import gc

from deepresearch import heap


def test_settle_collects_and_freezes_once_per_thing():
    before = gc.get_freeze_count()
    kept = [[i] for i in range(1000)]  # alive now: frozen
    assert heap.settle("test: a thing loaded") is True
    assert gc.get_freeze_count() >= before + 1000
    assert heap.settle("test: a thing loaded") is False  # once per process
    assert kept


def test_a_process_that_turned_the_collector_off_is_left_alone():
    gc.disable()
    try:
        assert heap.settle("test: loaded with the collector off") is False
    finally:
        gc.enable()
    assert heap.settle("test: loaded with the collector off") is True  # not marked done while off


def test_the_model_factory_settles_after_a_client_is_made(monkeypatch):
    from deepresearch.llm.models import get_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    get_model("openai:gpt-test-heap", base_url="http://127.0.0.1:9/v1")
    assert "model client" in heap._done


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_a_linkers_tables_leave_the_collectors_passes():
    """A backend's linker lives as long as the process (tens of thousands of titles for the
    embedded encyclopedia): once the collector has seen its tables, it no longer scans them."""
    from deepresearch.understanding.linking import Linker

    titles = [f"Title number {i} (thing)" for i in range(3000)] + ["Mercury (planet)", "Mercury (element)"]
    before = _tracked()
    linker = Linker(titles, [f"Text about thing {i}." for i in range(len(titles))])
    gc.collect()
    assert not gc.is_tracked(linker.exact) and not gc.is_tracked(linker.by_word)
    assert _tracked() - before < 1000  # not one container per title or word (6,000 were)
    assert linker.exact_titles(["mercury"]) == ("Mercury (planet)", "Mercury (element)")


def test_stemming_new_words_keeps_no_container_per_word():
    """The stemmers are shared by the process: what they remember must not add a tracked object
    per word stemmed (PyStemmer's own cache keeps a list per word)."""
    from deepresearch.text.sentences import stem_words
    from deepresearch.tools.bm25 import BM25Index

    words = [f"word{chr(97 + i % 26)}{i}ing" for i in range(5000)]
    index = BM25Index.build(["a first text about towers", "a second text about bridges"])
    before = _tracked()
    stem_words(words)
    for i in range(0, len(words), 50):
        index.top(" ".join(words[i : i + 50]), 1)
    assert _tracked() - before < 1000  # not one per word (5,000 were)
