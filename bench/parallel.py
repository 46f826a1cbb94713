"""Row 1: parallel efficiency of the deep graph's section phase.

The section phase runs from the first `section_started` event to the last
`section_complete` event (custom stream, timed on arrival). With a fixed latency per
model call, efficiency for N sections is
    T(section_concurrency=1) / (N x T(section_concurrency=N))
Both runs use the config's `max_concurrency = N + 2` (a pool with room for every section
and LangGraph's stream waiter) and the same pacers (`model_concurrency` and
`search_concurrency` raised to at least N), so the graph's own per-run semaphore
(`Context.section_concurrency`) is the only difference between them. "at once" is the
most sections seen between their started and complete events at the same moment.

'default pool' is the parallel run with neither limit: LangGraph's own thread pool
(what the CLI uses without --concurrency); 'zero-latency s' is the parallel run with no
latency, i.e. the phase's CPU time. 'ceiling' = T(section_concurrency=1) / (N x that zero-latency
phase), capped at 1: the efficiency the phase would reach if all its Python work fitted perfectly
between the model calls. Latency adds waiting, not work, so the parallel phase cannot be much
shorter than the zero-latency one: when the ceiling is below a target, no scheduling of this
machine's work can meet it, only less CPU per section (or a faster machine) can.
'CPU use' is the process's CPU time within the parallel phase over its wall time: at 16 sections and
0.2 s per call it is about 75% here, the phase holding the zero-latency phase's CPU plus about two
latencies in which every section waits on a call (the first round, and the last section's last call).
"""

from __future__ import annotations

import os

from bench.harness import QUESTION, Run, config_for, make_stub, responder, stream_run, stub_context
from bench.stub_process import StubProcess


