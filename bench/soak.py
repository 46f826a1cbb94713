"""A day of runs on one server: does anything grow once it is warm?

`langgraph dev` (offline, 8 runs at once) runs a few hundred runs of both graphs against the
stub (no latency: the server's own work is the load), each hundred half one after another and
half several at once, alternating `iterative` and `deep` (2 sections). After a warm-up and after
each hundred it reports the server's resident memory, open files and threads (psutil, the server
process and its children). What is kept on purpose is kept the same: each run has a thread of its
own, deleted when the run has ended (the in-memory server keeps every thread's checkpoints until
then), and every run asks the same searches, so the store keeps the same sources' texts (with new
pages every run, as `--new-sources` gives, the store grows by their texts: storage, not a leak).

    python -m bench.soak                  300 runs (about 20 minutes on 2 shared cores)
    python -m bench.soak --runs 100 --at-once 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass

from bench.harness import QUESTION, Responder, make_stub, responder
from bench.server import Server

SECTIONS = 2


@dataclass(frozen=True)
class SameEveryRun:
    """The bench's researcher, asking the same things in every run (its call counter held at 0)."""

    inner: Responder

    def __call__(self, kind: str, prompt: str, n: int):
        return self.inner(kind, prompt, 0)


def process_figures(pid: int) -> dict:
    """Resident memory (MiB), open files and threads of the server process and its children."""
    import psutil

    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    figures = {"rss_mib": 0.0, "open_files": 0, "threads": 0}
    for p in procs:
        try:
            figures["rss_mib"] += p.memory_info().rss / 2**20
            figures["open_files"] += p.num_fds()
            figures["threads"] += p.num_threads()
        except psutil.NoSuchProcess:  # a child gone meanwhile
            pass
    figures["rss_mib"] = round(figures["rss_mib"], 1)
    return figures


async def _one(client, graph: str, context: dict) -> bool:
    thread = (await client.threads.create())["thread_id"]
    try:
        run = await client.runs.create(thread, graph, input={"question": QUESTION}, context=context)
        values = await client.runs.join(thread, run["run_id"])
        status = (await client.runs.get(thread, run["run_id"]))["status"]
        return status == "success" and isinstance(values, dict) and bool(values.get("report"))
    finally:
        await client.threads.delete(thread)


async def _hundred(url: str, n: int, at_once: int, context: dict, first: int) -> int:
    """`n` runs, the first half one after another, the rest `at_once` at a time; runs that succeeded."""
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=600)
    graph = lambda i: "deep" if (first + i) % 2 else "iterative"
    ok = 0
    half = n // 2
    for i in range(half):
        ok += await _one(client, graph(i), context)
    for start in range(half, n, at_once):
        batch = range(start, min(n, start + at_once))
        ok += sum(await asyncio.gather(*(_one(client, graph(i), context) for i in batch)))
    return ok


def run(*, runs: int = 300, at_once: int = 8, warm_up: int = 50, new_sources: bool = False, log=print) -> dict:
    context = {
        "model": "openai:stub",
        "search": "tavily",
        "max_sections": SECTIONS,
        "max_iterations": 1,
        "max_tokens": 10_000_000,
        "max_seconds": 600,
        "request_timeout": 60.0,
    }
    rows = []
    researcher = responder(sections=SECTIONS)
    with make_stub(researcher if new_sources else SameEveryRun(researcher)) as stub, Server(n_jobs=at_once) as server:
        context.update(base_url=stub.base_url, search_base_url=stub.root_url)
        pid = server.proc.pid
        t0 = time.monotonic()
        ok = asyncio.run(_hundred(server.url, warm_up, at_once, context, 0))
        rows.append({"runs": 0, "ok": ok, "seconds": round(time.monotonic() - t0, 1), **process_figures(pid)})
        log(f"  warm-up ({warm_up} runs): {rows[-1]}")
        done = 0
        while done < runs:
            n = min(100, runs - done)
            t0 = time.monotonic()
            ok = asyncio.run(_hundred(server.url, n, at_once, context, done))
            done += n
            rows.append({"runs": done, "ok": ok, "seconds": round(time.monotonic() - t0, 1), **process_figures(pid)})
            log(f"  after {done} runs: {rows[-1]}")
    first, last = rows[1], rows[-1]
    return {
        "runs": runs,
        "at_once": at_once,
        "warm_up": warm_up,
        "new_sources": new_sources,
        "rows": rows,
        "rss_last_over_first": round(last["rss_mib"] / first["rss_mib"], 3),
        "open_files_change": last["open_files"] - first["open_files"],
        "threads_change": last["threads"] - first["threads"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--at-once", type=int, default=8)
    ap.add_argument("--warm-up", type=int, default=50, help="runs before the first figures")
    ap.add_argument("--new-sources", action="store_true", help="new pages every run (the store grows)")
    ap.add_argument("--out", help="also write the figures to this JSON file")
    args = ap.parse_args()
    if args.runs < 1 or args.at_once < 1 or args.warm_up < 1:
        ap.error("--runs, --at-once and --warm-up must be at least 1")
    result = run(runs=args.runs, at_once=args.at_once, warm_up=args.warm_up, new_sources=args.new_sources)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
