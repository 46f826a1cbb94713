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
