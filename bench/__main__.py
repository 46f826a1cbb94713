"""`python -m bench` (or `make bench`): run the benchmark suite, print a table, write JSON.

    python -m bench                   the full suite (a few minutes on 2 cores)
    python -m bench --quick           a short run (well under a minute; no local model)
    python -m bench --only parallel,faults --out /tmp/r.json

Everything but the local-model row runs against tests/stub_openai.StubOpenAI on
127.0.0.1 through the real ChatOpenAI path. Figures are wall-clock times on whatever
machine runs this: compare the ratios measured within one run, not absolute times
across machines. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import platform
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from bench.harness import fmt_s, setup_env, table
from bench.overhead import _spread

ROWS = (
    "parallel",
    "overhead",
    "checkpoint",
    "prompts",
    "faults",
    "local",
    "dependent",
    "server",
    "research_cpu",
    "embedded",
    "llama_speed",
    "two_runs",
)
# timing-insensitive rows first
RUN_ORDER = (
    "checkpoint",
    "prompts",
    "research_cpu",
    "parallel",
    "dependent",
    "overhead",
    "faults",
    "server",
    "local",
    "embedded",
    "llama_speed",
    "two_runs",
)
DEFAULT_OUT = Path(__file__).resolve().parent / "results.json"


def settings(quick: bool) -> dict:
    if quick:
        return {
            "parallel": dict(sections_list=(1, 2, 4, 8), latency=0.1, max_iterations=2, default_pool=False),
            "overhead": dict(repeats=3, max_iterations=4),
            "checkpoint": dict(iterations=(1, 2, 4, 8), sections=(1, 2, 4), max_iterations_deep=2),
            "prompts": dict(max_iterations=8),
            "faults": dict(runs=4, latency=0.05, max_iterations=2),
            "local": None,
            "dependent": dict(latency=0.1, write_extra=0.3, max_iterations=2, repeats=1),
            "server": None,
            "research_cpu": dict(repeats=3),
            "embedded": None,
            "llama_speed": None,
            "two_runs": None,
        }
    return {
        "parallel": dict(sections_list=(1, 2, 4, 8, 16), latency=0.2, max_iterations=2, slow=(8, 0.8)),
        "overhead": dict(repeats=60, max_iterations=4),
        "checkpoint": dict(iterations=(1, 2, 4, 8), sections=(1, 2, 4, 8), max_iterations_deep=2),
        "prompts": dict(max_iterations=8),
        "faults": dict(runs=10, latency=0.05, max_iterations=3),
        "local": dict(),
        "dependent": dict(latency=0.1, write_extra=0.3, max_iterations=2, repeats=3),
        "server": dict(runs_list=(1, 4, 16), latency=1.0, sections=3, max_iterations=2),
        "research_cpu": dict(repeats=5),
        "embedded": dict(repeats=3),
        "llama_speed": dict(threads=(1, 2), repeats=3),
        "two_runs": dict(repeats=2),
    }


def meta(quick: bool) -> dict:
    from importlib.metadata import version

    def v(pkg: str) -> str:
        try:
            return version(pkg)
        except Exception:  # noqa: BLE001
            return "?"

    return {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "langgraph": v("langgraph"),
        "langchain-openai": v("langchain-openai"),
        "openai": v("openai"),
        "langchain-core": v("langchain-core"),
        "deepresearch": v("deepresearch"),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }


# --- printing ---------------------------------------------------------------------------


def print_parallel(r: dict) -> list[str]:
    rows = []
    for x in r["rows"]:
        note = []
        if any(k is not None and k != x["sections"] for k in x["sections_run"]):
            note.append(f"sections run {x['sections_run']}")
        if any(x["failed_sections"]):
            note.append(f"failed {x['failed_sections']}")
        if x["errors"]:
            note.append("; ".join(x["errors"]))
        at_once = "/".join("-" if k is None else str(k) for k in x["at_once"][:3])
        rows.append(
            [
                x["sections"],
                x["model_calls"],
                fmt_s(x["serial_s"], 2),
                fmt_s(x["parallel_s"], 2),
                fmt_s(x["efficiency"], 2),
                at_once,
                x["peak_in_flight"],
                fmt_s(x["default_pool_efficiency"], 2),
                fmt_s(x["zero_latency_s"], 2),
                fmt_s(x.get("ceiling"), 2),
                _share(x.get("parallel_cpu_share")),
                fmt_s(x["parallel_after_s"], 2),
                "; ".join(note),
            ]
        )
    head = (
        f"1. Deep graph, parallel efficiency of the section phase = T(section_concurrency 1) / "
        f"(N x T(section_concurrency N))\n"
        f"   stub latency {r['latency_s']} s per model call (the stub {r.get('stub', 'in process')}), "
        f"max_iterations {r['max_iterations']}; both runs with "
        f"max_concurrency N + 2 and the same pacers\n"
        f"   'at once': most sections running together (serial/parallel/default pool); 'default pool': neither "
        f"limit set (LangGraph's pool, {r['default_pool_workers']} workers here); 'zero-latency s': the parallel "
        f"phase with no latency (its CPU time); 'ceiling': T(section_concurrency 1) / (N x zero-latency s), at most 1 "
        f"(the efficiency if all the phase's work fitted between its calls); 'CPU use': the process's CPU time in the "
        f"parallel phase / its wall time (under 100%: waiting on calls with nothing else to run)"
    )
    out = [
        head,
        table(
            [
                "sections",
                "model calls",
                "serial s",
                "parallel s",
                "efficiency",
                "at once",
                "peak requests",
                "default pool eff.",
                "zero-latency s",
                "ceiling",
                "CPU use",
                "after sections s",
                "note",
            ],
            rows,
        ),
    ]
    if r.get("slow"):
        x = r["slow"]
        out.append(
            f"   {x['sections']} sections at {x['latency_s']} s per call: serial {fmt_s(x['serial_s'], 2)} s, "
            f"parallel {fmt_s(x['parallel_s'], 2)} s, efficiency {fmt_s(x['efficiency'], 2)}"
        )
    return out


def print_overhead(r: dict) -> list[str]:
    def cpu(key):
        return "-" if r.get(key) is None else f"{r[key]:.1f}"

    rows = [
        [
            "iterative graph (ours)",
            r["model_calls"],
            f"{r['ours_per_call_ms']:.1f}",
            cpu("ours_cpu_per_call_ms"),
            fmt_s(r["ours_run_s"]),
        ],
        [
            "bare LangGraph graph",
            r["model_calls"],
            f"{r['bare_per_call_ms']:.1f}",
            cpu("bare_cpu_per_call_ms"),
            fmt_s(r["bare_run_s"]),
        ],
    ]
    if r.get("bare_streamed_per_call_ms") is not None:
        rows.append(
            [
                "bare graph, replies streamed",
                r["model_calls"],
                f"{r['bare_streamed_per_call_ms']:.1f}",
                cpu("bare_streamed_cpu_per_call_ms"),
                "-",
            ]
        )
    if r.get("bare_io_per_call_ms") is not None:
        rows.append(["bare graph, ours' searches too", r["model_calls"], f"{r['bare_io_per_call_ms']:.1f}", "-", "-"])
    if r.get("bare_shaped_per_call_ms") is not None:
        rows.append(
            [
                f"same, in ours' {r['supersteps']} supersteps",
                r["model_calls"],
                f"{r['bare_shaped_per_call_ms']:.1f}",
                "-",
                "-",
            ]
        )
    head = (
        f"2. Orchestration overhead per model call, zero latency (median of {r['repeats']} runs; "
        f"ours also makes {r['search_requests']} search requests to the stub)"
    )
    tail = f"   ratio {r['ratio']:.2f}; ours adds {r['extra_per_call_ms']:.1f} ms per model call"
    if r.get("ratio_streamed") is not None:
        tail += f"; ratio to the bare graph streaming its replies {r['ratio_streamed']:.2f}"
    if r.get("ratio_io") is not None:
        tail += f"; to the bare graph making ours' searches too {r['ratio_io']:.2f}"
    if r.get("shaped_to_bare") is not None:
        tail += (
            f"\n   ours' I/O alone (the bare graph making ours' searches too) is {r['io_to_bare']:.2f} the bare graph, "
            f"{r['shaped_to_bare']:.2f} in ours' {r['supersteps']} supersteps (against {r['bare_steps']}): "
            f"ours is {r['ratio_shaped']:.2f} that"
        )
    if r.get("ratio_shaped_runs"):
        tail += (
            f"\n   run by run (each of ours against the floor run right after it): {_spread(r['ratio_shaped_runs'])}; "
            f"the process's CPU, ours / the floor: {r['ratio_shaped_cpu']:.2f}"
        )
    if r.get("ratio_events") is not None:
        tail += (
            f"\n   the floor also sending progress events where ours sends its own (27 against ours' 28): "
            f"{r['bare_events_per_call_ms']:.1f} ms per call; ours is {r['ratio_events']:.2f} that "
            f"(run by run {_spread(r['ratio_events_runs'])})"
        )
    if r.get("cpu_ratio") is not None:
        tail += f"\n   CPU per call (the process's, the in-process stub's included): ratio {r['cpu_ratio']:.2f}"
    return [head, table(["graph", "model calls", "ms per call", "CPU ms per call", "run s"], rows), tail]


def print_checkpoint(r: dict) -> list[str]:
    def rows(items, key):
        return [
            [
                x[key],
                x["file_bytes"],
                f"{x['bytes_per_unit']:.0f}",
                "-" if x["marginal_bytes"] is None else f"{x['marginal_bytes']:.0f}",
                x["checkpoints"],
                x["evidence"],
                x["error"] or "",
            ]
            for x in items
        ]

    return [
        "3. Checkpoint bytes (SQLite file via open_checkpointer, after the run)",
        table(
            ["iterations", "file bytes", "bytes/iteration", "marginal bytes", "checkpoints", "evidence", "error"],
            rows(r["iterative"], "iterations"),
        ),
        f"   iterative: {r['iterative_verdict']}",
        table(
            ["sections", "file bytes", "bytes/section", "marginal bytes", "checkpoints", "evidence", "error"],
            rows(r["deep"], "sections"),
        ),
        f"   deep (max_iterations {r['deep_max_iterations']} per section): {r['deep_verdict']}",
    ]


def print_prompts(r: dict) -> list[str]:
    from bench.prompts import LOOP_NODES

    rows = [[x["iteration"]] + [x.get(n, "-") for n in LOOP_NODES] for x in r["per_iteration"]]
    trend = ", ".join(f"{k} {v}" for k, v in r["trend"].items())
    return [
        f"4. Prompt tokens per iteration (iterative, max_iterations {r['max_iterations']}, never complete, "
        f"{r['sources']} sources found)",
        table(["iteration", *LOOP_NODES], rows),
        f"   writer prompt {r['writer_prompt_tokens']} tokens; context "
        f"{'is bounded' if r['bounded'] else 'GROWS'}: {trend}",
    ]


def print_faults(r: dict) -> list[str]:
    def row(name, x):
        return [
            name,
            x["runs"],
            x["completed"],
            x["clean"],
            fmt_s(x["mean_s"], 2),
            fmt_s(x["max_s"], 2),
            x["faults_injected"],
            x["retry_events"],
            x["error_events"],
        ]

    return [
        f"5. Faults: iterative runs (max_iterations {r['max_iterations']}, latency {r['latency_s']} s) with "
        f"{r['rate_429']:.0%} 429s and {r['rate_5xx']:.0%} 5xx",
        table(
            ["stub", "runs", "completed", "clean", "mean s", "max s", "faults", "retry events", "error events"],
            [row("no faults", r["baseline"]), row("faults", r["faulty"])],
        ),
        f"   completion rate {r['completion_rate']:.0%}, clean {r['clean_rate']:.0%}; "
        f"{r['extra_s']:+.2f} s per run ({r['time_ratio']:.2f}x the no-fault time)",
    ]


def print_local(r: dict) -> list[str]:
    if r.get("error"):
        return ["6. Local model end to end", f"   failed: {r['error']}"]
    rows = [
        ["research (iterative)", fmt_s(r["research_s"], 1)],
        ["load the model", fmt_s(r["load_model_s"], 1)],
        ["load the wiki index" + (" (built)" if r["index_was_cold"] else ""), fmt_s(r["index_s"], 1)],
        ["total", fmt_s(r["total_s"], 1)],
    ]
    return [
        f'6. Local model end to end: "{r["question"]}" (model local, search wiki)',
        table(["part", "seconds"], rows),
        f"   {r['llm_calls']} model calls ({fmt_s(r['seconds_per_call'], 2)} s each), {r['total_tokens']} tokens, "
        f"{r['iterations']} iterations, stopped by {r['stopped_by']}, sources: {', '.join(r['sources'][:5])}",
    ]


def print_dependent(r: dict) -> list[str]:
    rows = [
        [
            k + 1,
            fmt_s(x.get("wall_s"), 2),
            fmt_s(x.get("critical_path_s"), 2),
            fmt_s(x.get("ratio"), 2),
            fmt_s(x.get("serial_s"), 2),
            " ".join(fmt_s(s, 2) for s in x.get("section_s", [])),
            {True: "yes", False: "no"}.get(x.get("writing_overlapped_research"), "-"),
            x.get("error") or "",
        ]
        for k, x in enumerate(r["rows"])
    ]
    head = (
        f"7. Dependent outline A, B -> C -> D (layers {r['layers']}): wall time of the section phase against "
        f"the critical path (the sum of the layers' longest sections)\n"
        f"   stub latency {r['latency_s']} s per model call, writer calls {r['write_extra_s']} s longer, "
        f"max_iterations {r['max_iterations']}; 'overlap': C's research started while A was still being written"
    )
    tail = (
        f"   median: wall {fmt_s(r['wall_s'], 2)} s, critical path {fmt_s(r['critical_path_s'], 2)} s, "
        f"ratio {fmt_s(r['ratio'], 2)} (below 1: pipelined writing saved time), serial {fmt_s(r['serial_s'], 2)} s"
    )
    return [
        head,
        table(
            ["run", "wall s", "critical path s", "wall / path", "serial s", "sections s (A B C D)", "overlap", "error"],
            rows,
        ),
        tail,
    ]


def print_server(r: dict) -> list[str]:
    rows = [
        [
            x["runs"],
            f"{x['completed']}/{x['runs']}",
            fmt_s(x["wall_s"], 2),
            fmt_s(x["ratio"], 2),
            f"{fmt_s(x['fastest_run_s'], 2)}-{fmt_s(x['slowest_run_s'], 2)}",
            x["model_calls"],
            x["peak_in_flight"],
            x["sections_done"],
            fmt_s(x.get("server_cpu_per_run_s"), 2),
            fmt_s(x.get("burst_estimate"), 2),
            x["loadavg"],
            "; ".join(x["errors"]),
        ]
        for x in r["rows"]
    ]
    c, q = r["checks"]["concurrency"], r["checks"]["rpm"]
    head = (
        f"8. Many deep runs on one `langgraph dev` server (--n-jobs-per-worker {r['n_jobs_per_worker']}), started "
        f"at once through the SDK: {r['sections']} sections, max_iterations {r['max_iterations']}, stub latency "
        f"{r['latency_s']} s per model call, model_concurrency {r['model_concurrency']}\n"
        f"   'x one run': wall time / the 1-run batch's (ideal 1.0); 'peak': model calls in flight at the stub; "
        f"'server CPU s/run': the server process's CPU (user + system) over the batch, per run; 'CPU predicts': "
        f"1 + (N - 1) x that / (2 x one run's wall time), the runs' work queueing under the GIL after each round of calls"
    )
    return [
        head,
        table(
            [
                "runs",
                "completed",
                "wall s",
                "x one run",
                "each run s",
                "model calls",
                "peak",
                "sections done",
                "server CPU s/run",
                "CPU predicts",
                "load",
                "errors",
            ],
            rows,
        ),
        f"   pacer across runs: {c['runs']} runs with model_concurrency {c['limit']}: peak {c['peak_in_flight']} "
        f"({'held' if c['held'] else 'BROKEN'}), {c['completed']}/{c['runs']} completed; {q['runs']} runs with "
        f"model_rpm {q['rpm']}: at most {q['most']} starts in {q['window_s']:.0f} s (allowed {q['allowed']}; "
        f"{'held' if q['held'] else 'BROKEN'}), {fmt_s(q['rate_per_min'], 0)} a minute over the batch",
    ]


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def summary(results: dict) -> str:
    rows = []
    p = results.get("parallel")
    if p and "rows" in p:
        for x in p["rows"]:
            ceiling = f" (ceiling {x['ceiling']:.2f})" if x.get("ceiling") is not None else ""
            rows.append([f"parallel efficiency, {x['sections']} sections", fmt_s(x["efficiency"], 2) + ceiling])
    o = results.get("overhead")
    if o and "ratio" in o:
        rows.append(
            [
                "overhead per call, ours / bare LangGraph",
                f"{o['ratio']:.2f} ({o['ours_per_call_ms']:.1f} vs {o['bare_per_call_ms']:.1f} ms)",
            ]
        )
        if o.get("ratio_streamed") is not None:
            rows.append(
                [
                    "overhead per call, ours / bare streaming its replies",
                    f"{o['ratio_streamed']:.2f} ({o['bare_streamed_per_call_ms']:.1f} ms)",
                ]
            )
        if o.get("ratio_io") is not None:
            rows.append(
                [
                    "overhead per call, ours / bare making ours' searches too",
                    f"{o['ratio_io']:.2f} ({o['bare_io_per_call_ms']:.1f} ms)",
                ]
            )
        if o.get("ratio_shaped") is not None:
            rows.append(
                [
                    "overhead per call, ours / bare making ours' searches in ours' supersteps",
                    f"{o['ratio_shaped']:.2f} ({o['bare_shaped_per_call_ms']:.1f} ms)",
                ]
            )
        if o.get("ratio_shaped_runs"):
            rows.append(
                [
                    "  the same run by run: median (quartiles); CPU",
                    f"{_spread(o['ratio_shaped_runs'])}; {o['ratio_shaped_cpu']:.2f}",
                ]
            )
        if o.get("ratio_events") is not None:
            rows.append(
                [
                    "  against that floor also sending progress events (run by run)",
                    f"{o['ratio_events']:.2f} ({o['bare_events_per_call_ms']:.1f} ms); "
                    f"{_spread(o['ratio_events_runs'])}",
                ]
            )
    if p and p.get("slow"):
        x = p["slow"]
        rows.append(
            [f"parallel efficiency, {x['sections']} sections, {x['latency_s']} s per call", fmt_s(x["efficiency"], 2)]
        )
    c = results.get("checkpoint")
    if c and "iterative" in c:
        it, dp = c["iterative"], c["deep"]
        rows.append(
            [
                f"checkpoint bytes, {it[0]['iterations']} -> {it[-1]['iterations']} iterations",
                f"{it[0]['file_bytes']} -> {it[-1]['file_bytes']} ({c['iterative_verdict'].split(' (')[0]})",
            ]
        )
        rows.append(
            [
                f"checkpoint bytes, {dp[0]['sections']} -> {dp[-1]['sections']} sections",
                f"{dp[0]['file_bytes']} -> {dp[-1]['file_bytes']} ({c['deep_verdict'].split(' (')[0]})",
            ]
        )
    pr = results.get("prompts")
    if pr and "per_iteration" in pr:
        # the first iteration calls thinking alone: compare from the first with every loop node
        full = [x for x in pr["per_iteration"] if len(x) == len(pr["per_iteration"][-1])]
        total = lambda x: sum(v for k, v in x.items() if k != "iteration")  # noqa: E731
        rows.append(
            [
                f"loop prompt tokens, iteration {full[0]['iteration']} -> {full[-1]['iteration']} (3 nodes)",
                f"{total(full[0])} -> {total(full[-1])} ({'bounded' if pr['bounded'] else 'grows'})",
            ]
        )
    f = results.get("faults")
    if f and "faulty" in f:
        rows.append(
            [
                f"completion under {f['rate_429']:.0%} 429 + {f['rate_5xx']:.0%} 5xx",
                f"{f['faulty']['completed']}/{f['faulty']['runs']}, {f['time_ratio']:.2f}x time "
                f"({f['extra_s']:+.2f} s/run)",
            ]
        )
    dp = results.get("dependent")
    if dp and dp.get("ratio") is not None:
        rows.append(
            [
                "dependent A,B->C->D: wall / critical path",
                f"{dp['ratio']:.2f} ({dp['wall_s']:.2f} s vs {dp['critical_path_s']:.2f} s)",
            ]
        )
    sv = results.get("server")
    if sv and sv.get("rows"):
        last = sv["rows"][-1]
        rows.append(
            [
                f"{last['runs']} deep runs on one server: wall / one run",
                f"{last['ratio']:.2f} ({last['wall_s']:.1f} s vs {last['ideal_s']:.1f} s; "
                f"{last['completed']}/{last['runs']} completed"
                + (
                    f"; server CPU {last['server_cpu_per_run_s']:.2f} s a run, predicts {last['burst_estimate']:.2f}"
                    if last.get("server_cpu_per_run_s") is not None
                    else ""
                )
                + ")",
            ]
        )
    lo = results.get("local")
    if lo and "research_s" in lo:
        rows.append(
            [
                "local model, one iterative question",
                f"{lo['research_s']:.1f} s research + {lo['load_model_s']:.1f} s model load",
            ]
        )
    for name in ("research_cpu", "embedded"):
        r = results.get(name)
        if isinstance(r, dict) and not r.get("failed"):
            rows += __import__(f"bench.{name}", fromlist=["summary_rows"]).summary_rows(r)
    for name in ROWS:
        r = results.get(name)
        if isinstance(r, dict) and r.get("failed"):
            rows.append([name, f"FAILED: {r['failed']}"])
    if results.get("skipped"):
        rows.append(["skipped", ", ".join(results["skipped"])])
    return table(["benchmark", "result"], rows)


PRINTERS = {
    "parallel": print_parallel,
    "overhead": print_overhead,
    "checkpoint": print_checkpoint,
    "prompts": print_prompts,
    "faults": print_faults,
    "local": print_local,
    "dependent": print_dependent,
    "server": print_server,
    "research_cpu": lambda r: __import__("bench.research_cpu", fromlist=["lines"]).lines(r),
    "embedded": lambda r: __import__("bench.embedded", fromlist=["lines"]).lines(r),
    "llama_speed": lambda r: __import__("bench.llama_speed", fromlist=["print_rows"]).print_rows(r),
    "two_runs": lambda r: __import__("bench.two_runs", fromlist=["print_rows"]).print_rows(r),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run: fewer sections and repeats, no local model")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON results file (default {DEFAULT_OUT})")
    ap.add_argument("--only", default="", help=f"comma-separated rows to run: {','.join(ROWS)}")
    ap.add_argument("--skip-local", action="store_true", help="skip the embedded-model rows (6, 10, 11 and 12)")
    ap.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="give up (with every thread's traceback) after this many seconds "
        "(default 900, or 180 with --quick): a hang must not block `make bench` forever",
    )
    args = ap.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in only if x not in ROWS]
    if unknown:
        ap.error(f"unknown rows {unknown}; valid: {', '.join(ROWS)}")
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"cannot write {args.out}: {e}")
    if not os.access(args.out if args.out.exists() else args.out.parent, os.W_OK) or args.out.is_dir():
        ap.error(f"cannot write {args.out}")

    setup_env()
    faulthandler.dump_traceback_later(args.timeout or (180 if args.quick else 900), exit=True)
    plan = settings(args.quick)
    results: dict = {"meta": meta(args.quick), "settings": {}, "skipped": []}
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731 - progress on stderr
    t_all = time.monotonic()
    selected = [
        n
        for n in RUN_ORDER
        if not (
            (only and n not in only)
            or plan[n] is None
            or (n in ("local", "embedded", "llama_speed", "two_runs") and args.skip_local)
        )
    ]
    results["skipped"] = [n for n in ROWS if n not in selected]
    for name in selected:
        kw = plan[name]
        results["settings"][name] = {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}
        log(f"[{name}] ...")
        t0 = time.monotonic()
        try:
            module = __import__(f"bench.{name}", fromlist=["run"])
            results[name] = module.run(log=log, **kw)
        except Exception as e:  # noqa: BLE001 - one failing row must not hide the others
            traceback.print_exc(file=sys.stderr)
            results[name] = {"failed": f"{type(e).__name__}: {str(e)[:300]}"}
        results[name]["bench_seconds"] = round(time.monotonic() - t0, 1)
        log(f"[{name}] {results[name]['bench_seconds']} s")
    faulthandler.cancel_dump_traceback_later()
    results["meta"]["seconds"] = round(time.monotonic() - t_all, 1)
    results["meta"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]

    m = results["meta"]
    out = [
        f"deepresearch benchmarks ({'quick' if args.quick else 'full'} run, {m['started']}): "
        f"langgraph {m['langgraph']}, langchain-openai {m['langchain-openai']}, Python {m['python']}, "
        f"{m['cpus']} CPUs (load average {m['loadavg_start'][0]} at the start, {m['loadavg_end'][0]} at the end); "
        "stub OpenAI API on 127.0.0.1",
        "",
    ]
    for name in ROWS:
        r = results.get(name)
        if not isinstance(r, dict):
            continue
        if r.get("failed"):
            out += [f"{name}: FAILED: {r['failed']}", ""]
            continue
        out += PRINTERS[name](r) + [""]
    out += ["Summary", summary(results), "", f"({m['seconds']} s in all; JSON: {args.out})"]
    print("\n".join(out), flush=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, default=str)
        fh.write("\n")
    return 1 if any(isinstance(results.get(n), dict) and results[n].get("failed") for n in ROWS) else 0


if __name__ == "__main__":
    sys.exit(main())