def deep_run(
    stub,
    sections: int,
    *,
    section_concurrency: int | None,
    max_concurrency: int | None,
    max_iterations: int,
    thread: str,
) -> Run:
    """One deep run with exactly `sections` sections (the stub's planner returns that many)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from deepresearch.graphs.deep import build

    stub.respond = responder(sections=sections)
    ctx = stub_context(
        stub,
        mode="deep",
        max_iterations=max_iterations,
        max_sections=sections,
        section_concurrency=section_concurrency,
        model_concurrency=max(8, sections),
        search_concurrency=max(4, sections),
    )
    cfg = config_for(thread, max_iterations=max_iterations, max_concurrency=max_concurrency)
    # a store as every run of the product has one (the CLI's and research()'s in memory, a server's):
    # the texts are kept there, not in the local file store of a graph compiled without one
    return stream_run(build(checkpointer=InMemorySaver(), store=InMemoryStore()), {"question": QUESTION}, cfg, ctx)


def phase(run: Run) -> dict:
    """The section phase: first `section_started` to last `section_complete` event."""
    marks = sorted(
        (t, e.get("type") == "section_started", c)
        for (t, e), c in zip(run.events, run.cpu)
        if e.get("type") in ("section_started", "section_complete")
    )
    started = [t for t, s, _ in marks if s]
    done = [t for t, s, _ in marks if not s]
    failed = sum(1 for _, e in run.events if e.get("type") == "section_complete" and e.get("status") == "failed")
    at_once = running = 0
    for _, is_start, _ in marks:  # a start and a complete at the same instant: the complete first
        running += 1 if is_start else -1
        at_once = max(at_once, running)
    if not started or not done:
        return {"seconds": None, "sections_run": len(started), "at_once": at_once, "failed": failed}
    seconds = max(done) - min(started)
    cpu = max(c for _, s, c in marks if not s) - min(c for _, s, c in marks if s)
    return {
        "seconds": seconds,
        "sections_run": len(started),
        "at_once": at_once,
        "failed": failed,
        "before": min(started),
        "after": run.seconds - max(done),
        "total": run.seconds,
        "cpu_share": cpu / seconds if seconds else None,
    }


def run(
    *,
    sections_list=(1, 2, 4, 8, 16),
    latency: float = 0.2,
    max_iterations: int = 2,
    default_pool: bool = True,
    slow: tuple[int, float] | None = None,
    stub_process: bool = True,
    log=print,
) -> dict:
    """`slow` = (sections, latency): also the efficiency at that many sections with a longer
    latency per call (closer to a real provider's). `stub_process`: the stub in a process of
    its own (bench.stub_process), as a provider is; False: in this one, as before 2026-11-26."""
    rows = []
    with StubProcess(latency=0.0) if stub_process else make_stub(latency=0.0) as stub:
        # warm-up: imports, the client's connection pool, the pacers
        deep_run(stub, 1, section_concurrency=1, max_concurrency=3, max_iterations=max_iterations, thread="warm")
        stub.latency = latency
        for n in sections_list:
            kw = dict(max_iterations=max_iterations)
            calls0 = len(stub.requests)
            stub.peak = 0
            serial = deep_run(stub, n, section_concurrency=1, max_concurrency=n + 2, thread=f"s{n}", **kw)
            calls = sum(1 for r in stub.requests[calls0:] if "/chat/" in r["path"])
            serial_peak, stub.peak = stub.peak, 0
            par = deep_run(stub, n, section_concurrency=n, max_concurrency=n + 2, thread=f"p{n}", **kw)
            peak = stub.peak
            dflt = (
                deep_run(stub, n, section_concurrency=None, max_concurrency=None, thread=f"d{n}", **kw)
                if default_pool
                else None
            )
            stub.latency = 0.0
            zero = deep_run(stub, n, section_concurrency=n, max_concurrency=n + 2, thread=f"z{n}", **kw)
            stub.latency = latency
            s, p, z = phase(serial), phase(par), phase(zero)
            d = phase(dflt) if dflt else {"seconds": None, "sections_run": None, "at_once": None}

            def eff(x, s=s, n=n):
                return (s["seconds"] / (n * x["seconds"])) if s["seconds"] and x["seconds"] else None

            row = {
                "sections": n,
                "serial_s": s["seconds"],
                "parallel_s": p["seconds"],
                "efficiency": eff(p),
                "default_pool_s": d["seconds"],
                "default_pool_efficiency": eff(d),
                "zero_latency_s": z["seconds"],
                "ceiling": min(1.0, eff(z)) if eff(z) is not None else None,
                "model_calls": calls,
                "peak_in_flight": peak,
                "serial_peak_in_flight": serial_peak,
                "at_once": [s["at_once"], p["at_once"], d["at_once"], z["at_once"]],
                "sections_run": [s["sections_run"], p["sections_run"], d["sections_run"], z["sections_run"]],
                "failed_sections": [s.get("failed"), p.get("failed"), d.get("failed"), z.get("failed")],
                "parallel_cpu_share": p.get("cpu_share"),
                "zero_latency_cpu_share": z.get("cpu_share"),
                "parallel_before_s": p.get("before"),
                "parallel_after_s": p.get("after"),
                "parallel_total_s": p.get("total"),
                "errors": [x.error for x in (serial, par, dflt, zero) if x and x.error],
            }
            rows.append(row)
            log(
                f"  {n:>2} sections: serial {s['seconds'] or 0:.2f} s, parallel {p['seconds'] or 0:.2f} s, "
                f"efficiency {row['efficiency'] or float('nan'):.2f} (ceiling {row['ceiling'] or float('nan'):.2f}), "
                f"CPU use {row['parallel_cpu_share'] or float('nan'):.0%}, "
                f"at once {row['at_once']}"
            )
        slow_row = None
        if slow:
            n, stub.latency = slow
            kw = dict(max_iterations=max_iterations)
            s = phase(deep_run(stub, n, section_concurrency=1, max_concurrency=n + 2, thread=f"slow-s{n}", **kw))
            p = phase(deep_run(stub, n, section_concurrency=n, max_concurrency=n + 2, thread=f"slow-p{n}", **kw))
            slow_row = {
                "sections": n,
                "latency_s": slow[1],
                "serial_s": s["seconds"],
                "parallel_s": p["seconds"],
                "efficiency": s["seconds"] / (n * p["seconds"]) if s["seconds"] and p["seconds"] else None,
                "at_once": [s["at_once"], p["at_once"]],
            }
            log(f"  {n:>2} sections at {slow[1]} s per call: efficiency {slow_row['efficiency'] or float('nan'):.2f}")
    return {
        "latency_s": latency,
        "max_iterations": max_iterations,
        "rows": rows,
        "slow": slow_row,
        "stub": "own process" if stub_process else "in process",
        "default_pool_workers": min(32, (os.cpu_count() or 1) + 4),
    }
