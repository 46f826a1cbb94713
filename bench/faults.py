"""Row 5: completion rate and extra time under injected faults (20% 429s, 10% 5xx).

N iterative runs against a faulty stub (429 with `Retry-After`, or 500/502/503, drawn per
request from a seeded generator) and N against a clean one, both with the same fixed
latency. A run "completed" when it returned a report; it is "clean" when, in addition,
no node gave up on a call (every fault was absorbed by a retry: only `error` events with
`retrying` set, which are counted apart).
"""

from __future__ import annotations

import statistics

from bench.harness import QUESTION, chat_requests, config_for, make_stub, responder, stream_run, stub_context


def _series(stub, n: int, max_iterations: int, tag: str) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.graphs.iterative import build

    ctx = stub_context(stub, mode="iterative", max_iterations=max_iterations)
    times, completed, clean, retries, error_events, stopped = [], 0, 0, 0, 0, {}
    for i in range(n):
        stub.respond = responder()
        r = stream_run(
            build(checkpointer=InMemorySaver()),
            {"question": QUESTION},
            config_for(f"{tag}{i}", max_iterations=max_iterations),
            ctx,
        )
        times.append(r.seconds)
        report = (r.final.get("report") or "").strip()
        errs = [e for _, e in r.events if e.get("type") == "error" and not e.get("retrying")]
        retries += sum(1 for _, e in r.events if e.get("type") == "error" and e.get("retrying"))
        error_events += len(errs)
        if report and not r.error:
            completed += 1
            if not errs and not r.final.get("errors"):
                clean += 1
        key = r.error.split(":")[0] if r.error else r.final.get("stopped_by", "?")
        stopped[key] = stopped.get(key, 0) + 1
    return {
        "runs": n,
        "completed": completed,
        "clean": clean,
        "mean_s": statistics.mean(times),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "error_events": error_events,
        "retry_events": retries,
        "stopped_by": stopped,
        "chat_requests": len(chat_requests(stub)),
        "faults_injected": stub.faults,
    }


def run(
    *,
    runs: int = 10,
    latency: float = 0.05,
    rate_429: float = 0.2,
    rate_5xx: float = 0.1,
    max_iterations: int = 3,
    log=print,
) -> dict:
    with make_stub(latency=latency) as stub:  # also warms the imports and the client up
        _series(stub, 1, max_iterations, "w")
    with make_stub(latency=latency) as stub:
        base = _series(stub, runs, max_iterations, "b")
    with make_stub(latency=latency, rate_429=rate_429, rate_5xx=rate_5xx, seed=7) as stub:
        faulty = _series(stub, runs, max_iterations, "f")
    out = {
        "latency_s": latency,
        "rate_429": rate_429,
        "rate_5xx": rate_5xx,
        "max_iterations": max_iterations,
        "baseline": base,
        "faulty": faulty,
        "completion_rate": faulty["completed"] / runs,
        "clean_rate": faulty["clean"] / runs,
        "extra_s": faulty["mean_s"] - base["mean_s"],
        "time_ratio": faulty["mean_s"] / base["mean_s"],
    }
    log(
        f"  completed {faulty['completed']}/{runs} (clean {faulty['clean']}), mean {faulty['mean_s']:.2f} s "
        f"vs {base['mean_s']:.2f} s without faults ({faulty['faults_injected']} faults injected)"
    )
    return out
