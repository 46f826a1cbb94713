"""Row 9: the research's own CPU per source, on the offline encyclopedia.

eval/questions.json's hand-written questions (the iterative and answer sets on the iterative graph,
the deep set on the deep graph) run on the embedded defaults
(search `wiki`, the in-memory checkpointer and store `research()` uses) with a fake embedded
model that answers every call at once with nothing (bench.reports.Deterministic, the same as the
determinism check): what is left is the pipeline's own work, reading the question, searching the
BM25 index, linking concepts, judging coverage, ranking and grounding sentences, checking
citations, and LangGraph's steps and checkpoints. Two figures per source read (the run's
`evidence`):

  nodes     CPU time inside the graph's nodes (each node's thread CPU from its start to its end,
            a node run inside another node's thread counted once): the research work
  process   the whole process's CPU time (LangGraph's steps and checkpoints, the stream loop)

The set runs once to warm up (the index, the caches of a first run), then `repeats` times; the
median repeat's figures are reported.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
import uuid
from pathlib import Path

from langchain_core.callbacks import BaseCallbackHandler

ROOT = Path(__file__).resolve().parent.parent


class NodeCPU(BaseCallbackHandler):
    """Thread CPU seconds spent inside each graph node (by node name)."""

    def __init__(self):
        self.by_node: dict[str, float] = {}
        self._open: dict = {}
        self._depth = threading.local()
        self._lock = threading.Lock()

    def on_chain_start(self, serialized, inputs, *, run_id, metadata=None, **kwargs):
        node = (metadata or {}).get("langgraph_node")
        if not node or kwargs.get("name") != node:
            return
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        if depth == 0:
            self._open[run_id] = (node, threading.get_ident(), time.thread_time())

    def _close(self, run_id):
        opened = self._open.pop(run_id, None)
        if opened is None:
            if getattr(self._depth, "n", 0) > 1:
                self._depth.n -= 1
            return
        self._depth.n = max(0, getattr(self._depth, "n", 1) - 1)
        node, ident, started = opened
        if ident != threading.get_ident():
            return
        with self._lock:
            self.by_node[node] = self.by_node.get(node, 0.0) + time.thread_time() - started

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        self._close(run_id)

    def on_chain_error(self, error, *, run_id, **kwargs):
        self._close(run_id)


def questions() -> list[tuple[str, str]]:
    data = json.loads((ROOT / "eval" / "questions.json").read_text(encoding="utf-8"))
    return [("iterative", x["q"]) for x in data["iterative"] + data["answers"]] + [
        ("deep", x["q"]) for x in data["deep"]
    ]


def one_pass(items) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from deepresearch.config import Context
    from deepresearch.runtime.runner import build_graph, drive, run_config

    ctx = Context(model="local", search="wiki", max_sections=3)
    graphs = {}
    handler = NodeCPU()
    sources = 0
    c0, w0 = time.process_time(), time.perf_counter()
    for mode, q in items:
        if mode not in graphs:  # compiled once a pass, as a server does once
            graphs[mode] = build_graph(mode, InMemorySaver(), InMemoryStore())
        config = run_config(uuid.uuid4().hex, ctx, mode, q)
        config["callbacks"] = [handler]
        final = drive(graphs[mode], {"question": q}, config, ctx)
        sources += len(final.get("evidence") or [])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    nodes = sum(handler.by_node.values())
    return {
        "questions": len(items),
        "sources": sources,
        "process_cpu_s": cpu,
        "wall_s": wall,
        "nodes_cpu_s": nodes,
        "by_node_s": dict(sorted(handler.by_node.items(), key=lambda kv: -kv[1])),
        "process_ms_per_source": cpu / max(1, sources) * 1000,
        "nodes_ms_per_source": nodes / max(1, sources) * 1000,
    }


def run(*, repeats: int = 5, log=print) -> dict:
    from bench.reports import Deterministic
    from deepresearch.llm.models import register_model, unregister_model

    items = questions()
    register_model("local", Deterministic(model_path="/nonexistent"))
    try:
        one_pass(items)  # warm-up: the index load, first-run caches
        passes = []
        for i in range(repeats):
            passes.append(one_pass(items))
            log(
                f"  pass {i + 1}: {passes[-1]['nodes_ms_per_source']:.2f} ms per source in the nodes, "
                f"{passes[-1]['process_ms_per_source']:.2f} in the process ({passes[-1]['sources']} sources)"
            )
    finally:
        unregister_model("local")
    mid = sorted(passes, key=lambda p: p["nodes_ms_per_source"])[len(passes) // 2]
    return {
        "repeats": repeats,
        **mid,
        "nodes_ms_per_source_all": [round(p["nodes_ms_per_source"], 3) for p in passes],
        "process_ms_per_source_all": [round(p["process_ms_per_source"], 3) for p in passes],
        "median_nodes_ms": statistics.median(p["nodes_ms_per_source"] for p in passes),
    }


def lines(r: dict) -> list[str]:
    """Row 9 as printed by `python -m bench`."""
    from bench.harness import table

    rows = [
        [node, f"{s * 1000 / max(1, r['sources']):.3f}", f"{s * 1000:.1f}"]
        for node, s in list(r["by_node_s"].items())[:8]
    ]
    return [
        f"9. Research CPU per source, embedded defaults (search wiki, a fake embedded model answering at once): "
        f"{r['questions']} hand-written questions, {r['sources']} sources read; median of {r['repeats']} passes",
        f"   in the nodes {r['nodes_ms_per_source']:.2f} ms per source (passes: "
        f"{', '.join(f'{x:.2f}' for x in r['nodes_ms_per_source_all'])}); the whole process "
        f"{r['process_ms_per_source']:.2f} ms per source (LangGraph's steps and checkpoints included); "
        f"wall {r['wall_s']:.2f} s a pass",
        table(["node", "ms per source", "ms a pass"], rows),
    ]


def summary_rows(r: dict) -> list[list[str]]:
    return [
        [
            "research CPU per source (nodes; whole process)",
            f"{r['nodes_ms_per_source']:.2f} ms; {r['process_ms_per_source']:.2f} ms ({r['sources']} sources)",
        ]
    ]
