"""Lean checkpoints: state keeps ids and snippets, full texts live in the text store.

SqliteSaver stores every channel's whole value in every checkpoint, so what state carries
decides how the file grows. These tests run the graphs in-process on a SQLite checkpoint
file (fake chat model at the chat-model boundary, the offline encyclopedia for search) and
check that
- no retrieved document's full text is in the database, only its snippet;
- the biggest checkpoint grows by a snippet-sized amount per source, not a document;
- the stored bytes grow about linearly with iterations and with sections.
Measured (stored bytes = checkpoint blobs + their metadata + pending writes; file = the
SQLite file after a WAL checkpoint; sections run with max_iterations=2), with `evidence`
a DeltaChannel (each checkpoint stores only a step's new sources):
    iterative, iterations 2 / 4 / 8:  40 /  64 / 113 KB stored,  82 / 131 / 217 KB file
    deep, sections 2 / 4 / 8:        211 / 344 / 577 KB stored, 266 / 401 / 647 KB file
x1.6 and x1.8 per doubling of iterations, x1.6 and x1.7 per doubling of sections. A deep
section's loop saves its state only when it ends (issue 31): with a checkpoint after each of its
steps the deep run stored 297 / 496 / 905 KB. Before
the DeltaChannel every checkpoint repeated the whole evidence list: 58 / 127 / 328 KB for
2 / 4 / 8 iterations (x2.2, x2.6 per doubling), 195 / 357 / 678 KB for 2 / 4 / 8 sections.
About 15% of the bytes is checkpoint metadata: the run's settings (`dr_context`, used
by `deepresearch resume`) ride along in every checkpoint's metadata.
"""

from __future__ import annotations

import re
import sqlite3
import uuid

import pytest

from deepresearch.config import Context
from deepresearch.runtime.checkpoint import open_checkpointer
from deepresearch.runtime.runner import run_config
from deepresearch.store import TEXTS
from deepresearch.text.urls import SNIPPET_CHARS, source_key
from tests.deep_helpers import deep_responder

QUERIES = [
    "Eiffel Tower",
    "Gustave Eiffel",
    "Paris",
    "World's fair",
    "Wrought iron",
    "Statue of Liberty",
    "Champ de Mars",
    "France",
    "Seine",
    "Louvre",
    "Notre-Dame de Paris",
    "Arc de Triomphe",
    "Versailles",
    "Napoleon",
    "French Revolution",
    "Steel",
    "Bridge",
    "Tower",
    "Architecture",
    "Engineering",
]


def responder(sections: int = 1):
    """The deep responder, never judging the research complete (every iteration runs) and
    asking for a new query on every call, with `sections` sections."""
    plan = [(f"Part {i + 1}", f"What about the Eiffel Tower and {QUERIES[i]}?") for i in range(sections)]
    return deep_responder(plan, complete=False, queries=lambda n: QUERIES[n % len(QUERIES)])


def measure(fake_model, tmp_path, *, mode: str, iterations: int, sections: int = 1) -> dict:
    from deepresearch.runtime.runner import build_graph, drive

    spec, _ = fake_model(responder(sections))
    db = tmp_path / f"{mode}-{iterations}-{sections}-{uuid.uuid4().hex[:6]}.sqlite"
    ctx = Context(model=spec, max_iterations=iterations, max_sections=sections, max_tokens=10**7, results_per_query=3)
    with open_checkpointer(str(db)) as saver:
        graph = build_graph(mode, saver)
        config = run_config("t", ctx, mode, "The Eiffel Tower")
        final = drive(graph, {"question": "The Eiffel Tower"}, config, ctx)
        assert final.get("report"), final
    conn = sqlite3.connect(db)
    try:
        ck = conn.execute(
            "SELECT count(*), sum(length(checkpoint)) + sum(length(metadata)), max(length(checkpoint)) FROM checkpoints"
        ).fetchone()
        namespaces = dict(conn.execute("SELECT checkpoint_ns, count(*) FROM checkpoints GROUP BY checkpoint_ns"))
        wr = conn.execute("SELECT coalesce(sum(length(value)), 0) FROM writes").fetchone()
        keys = set()
        for (blob,) in conn.execute("SELECT checkpoint FROM checkpoints UNION ALL SELECT value FROM writes"):
            keys |= set(re.findall(rb"s[0-9a-f]{12}", blob or b""))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    sections = len(re.findall(r"^## Part \d+$", final["report"], re.M))
    return {
        "checkpoints": ck[0],
        "namespaces": namespaces,
        "sections": sections,
        "bytes": ck[1] + wr[0],
        "max_checkpoint": ck[2],
        "file": db.stat().st_size,
        "source_keys": {k.decode() for k in keys},
        "db": db,
        "report": final["report"],
    }


