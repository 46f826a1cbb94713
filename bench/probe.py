"""Subprocess probe: does the deep graph finish with `max_concurrency=1`? Prints "ok"."""

from __future__ import annotations

import faulthandler

from bench.harness import make_stub, setup_env


def main() -> None:
    faulthandler.dump_traceback_later(60, exit=True)  # never outlive the bench for long, even when deadlocked
    setup_env()
    from bench.harness import responder
    from bench.parallel import deep_run, phase

    print("running", flush=True)
    with make_stub() as stub:
        run, _ = deep_run(stub, 2, max_concurrency=1, model_concurrency=4, search_concurrency=4,
                          max_iterations=1, thread="probe")
    if run.error or phase(run)["sections_run"] != 2:
        raise SystemExit(f"probe run failed: {run.error}")
    print("ok", flush=True)


if __name__ == "__main__":
    main()
