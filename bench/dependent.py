"""Row 7: a dependent outline A, B -> C -> D, its wall time against the critical path.

The deep graph runs a 4-section plan in the dependent style (context `outline_style`):
C depends on A and B, D on C, so the layers are [A, B], [C], [D]. The section phase runs
from the first `section_started` to the last `section_complete` event (timed on arrival).
The critical path is the sum over the layers of the layer's longest section, each section's
length being its own research plus writing time (the seconds of its `section_complete`
event): what the layers would take if each layer waited for the previous one to be
written. The pipelined run writes a layer while the next one is researched, so its wall
time may come in under the critical path; a ratio above 1 is orchestration overhead.

The stub answers every model call after `latency` seconds, and writer calls after
`latency + write_extra` (writing a section is the longer call), so the overlap shows.
"""

from __future__ import annotations

import statistics
import time

from bench.harness import QUESTION, config_for, make_stub, responder, stream_run, stub_context

DEPENDS = [[], [], [0, 1], [2]]
LAYERS = [[0, 1], [2], [3]]


def dep_responder(write_extra: float):
    base = responder(sections=4)

    def respond(kind: str, prompt: str, n: int):
        out = base(kind, prompt, n)
        if kind == "ReportPlan":
            out["sections"] = [{**s, "depends_on": d} for s, d in zip(out["sections"], DEPENDS)]
        elif kind == "text" and "This is one section" in prompt and write_extra:
            time.sleep(write_extra)
        return out

    return respond


def one_run(stub, thread: str, max_iterations: int, section_concurrency: int | None = None) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.graphs.deep import build

    ctx = stub_context(
        stub,
        mode="deep",
        max_iterations=max_iterations,
        max_sections=4,
        outline_style="dependent",
        section_concurrency=section_concurrency,
        model_concurrency=8,
        search_concurrency=8,
    )
    r = stream_run(
        build(checkpointer=InMemorySaver()),
        {"question": QUESTION},
        config_for(thread, max_iterations=max_iterations, max_concurrency=6),
        ctx,
    )
    first = min(r.times("section_started"), default=None)
    last = max(r.times("section_complete"), default=None)
    length = {e["index"]: e["usage"]["seconds"] for _, e in r.events if e.get("type") == "section_complete"}
    layers = next((e.get("layers") for _, e in r.events if e.get("type") == "outline"), None)
    order = [
        (e["type"], e["index"])
        for _, e in r.events
        if e.get("type") in ("section_started", "section_researched", "section_complete")
    ]
    ok = layers == LAYERS and sorted(length) == [0, 1, 2, 3] and first is not None and last is not None and not r.error
    if not ok:
        return {"error": r.error or f"unexpected run: layers {layers}, sections {sorted(length)}"}
    critical = sum(max(length[i] for i in layer) for layer in LAYERS)
    wall = last - first
    overlap = order.index(("section_started", 2)) < order.index(("section_complete", 0))
    return {
        "wall_s": wall,
        "critical_path_s": critical,
        "ratio": wall / critical,
        "serial_s": sum(length.values()),
        "section_s": [length[i] for i in range(4)],
        "writing_overlapped_research": overlap,
        "run_s": r.seconds,
        "error": None,
    }


def run(
    *, latency: float = 0.1, write_extra: float = 0.3, max_iterations: int = 2, repeats: int = 3, log=print
) -> dict:
    rows = []
    with make_stub(dep_responder(write_extra), latency=0.0) as stub:
        one_run(stub, "dep-warm", 1)  # warm-up: imports, the client's connection pool
        stub.latency = latency
        for k in range(repeats):
            row = one_run(stub, f"dep-{k}", max_iterations)
            rows.append(row)
            if row.get("error"):
                log(f"  run {k + 1}: {row['error']}")
            else:
                log(
                    f"  run {k + 1}: wall {row['wall_s']:.2f} s, critical path {row['critical_path_s']:.2f} s, "
                    f"ratio {row['ratio']:.2f}"
                )
    good = [r for r in rows if not r.get("error")]

    def med(key):
        return statistics.median(r[key] for r in good) if good else None

    return {
        "latency_s": latency,
        "write_extra_s": write_extra,
        "max_iterations": max_iterations,
        "layers": LAYERS,
        "rows": rows,
        "wall_s": med("wall_s"),
        "critical_path_s": med("critical_path_s"),
        "ratio": med("ratio"),
        "serial_s": med("serial_s"),
        "overlapped": all(r["writing_overlapped_research"] for r in good) if good else None,
    }
