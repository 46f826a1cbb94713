"""Row 1: parallel efficiency of the deep graph's section phase.

The section phase runs from the first `section_started` event to the last
`section_complete` event (custom stream, timed on arrival). Efficiency for N sections is
    T(concurrency 1) / (N x T(concurrency N))
with a fixed latency per model call. `model_concurrency` and `search_concurrency` (the
process-wide pacers) are raised to N so sections do not wait on each other there.

Concurrency N is the config's `max_concurrency=N`. Concurrency 1 would be
`max_concurrency=1`, but on LangGraph 1.2 a sync stream with the custom mode parks a
"waiter" future in the one-worker pool and never finishes, and the deep graph's
`section_research` streams every section's subgraph that way (inheriting the parent's
max_concurrency). A subprocess probe therefore checks whether the deep graph finishes
with `max_concurrency=1` when the caller streams without the custom mode. If it does, the
serial run is that (its phase timed from the fan-out update to the last section update);
if it hangs, the serial baseline is the parallel configuration with every model and search
call serialized by the pacers (`model_concurrency=1`, `search_concurrency=1`): the same
work done one call at a time. The table says which baseline was used.
"""

from __future__ import annotations

import select
import subprocess
import sys
import time

from bench.harness import ROOT, QUESTION, Run, config_for, make_stub, plan, responder, stream_run, stub_context

PROBE_TIMEOUT = 6.0  # the probe's 2-section run at zero latency takes a fraction of a second
IMPORT_TIMEOUT = 60.0


def schema_cap() -> int | None:
    """The most sections the planner's structured output may hold (None: no cap)."""
    from deepresearch.state.deep import ReportPlan

    for meta in ReportPlan.model_fields["sections"].metadata:
        if getattr(meta, "max_length", None):
            return meta.max_length
    return None


def deep_run(stub, sections: int, *, max_concurrency: int | None, model_concurrency: int,
             search_concurrency: int, max_iterations: int, thread: str, custom: bool = True) -> tuple[Run, bool]:
    """One deep run with exactly `sections` sections; returns (run, outline_injected)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from deepresearch.graphs.deep import build

    cap = schema_cap()
    inject = cap is not None and sections > cap  # the planner cannot return more than `cap`
    stub.respond = responder(sections=sections)
    ctx = stub_context(stub, mode="deep", max_iterations=max_iterations, max_sections=sections,
                       model_concurrency=model_concurrency, search_concurrency=search_concurrency,
                       outline_review=inject)
    graph = build(checkpointer=InMemorySaver())
    answers = []
    if inject:
        def put_plan(graph, config):  # the person's outline, set as the planner's output
            graph.update_state(config, {"plan": plan(sections)}, as_node="planner")
            return None

        answers = [put_plan, lambda graph, config: Command(resume={"action": "accept"})]
    cfg = config_for(thread, max_iterations=max_iterations, max_concurrency=max_concurrency)
    return stream_run(graph, {"question": QUESTION}, cfg, ctx, answers=answers, custom=custom), inject


def phase(run: Run) -> dict:
    """The section phase: first `section_started` to last `section_complete` event; for a run
    streamed without the custom mode, the fan-out (`outline_review`'s last update) to the
    last `section_research` update."""
    started, done = run.times("section_started"), run.times("section_complete")
    indices = {e.get("index") for _, e in run.events if e.get("type") == "section_started"}
    failed = sum(1 for _, e in run.events if e.get("type") == "section_complete" and e.get("status") == "failed")
    updates = [(t, e["node"]) for t, e in run.events if e.get("type") == "update"]
    if not started and updates:
        done = [t for t, n in updates if n == "section_research"]
        started = [t for t, n in updates if n == "outline_review" and (not done or t <= min(done))][-1:]
        indices = set(range(len(done)))
        failed = sum(1 for s in run.final.get("sections", []) if s.get("status") == "failed")
    if not started or not done:
        return {"seconds": None, "sections_run": len(indices)}
    return {"seconds": max(done) - min(started), "sections_run": len(indices), "before": min(started),
            "after": run.seconds - max(done), "total": run.seconds, "failed": failed}


class Probe:
    """Does `max_concurrency=1` finish? Asked in a subprocess (a deadlocked graph cannot be
    stopped in-process), started early so that its imports overlap other work."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.probe"], cwd=str(ROOT), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.started = time.monotonic()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()

    def result(self) -> dict:
        running_at = None
        lines: list[str] = []
        while True:
            now = time.monotonic()
            deadline = (running_at + PROBE_TIMEOUT) if running_at else (self.started + IMPORT_TIMEOUT)
            if now >= deadline:
                self.proc.kill()
                self.proc.communicate()
                if running_at is None:
                    return {"ok": False, "why": "the probe did not start in time; serial baseline = calls "
                                                "serialized by the pacers"}
                return {"ok": False, "why": f"the deep graph with max_concurrency=1 hangs (no end after "
                                            f"{PROBE_TIMEOUT:.0f} s: deadlock in section_research); serial baseline = "
                                            "model and search calls serialized by the pacers (model_concurrency=1)"}
            ready, _, _ = select.select([self.proc.stdout], [], [], min(0.5, deadline - now))
            if not ready:
                continue
            line = self.proc.stdout.readline()
            if not line:  # the probe ended
                self.proc.wait()
                err = self.proc.stderr.read().strip().splitlines()[-1:] or ["no output"]
                if self.proc.returncode == 0 and "ok" in lines:
                    return {"ok": True, "why": "max_concurrency=1 (streamed with updates, not custom)"}
                return {"ok": False, "why": f"probe failed ({err[0][:200]}); serial baseline = calls serialized "
                                            "by the pacers"}
            lines.append(line.strip())
            if line.strip() == "running":
                running_at = time.monotonic()


