"""Row 8: many deep runs on one `langgraph dev` server.

`langgraph dev` serves langgraph.json's graphs in a subprocess on 127.0.0.1 (offline, no
reload, the stub's fake keys); the SDK starts N deep runs at once (one thread each, 3 sections,
`max_iterations` 2) and waits for them all. The stub answers every model call after `latency`
seconds, so one run's wall time is mostly its chain of model calls, and N runs on a server
that scales take about as long as one: wall(N) / wall(1) is the figure (1.0 ideal).

Also measured per batch: the runs completed, the model calls in flight at the peak (the
stub's count), the server process's CPU time (user + system, with psutil when it is installed)
per run, and the ratio that CPU predicts: the runs' calls return together, so each run's work
waits under the GIL for, on average, half of the other runs' work: 1 + (N - 1) x (CPU per run) /
(2 x one run's wall time). And whether the pacers' limits held across the runs: one batch with a
`model_concurrency` below what the runs would use together (the peak must not pass it), and
one with a `model_rpm` (no more request starts in any window than the rate allows).

The server's own settings are part of the figures: `--n-jobs-per-worker` (how many runs one
worker executes at once; `langgraph dev` defaults to 1) is set to the largest batch.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

from bench.harness import FAKE_OPENAI_KEY, FAKE_TAVILY_KEY, QUESTION, fmt_s, make_stub, responder, scratch
from tests.dev_server import DevServer


class Server(DevServer):
    """`langgraph dev` in a scratch folder of its own, executing `n_jobs` runs at once."""

    def __init__(self, *, n_jobs: int, extra_env: dict | None = None):
        folder = scratch() / f"server-{os.getpid()}-{time.monotonic_ns()}"
        folder.mkdir(parents=True)
        super().__init__(
            folder,
            {
                "OPENAI_API_KEY": FAKE_OPENAI_KEY,
                "TAVILY_API_KEY": FAKE_TAVILY_KEY,
                "XDG_CACHE_HOME": str(folder / "cache"),
                "XDG_DATA_HOME": str(folder / "data"),
                **(extra_env or {}),
            },
            n_jobs=n_jobs,
        )

    def __enter__(self):
        self.wait_ready()  # stops the server itself when it never answers
        return self

    def __exit__(self, *exc):
        self.stop()


async def _batch(url: str, n: int, context: dict, timeout: float) -> dict:
    """Start `n` deep runs at once (one thread each) and wait for all of them."""
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=timeout)
    threads = [await client.threads.create() for _ in range(n)]
    t0 = time.monotonic()

    async def one(thread: dict) -> dict:
        tid = thread["thread_id"]
        run = await client.runs.create(tid, "deep", input={"question": QUESTION}, context=context)
        values = await client.runs.join(tid, run["run_id"])
        done = time.monotonic() - t0
        status = (await client.runs.get(tid, run["run_id"]))["status"]
        ok = status == "success" and isinstance(values, dict) and bool(values.get("report"))
        sections = [s.get("status") for s in (values.get("sections") or [])] if isinstance(values, dict) else []
        return {
            "seconds": done,
            "status": status,
            "ok": ok,
            "sections_done": sections.count("done"),
            "error": None if ok else str(values)[:200],
        }

    results = await asyncio.gather(*(one(t) for t in threads), return_exceptions=True)
    wall = time.monotonic() - t0
    runs = [
        r
        if isinstance(r, dict)
        else {
            "ok": False,
            "error": f"{type(r).__name__}: {str(r)[:200]}",
            "seconds": None,
            "status": "error",
            "sections_done": 0,
        }
        for r in results
    ]
    return {"wall_s": wall, "runs": runs}


class ChatCounter:
    """Model calls in flight at the stub (searches apart): from the start of a chat request
    (the stub asks for its latency) to its answer (the stub asks for the reply)."""

    def __init__(self, respond):
        self._respond = respond
        self.seconds = 0.0
        self.in_flight = self.peak = 0
        self._lock = threading.Lock()

    def latency(self, n: int) -> float:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self.seconds

    def respond(self, kind: str, prompt: str, n: int):
        with self._lock:
            self.in_flight -= 1
        return self._respond(kind, prompt, n)


def server_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) the server process and its children have used so far; None
    without psutil."""
    try:
        import psutil

        proc = psutil.Process(pid)
        return sum(sum(p.cpu_times()[:2]) for p in [proc, *proc.children(recursive=True)])
    except Exception:  # noqa: BLE001 - psutil missing, or a child gone meanwhile: no figure
        return None


def _chat_starts(stub, since: int) -> list[float]:
    return sorted(t for r, t in zip(stub.requests[since:], stub.start_times[since:]) if "/chat/" in r["path"])


def max_in_window(starts: list[float], seconds: float) -> int:
    """The most request starts in any window of `seconds`."""
    best, j = 0, 0
    for i, t in enumerate(starts):
        while starts[j] <= t - seconds:
            j += 1
        best = max(best, i - j + 1)
    return best


