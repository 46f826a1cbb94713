"""A node reads its evidence's texts from the run's store in one request, and a round of
searches writes its texts in one: the same texts as one request per source (a served run's
store answers on the server's event loop, which every run shares)."""

from __future__ import annotations

from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore

from deepresearch.store import TEXTS_NAMESPACE, full_text, put_text, put_texts, reads_texts_once


class CountingStore(InMemoryStore):
    """Counts the requests: each get, and each batch (with how many operations)."""

    def __init__(self):
        super().__init__()
        self.gets, self.batches = 0, []

    def get(self, *args, **kwargs):
        self.gets += 1
        return super().get(*args, **kwargs)

    def batch(self, ops):
        ops = list(ops)
        self.batches.append(len(ops))
        return super().batch(ops)


class S(TypedDict, total=False):
    evidence: list
    seen: list


def one_node_graph(node, store):
    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_edge("node", END)
    return g.compile(store=store)


def test_the_first_text_a_node_reads_brings_its_evidence_in_one_request():
    store = CountingStore()
    sources = [{"key": f"s{i}", "snippet": f"snippet {i}", "text_ns": "t:a"} for i in range(5)]
    for s in sources[:4]:  # the fifth's text is gone: its snippet stands in
        store.put((*TEXTS_NAMESPACE, "t:a"), s["key"], {"text": f"text {s['key']}"})
    # a source naming another run's label (a copied thread's, or written by a client) is checked
    # against its snippet: a run reads texts under its own label alone (a decoy there is not read)
    sources.append({"key": "s7", "snippet": "copied snippet", "text_ns": "t:c"})
    store.put((*TEXTS_NAMESPACE, "t:c"), "s7", {"text": "copied text"})
    store.put((*TEXTS_NAMESPACE, "t:a"), "s7", {"text": "decoy"})
    other = {"key": "s9", "snippet": "other snippet", "text_ns": "t:b"}  # not in the evidence
    store.put((*TEXTS_NAMESPACE, "t:b"), "s9", {"text": "text of another run"})
    store.gets, store.batches = 0, []

    @reads_texts_once
    def node(state: S) -> S:
        seen = [full_text(s) for s in reversed(state["evidence"])] + [full_text(other), full_text(other)]
        return {"seen": seen + [store.gets, store.batches]}

    out = one_node_graph(node, store).invoke({"evidence": sources}, {"configurable": {"thread_id": "a"}})
    assert out["seen"][:-2] == [
        "copied snippet",
        "snippet 4",
        "text s3",
        "text s2",
        "text s1",
        "text s0",
        "other snippet",
        "other snippet",
    ]
    # one batch for the five evidence texts under the run's own label; no request for the others
    assert out["seen"][-2:] == [0, [5]]


def test_a_node_that_reads_no_text_asks_for_none():
    store = CountingStore()
    sources = [{"key": "s1", "snippet": "snippet", "text_ns": "t:a"}]

    @reads_texts_once
    def node(state: S) -> S:
        return {"seen": [store.gets, store.batches]}

    assert one_node_graph(node, store).invoke({"evidence": sources})["seen"] == [0, []]


def test_a_round_of_texts_is_written_in_one_request_where_put_text_writes_them():
    store = CountingStore()
    items = [("s1", "one", None), ("s2", "two", {"year": 1889}), ("s3", "three", None)]

    def node(state: S) -> S:
        return {"seen": [put_texts(items), put_text("s4", "four")]}

    out = one_node_graph(node, store).invoke({}, {"configurable": {"thread_id": "th.1"}})
    assert out["seen"] == [[{"text_ns": "t:th%2E1"}] * 3, {"text_ns": "t:th%2E1"}]
    assert store.batches == [3, 1]  # the round's three texts at once, then put_text's own
    for key, text, meta in items + [("s4", "four", None)]:
        value = store.get((*TEXTS_NAMESPACE, "t:th%2E1"), key).value
        assert value == {"text": text, **({"meta": meta} if meta else {})}


class ReadRecordingStore(InMemoryStore):
    """Records each text read with the task (node and checkpoint namespace) that asked."""

    def __init__(self):
        super().__init__()
        self.reads = []

    def batch(self, ops):
        from langgraph.config import get_config
        from langgraph.store.base import GetOp

        ops = list(ops)
        try:
            cfg = get_config()
            task = (cfg["metadata"].get("langgraph_node"), cfg["configurable"].get("checkpoint_ns"))
        except RuntimeError:  # outside a node
            task = (None, None)
        self.reads += [
            (task, op.namespace, op.key)
            for op in ops
            if isinstance(op, GetOp) and op.namespace[: len(TEXTS_NAMESPACE)] == TEXTS_NAMESPACE
        ]
        return super().batch(ops)


def test_no_node_of_a_deep_run_reads_a_text_twice(fake_model):
    """Every node of a deep run that reads its sources' texts (the sections' writers, the
    synthesizer, the tracer, ...) reads each text from the run's store once:
    on a server each read is a trip through the event loop every run shares."""
    import uuid
    from collections import Counter

    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.config import Context
    from deepresearch.graphs.deep import build
    from tests.deep_helpers import deep_responder, run_deep

    store = ReadRecordingStore()
    spec, _ = fake_model(deep_responder(3))
    graph = build(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}
    final, _, _ = run_deep(
        graph,
        Context(model=spec, writer="single", max_iterations=2),
        config,
        {"question": "Give an overview of the Eiffel Tower: its design, construction and purpose"},
    )
    assert [s["status"] for s in final["sections"]] == ["done"] * 3
    readers = {task[0] for task, _, _ in store.reads}
    assert {"writer", "synthesizer", "source_tracer"} <= readers, readers
    twice = [(task[0], key) for (task, _, key), n in Counter(store.reads).items() if n > 1]
    assert twice == []