def run(*, sections_list=(1, 2, 4, 8, 16), latency: float = 0.2, max_iterations: int = 2, probe: Probe | None = None,
        default_pool: bool = True, log=print) -> dict:
    probe_proc = probe or Probe()
    rows = []
    with make_stub(latency=0.0) as stub:
        # warm-up: imports, the client's connection pool, the pacers
        deep_run(stub, 1, max_concurrency=2, model_concurrency=1, search_concurrency=1,
                 max_iterations=max_iterations, thread="warm")
        probe = probe_proc.result()
        log(f"  serial baseline: {probe['why']}")
        stub.latency = latency
        for n in sections_list:
            if probe["ok"]:  # (streamed without the custom mode, which hangs with max_concurrency=1)
                serial_kw = dict(max_concurrency=1, model_concurrency=max(4, n), search_concurrency=max(4, n),
                                 custom=False)
            else:
                serial_kw = dict(max_concurrency=max(2, n), model_concurrency=1, search_concurrency=1)
            wide = dict(model_concurrency=max(4, n), search_concurrency=max(4, n), max_iterations=max_iterations)
            calls0 = len(stub.requests)
            serial, injected = deep_run(stub, n, max_iterations=max_iterations, thread=f"s{n}", **serial_kw)
            calls = sum(1 for r in stub.requests[calls0:] if "/chat/" in r["path"])
            stub.peak = 0
            par, _ = deep_run(stub, n, max_concurrency=max(2, n), thread=f"p{n}", **wide)
            peak = stub.peak
            # LangGraph's default pool (what the CLI uses without --concurrency)
            dflt = deep_run(stub, n, max_concurrency=None, thread=f"d{n}", **wide)[0] if default_pool else None
            # the same parallel run with no latency: the CPU time of the phase
            stub.latency = 0.0
            zero, _ = deep_run(stub, n, max_concurrency=max(2, n), thread=f"z{n}", **wide)
            stub.latency = latency
            s, p, z = phase(serial), phase(par), phase(zero)
            d = phase(dflt) if dflt else {"seconds": None, "sections_run": n}

            def eff(x):
                return (s["seconds"] / (n * x["seconds"])) if s["seconds"] and x["seconds"] else None

            row = {"sections": n, "serial_s": s["seconds"], "parallel_s": p["seconds"], "efficiency": eff(p),
                   "default_pool_s": d["seconds"], "default_pool_efficiency": eff(d), "zero_latency_s": z["seconds"],
                   "model_calls": calls, "peak_in_flight": peak,
                   "sections_run": [s["sections_run"], p["sections_run"], d["sections_run"], z["sections_run"]],
                   "failed_sections": [s.get("failed"), p.get("failed"), d.get("failed"), z.get("failed")],
                   "outline_injected": injected, "parallel_before_s": p.get("before"),
                   "parallel_after_s": p.get("after"), "parallel_total_s": p.get("total"),
                   "errors": [x.error for x in (serial, par, dflt, zero) if x and x.error]}
            rows.append(row)
            log(f"  {n:>2} sections: serial {s['seconds'] or 0:.2f} s, parallel {p['seconds'] or 0:.2f} s, "
                f"efficiency {row['efficiency'] or float('nan'):.2f}")
    import os

    return {"latency_s": latency, "max_iterations": max_iterations, "serial_baseline": probe, "rows": rows,
            "schema_cap": schema_cap(), "default_pool_workers": min(32, (os.cpu_count() or 1) + 4)}