def run(
    *,
    runs_list=(1, 4, 16),
    latency: float = 1.0,
    sections: int = 3,
    max_iterations: int = 2,
    model_concurrency: int = 64,
    pacer_check: tuple[int, int] = (4, 6),
    rpm_check: tuple[int, int] = (2, 240),
    timeout: float = 600.0,
    log=print,
) -> dict:
    """`pacer_check` = (runs, model_concurrency below their need); `rpm_check` = (runs, model_rpm)."""
    rows: list[dict] = []
    checks: dict = {}
    n_jobs = max(max(runs_list), pacer_check[0], rpm_check[0])
    base = {
        "mode": "deep",
        "model": "openai:stub",
        "search": "tavily",
        "max_sections": sections,
        "max_iterations": max_iterations,
        "max_tokens": 10_000_000,
        "max_seconds": timeout,
        "request_timeout": 60.0,
        "search_concurrency": 64,
    }
    calls = ChatCounter(responder(sections=sections))
    with make_stub(calls.respond, latency=calls.latency) as stub, Server(n_jobs=n_jobs) as server:
        base.update(base_url=stub.base_url, search_base_url=stub.root_url)

        def batch(n: int, **over) -> dict:
            since = len(stub.requests)
            calls.peak = 0
            cpu0 = server_cpu_s(server.proc.pid)
            out = asyncio.run(_batch(server.url, n, base | {"model_concurrency": model_concurrency} | over, timeout))
            cpu1 = server_cpu_s(server.proc.pid)
            out["server_cpu_s"] = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
            out["peak_in_flight"] = calls.peak
            out["model_calls"] = len(_chat_starts(stub, since))
            out["starts"] = _chat_starts(stub, since)
            return out

        batch(1)  # warm-up: the server's imports, the graphs' first compile, the pacers
        calls.seconds = latency
        ideal = None
        for n in runs_list:
            b = batch(n)
            ideal = ideal or b["wall_s"]
            row = {
                "runs": n,
                "completed": sum(1 for r in b["runs"] if r["ok"]),
                "wall_s": b["wall_s"],
                "ideal_s": ideal,
                "ratio": b["wall_s"] / ideal,
                "slowest_run_s": max((r["seconds"] or 0) for r in b["runs"]),
                "fastest_run_s": min((r["seconds"] or 0) for r in b["runs"]),
                "model_calls": b["model_calls"],
                "peak_in_flight": b["peak_in_flight"],
                "sections_done": sum(r["sections_done"] for r in b["runs"]),
                "server_cpu_per_run_s": b["server_cpu_s"] / n if b["server_cpu_s"] is not None else None,
                # the runs' calls come back together and their work waits its turn under the
                # server's GIL: on average half the other runs' CPU, over the run (1 + (N - 1) c / 2 T1)
                "burst_estimate": 1 + b["server_cpu_s"] * (n - 1) / n / (2 * ideal)
                if b["server_cpu_s"] is not None
                else None,
                "errors": sorted({r["error"] for r in b["runs"] if r["error"]})[:3],
                "loadavg": round(os.getloadavg()[0], 2),
            }
            rows.append(row)
            log(
                f"  {n:>2} runs: {row['completed']}/{n} completed, wall {row['wall_s']:.2f} s "
                f"({row['ratio']:.2f}x one run), peak {row['peak_in_flight']} calls in flight, server CPU "
                f"{fmt_s(row['server_cpu_per_run_s'], 2)} s a run (predicts {fmt_s(row['burst_estimate'], 2)}x)"
            )
        n, limit = pacer_check
        b = batch(n, model_concurrency=limit)
        checks["concurrency"] = {
            "runs": n,
            "limit": limit,
            "peak_in_flight": b["peak_in_flight"],
            "held": b["peak_in_flight"] <= limit,
            "wall_s": b["wall_s"],
            "completed": sum(1 for r in b["runs"] if r["ok"]),
        }
        log(f"  pacer: {n} runs, model_concurrency {limit}: peak {b['peak_in_flight']}")
        n, rpm = rpm_check
        calls.seconds = 0.0  # only the rate should space the calls
        b = batch(n, model_rpm=rpm)
        window = 3.0
        allowed = int(rpm / 60 * window) + 1  # the limiter's bucket holds one request
        most = max_in_window(b["starts"], window)
        checks["rpm"] = {
            "runs": n,
            "rpm": rpm,
            "window_s": window,
            "allowed": allowed,
            "most": most,
            "held": most <= allowed,
            "model_calls": b["model_calls"],
            "wall_s": b["wall_s"],
            "rate_per_min": (b["model_calls"] - 1) / (b["starts"][-1] - b["starts"][0]) * 60
            if len(b["starts"]) > 1 and b["starts"][-1] > b["starts"][0]
            else None,
            "completed": sum(1 for r in b["runs"] if r["ok"]),
        }
        log(f"  pacer: {n} runs, model_rpm {rpm}: at most {most} starts in {window:.0f} s (allowed {allowed})")
    return {
        "latency_s": latency,
        "sections": sections,
        "max_iterations": max_iterations,
        "model_concurrency": model_concurrency,
        "n_jobs_per_worker": n_jobs,
        "rows": rows,
        "checks": checks,
    }
