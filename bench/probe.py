"""Subprocess probe: does the deep graph finish with `max_concurrency=1`? Prints "ok".

Streamed with "updates" + "values" (not "custom": LangGraph 1.2's own sync stream parks a
waiter in the one-worker pool and hangs), so what it tests is the graph itself: today
`nodes/section_research.py` streams each section's subgraph with the custom mode, which
inherits max_concurrency=1 and hangs the same way."""

from __future__ import annotations

import faulthandler

from bench.harness import make_stub, setup_env


def main() -> None:
    faulthandler.dump_traceback_later(60, exit=True)  # never outlive the bench for long, even when deadlocked
    setup_env()
    from bench.parallel import deep_run, phase

    print("running", flush=True)
    with make_stub() as stub:
        run, _ = deep_run(stub, 2, max_concurrency=1, model_concurrency=4, search_concurrency=4,
                          max_iterations=1, thread="probe", custom=False)
    if run.error or phase(run)["sections_run"] != 2:
        raise SystemExit(f"probe run failed: {run.error}")
    print("ok", flush=True)


if __name__ == "__main__":
    main()