@pytest.fixture(scope="module")
def _cache():
    return {}


@pytest.fixture
def measured(fake_model, tmp_path, _cache):
    def get(mode, iterations, sections=1):
        key = (mode, iterations, sections)
        if key not in _cache:
            _cache[key] = measure(fake_model, tmp_path, mode=mode, iterations=iterations, sections=sections)
        return _cache[key]

    return get


def test_checkpoints_hold_snippets_not_full_texts(fake_model, tmp_path):
    # long documents (the encyclopedia's summaries are short enough for a report to quote most of one)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("tower", "bridge", "engineer"):
        sentences = [
            f"The {name} record number {i} notes that the Eiffel Tower stood in Paris in year {1800 + i}."
            for i in range(80)
        ]
        (docs / f"{name}.md").write_text("# " + name + "\n\n" + " ".join(sentences), encoding="utf-8")
    from deepresearch.runtime.runner import build_graph, drive

    spec, _ = fake_model(responder(1))
    db = tmp_path / "snippets.sqlite"
    ctx = Context(model=spec, max_iterations=2, search=f"docs:{docs}", max_tokens=10**7)
    with open_checkpointer(str(db)) as saver:
        graph = build_graph("iterative", saver)
        final = drive(
            graph, {"question": "The Eiffel Tower"}, run_config("t", ctx, "iterative", "The Eiffel Tower"), ctx
        )
    conn = sqlite3.connect(db)
    try:
        blobs = [b for (b,) in conn.execute("SELECT checkpoint FROM checkpoints UNION ALL SELECT value FROM writes")]
    finally:
        conn.close()
    everything = b"\n".join(b for b in blobs if b)
    checked = 0
    for s in final["evidence"]:  # every source read, cited or not
        flat = " ".join(TEXTS.get(source_key(s["url"])).split())
        windows = [flat[i : i + 60].encode() for i in range(SNIPPET_CHARS + 20, len(flat) - 60, 60)]
        assert flat[:80].encode() in everything  # the snippet is there (so the search below is meaningful)
        found = sum(w in everything for w in windows)
        assert len(windows) >= 10 and found <= len(windows) // 2, (
            f"the full text of {s['title']} is in the checkpoint database"
        )
        checked += 1
    assert checked >= 2


def test_bytes_grow_about_linearly_with_iterations(measured):
    m = {n: measured("iterative", n) for n in (2, 4, 8)}
    sources = {n: len(m[n]["source_keys"]) for n in m}
    print({n: (v["bytes"], v["file"], v["checkpoints"], v["max_checkpoint"], sources[n]) for n, v in m.items()})
    assert sources[2] < sources[4] < sources[8]  # every iteration found new sources
    # doubling the work about doubles the bytes (a quadratic store would give ~4x)
    assert m[4]["bytes"] / m[2]["bytes"] < 2.2
    assert m[8]["bytes"] / m[4]["bytes"] < 2.2
    # the biggest checkpoint grows by a snippet-sized amount per source, not a document
    per_source = (m[8]["max_checkpoint"] - m[2]["max_checkpoint"]) / (sources[8] - sources[2])
    assert per_source < SNIPPET_CHARS + 500, per_source


def test_bytes_grow_about_linearly_with_sections(measured):
    m = {n: measured("deep", 2, n) for n in (2, 4, 8)}
    print({n: (v["bytes"], v["file"], v["checkpoints"], v["max_checkpoint"]) for n, v in m.items()})
    assert m[4]["bytes"] / m[2]["bytes"] < 2.4
    assert m[8]["bytes"] / m[4]["bytes"] < 2.4
    # a section's loop saves nothing while it runs, only its final state (issue 31): one
    # checkpoint per section besides the parent's steps, as many for 8 sections as for 2
    assert m[8]["sections"] == 8 and m[4]["sections"] == 4  # the outline kept every section
    for n in (2, 4, 8):
        ns = dict(m[n]["namespaces"])
        assert ns.pop("") == m[2]["namespaces"][""]
        assert len(ns) == n and set(ns.values()) == {1}, m[n]["namespaces"]
