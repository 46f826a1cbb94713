"""Row 3: checkpoint bytes against iterations (iterative graph) and sections (deep graph).

Each run gets a fresh SQLite file through `deepresearch.runtime.checkpoint.open_checkpointer` (the
CLI's checkpointer); its size is read after the connection closes (the WAL folded in).
The responder never judges the research complete, so every iteration runs, and every
search returns new sources, so the evidence list grows as it would in a real run.
Linear growth shows as a flat "marginal" column (bytes added per extra iteration/section).
"""

from __future__ import annotations

import os
import sqlite3

from bench.harness import QUESTION, config_for, make_stub, responder, scratch, stream_run, stub_context


def _measure(path) -> dict:
    size = os.path.getsize(path) + (os.path.getsize(f"{path}-wal") if os.path.exists(f"{path}-wal") else 0)
    conn = sqlite3.connect(str(path))
    try:
        n, blob = conn.execute(
            "SELECT count(*), coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints"
        ).fetchone()
        w = conn.execute("SELECT coalesce(sum(length(value)), 0) FROM writes").fetchone()[0]
    finally:
        conn.close()
    return {"file_bytes": size, "checkpoints": n, "checkpoint_blob_bytes": blob, "write_blob_bytes": w}


def _one(kind: str, k: int, stub, max_iterations_deep: int) -> dict:
    from deepresearch.runtime.checkpoint import open_checkpointer

    path = scratch() / f"ckpt-{kind}-{k}.sqlite"
    for p in (path, f"{path}-wal", f"{path}-shm"):
        if os.path.exists(p):
            os.remove(p)
    with open_checkpointer(str(path)) as saver:
        if kind == "iterations":
            from deepresearch.graphs.iterative import build

            stub.respond = responder()
            ctx = stub_context(stub, mode="iterative", max_iterations=k)
            r = stream_run(build(checkpointer=saver), {"question": QUESTION}, config_for("t", max_iterations=k), ctx)
        else:
            from deepresearch.graphs.deep import build

            stub.respond = responder(sections=k)
            ctx = stub_context(
                stub,
                mode="deep",
                max_iterations=max_iterations_deep,
                max_sections=k,
                model_concurrency=max(4, k),
                search_concurrency=max(4, k),
            )
            r = stream_run(
                build(checkpointer=saver),
                {"question": QUESTION},
                config_for("t", max_iterations=max_iterations_deep, max_concurrency=max(2, k)),
                ctx,
            )
    out = _measure(path)
    out.update(
        {
            kind: k,
            "error": r.error,
            "stopped_by": r.final.get("stopped_by"),
            "sources": len(r.final.get("sources", [])),
            "evidence": len(r.final.get("evidence", [])),
        }
    )
    return out


def _marginal(rows: list[dict], key: str) -> None:
    prev = None
    for row in rows:
        row["bytes_per_unit"] = row["file_bytes"] / row[key]
        row["marginal_bytes"] = (
            None if prev is None else (row["file_bytes"] - prev["file_bytes"]) / (row[key] - prev[key])
        )
        prev = row


def verdict(rows: list[dict]) -> str:
    m = [r["marginal_bytes"] for r in rows if r["marginal_bytes"] is not None]
    if len(m) < 2 or m[0] <= 0:
        return "n/a"
    growth = m[-1] / m[0]
    shape = "about linear" if growth < 1.5 else "superlinear" if growth < 3 else "quadratic-like"
    return f"{shape} (marginal bytes x{growth:.1f} from the first to the last step)"


def run(*, iterations=(1, 2, 4, 8), sections=(1, 2, 4, 8), max_iterations_deep: int = 2, log=print) -> dict:
    with make_stub(latency=0.0) as stub:
        it_rows = [_one("iterations", k, stub, max_iterations_deep) for k in iterations]
        sec_rows = [_one("sections", k, stub, max_iterations_deep) for k in sections]
    _marginal(it_rows, "iterations")
    _marginal(sec_rows, "sections")
    out = {
        "iterative": it_rows,
        "deep": sec_rows,
        "deep_max_iterations": max_iterations_deep,
        "iterative_verdict": verdict(it_rows),
        "deep_verdict": verdict(sec_rows),
    }
    log(f"  iterations: {[r['file_bytes'] for r in it_rows]} bytes, {out['iterative_verdict']}")
    log(f"  sections:   {[r['file_bytes'] for r in sec_rows]} bytes, {out['deep_verdict']}")
    return out
