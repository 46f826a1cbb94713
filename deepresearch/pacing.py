"""Client-side pacing: at most N calls in flight and at most R requests per minute.

One pacer per (kind, target) is shared by every thread of the process, so parallel
sections share the limit instead of each flooding the provider.

`window(...)` is the stricter kind a provider's published limit needs ("at most 3 requests
per second", "one request every three seconds"): at most `limit` requests in any window of
`seconds` as the server counts them, and optionally one connection at a time. A request
reaches the server at some moment between its start here and the end of its response, so
it counts from its start until `seconds` after it ended: the limit holds however late a
request arrives (a thread that lost the CPU, a slow network), whatever the run's concurrency.

Across processes (several server workers, on one machine or many): when the environment has
`REDIS_URI` (the LangGraph server's broker) or else `DATABASE_URI` (its PostgreSQL), every rate,
requests per minute and the published windows alike, is also held in that shared store by
pyrate-limiter's sliding-window log, so W workers together keep each limit instead of W times it.
A window's entry is made when its request starts and moved to the moment it ended, so (for a
request shorter than the window) it holds its place from its start until a window after its end
there too; the shared window is a twentieth longer than the provider's, for the clocks' and the
store's own delays. arXiv's one connection is held by a lock in the same store; the other
concurrency limits stay per process. With neither variable set, all of it is per process.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections import deque
from contextlib import contextmanager, nullcontext
from typing import Any

from langchain_core.rate_limiters import InMemoryRateLimiter

SHARED_MARGIN = 0.05  # the shared window is this fraction longer than the provider's (clocks, the store's delays)


def shared_store() -> str | None:
    """The store the limits are shared through: `REDIS_URI`, else `DATABASE_URI`, else None
    (per process). Read when a pacer is first made."""
    return os.environ.get("REDIS_URI") or os.environ.get("DATABASE_URI") or None


_clients: dict[str, Any] = {}  # one Redis client or PostgreSQL pool per store, shared by its limiters


def _client(uri: str) -> Any:
    if uri not in _clients:
        if uri.startswith(("redis://", "rediss://", "unix://")):
            import redis

            _clients[uri] = redis.Redis.from_url(uri)
        elif uri.startswith(("postgres://", "postgresql://")):
            from psycopg_pool import ConnectionPool

            _clients[uri] = ConnectionPool(uri, min_size=1, max_size=4, open=True)
        else:
            raise ValueError("REDIS_URI or DATABASE_URI is neither a redis:// nor a postgresql:// address")
    return _clients[uri]


class SharedRate:
    """At most `limit` requests in any `seconds` (plus SHARED_MARGIN) across every process that
    uses the same store: pyrate-limiter's sliding-window log in Redis or PostgreSQL, whose entry
    for a request is made at its start (`acquire`) and moved to its end (`ended`)."""

    def __init__(self, uri: str, name: str, limit: int, seconds: float):
        from pyrate_limiter import Limiter, PostgresBucket, Rate, RedisBucket

        self._rate = Rate(limit, max(1, round(seconds * (1 + SHARED_MARGIN) * 1000)))
        client = _client(uri)
        digest = hashlib.sha256(f"{name}|{limit}|{seconds}".encode()).hexdigest()[:20]
        self._redis: Any = None if uri.startswith("postgres") else client
        if self._redis is None:
            self._bucket: Any = PostgresBucket(client, f"deepresearch_{digest}", [self._rate])
        else:
            self._bucket = RedisBucket.init([self._rate], client, f"deepresearch:pace:{digest}")
        self._limiter = Limiter(self._bucket)  # it also drops the entries that left the window
        self._lock = threading.Lock()

    def acquire(self, deadline: float | None = None) -> str:
        """Wait for a place and take it: the name of its entry; WaitTooLong when none comes
        before `deadline` (`time.monotonic()`).

        Each try is a fresh request stamped with the time it is made (the library's own blocking
        wait would stamp a retry with its first try's time plus the sleeps, which falls behind
        the clock when the sleeps overrun and lets others' newer entries go uncounted)."""
        while True:
            with self._lock:  # one try at a time per process: the bucket keeps the last verdict
                name = uuid.uuid4().hex  # a name of its own per request: Redis keeps the log as a set of names
                if self._limiter.try_acquire(name, blocking=False):
                    if self._redis is None or self._fits(name):
                        return name
                oldest = self._bucket.peek(self._rate.limit - 1)  # the entry whose leaving makes room
                now = self._bucket.now()
            wait = (
                0.01 if oldest is None else min(max(0.005, (oldest.timestamp + self._rate.interval - now) / 1000), 1.0)
            )
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise WaitTooLong("the shared rate limit's wait would pass the time budget")
            time.sleep(wait)

    def _fits(self, name: str) -> bool:
        """Whether the place just taken in Redis keeps the limit, counting every entry of the
        last window including those stamped after this process read its clock; if not, it is
        given back. (The library's Redis check counts only up to the caller's own clock
        reading, so it misses an entry that another worker made or moved to its request's end
        a moment later by its clock: a process that lost the CPU between reading the clock and
        the check, or a worker whose clock runs ahead. PostgreSQL's check has no upper bound.)"""
        key = self._bucket.bucket_key
        if self._redis.zcount(key, self._bucket.now() - self._rate.interval, "+inf") <= self._rate.limit:
            return True
        members = [m for m, _ in self._redis.zscan_iter(key, match=f"{name}*")]
        if members:
            self._redis.zrem(key, *members)
        return False

    def ended(self, name: str) -> None:
        """The request of entry `name` ended: its entry moves to now, so it keeps its place a
        whole window after the end (the server may have counted it as late as that)."""
        now = self._bucket.now()
        if self._redis is not None:  # the library's names for it begin with `name`
            key = self._bucket.bucket_key
            for member, _ in self._redis.zscan_iter(key, match=f"{name}*"):
                self._redis.zadd(key, {member: now}, xx=True)  # xx: one that left the window stays gone
            return
        from psycopg import sql

        update = sql.SQL("UPDATE {} SET item_timestamp = TO_TIMESTAMP(%s) WHERE name LIKE %s")
        with self._bucket.pool.connection() as conn:
            conn.execute(update.format(sql.Identifier(self._bucket._full_tbl)), (now / 1000, f"{name}%"))


LEASE_SECONDS = 300.0  # a Redis lock whose holder died frees itself after this


class SharedLock:
    """One request at a time across every process that uses the same store: redis-py's lock
    (with a lease) or a PostgreSQL advisory lock, held by a connection that frees it if its
    process dies."""

    def __init__(self, uri: str, name: str):
        digest = hashlib.sha256(name.encode()).digest()
        self._client = _client(uri)
        self._redis = not uri.startswith("postgres")
        self._name = f"deepresearch:one:{digest.hex()[:20]}"
        self._key = int.from_bytes(digest[:8], "big", signed=True)

    @contextmanager
    def held(self, deadline: float | None = None):
        """Hold it for the block; WaitTooLong when it is not free before `deadline`."""
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        if self._redis:
            lock = self._client.lock(self._name, timeout=LEASE_SECONDS, sleep=0.02, blocking_timeout=timeout)
            if not lock.acquire():
                raise WaitTooLong("another worker's request to this provider is still running at the time budget's end")
            try:
                yield
            finally:
                try:
                    lock.release()
                except Exception:  # noqa: BLE001 - the lease ran out meanwhile: nothing left to free
                    pass
            return
        with self._client.connection() as conn:
            conn.autocommit = True
            while not conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()[0]:
                if deadline is not None and time.monotonic() + 0.02 >= deadline:
                    raise WaitTooLong(
                        "another worker's request to this provider is still running at the time budget's end"
                    )
                time.sleep(0.02)
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))


def _shared(kind: str, target: str, limit: int, seconds: float) -> SharedRate | None:
    uri = shared_store()
    return SharedRate(uri, f"{kind}|{target}", limit, seconds) if uri else None


class Pacer:
    def __init__(self, concurrency: int, rpm: int, shared: SharedRate | None = None):
        self.concurrency = concurrency
        self.rpm = rpm
        self._slots = threading.BoundedSemaphore(concurrency)
        self._shared = shared
        self._limiter = (
            InMemoryRateLimiter(requests_per_second=rpm / 60.0, check_every_n_seconds=0.02, max_bucket_size=1)
            if rpm > 0 and shared is None
            else None
        )

    @contextmanager
    def slot(self):
        with self._slots:
            if self._shared is not None:
                self._shared.acquire()
            elif self._limiter is not None:
                self._limiter.acquire(blocking=True)
            yield


_pacers: dict[tuple, Pacer] = {}
_lock = threading.Lock()


def pacer(kind: str, target: str, concurrency: int, rpm: int) -> Pacer:
    key = (kind, target, concurrency, rpm, shared_store())
    with _lock:
        if key not in _pacers:
            _pacers[key] = Pacer(concurrency, rpm, _shared(kind, target, rpm, 60.0) if rpm > 0 else None)
        return _pacers[key]


class WaitTooLong(Exception):
    """Waiting for a slot would carry the caller past its deadline."""


class Window:
    """At most `limit` requests in any `seconds`-long window as the server sees them;
    `one_at_a_time` also keeps a single request in flight.

    The server sees a request arrive at some moment between its start here and the end of its
    response, never before nor after. So a request holds its place from its start until
    `seconds` after it ended (a request still in flight holds it until then): a new one starts
    only when fewer than `limit` are in flight or ended within the last `seconds`. Any
    `limit` + 1 requests then arrive at least `seconds` apart, first to last, however their
    arrivals lag behind their starts. (Counting start times only, a request whose arrival lagged
    behind the ones started after it could let the server see `limit` + 1 in one window.)"""

    def __init__(
        self,
        limit: int,
        seconds: float,
        one_at_a_time: bool = False,
        shared: SharedRate | None = None,
        shared_single: SharedLock | None = None,
    ):
        self.limit = limit
        self.seconds = seconds
        self._shared = shared
        self._shared_single = shared_single if one_at_a_time else None
        self._in_flight = 0
        self._ended: deque[float] = deque()  # end times of the requests still in the window, oldest first
        self._cond = threading.Condition()
        self._single = threading.Lock() if one_at_a_time else None

    def _wait_for_start(self, deadline: float | None) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                while self._ended and now - self._ended[0] >= self.seconds:
                    self._ended.popleft()
                if self._in_flight + len(self._ended) < self.limit:
                    self._in_flight += 1
                    return
                # room comes when the oldest ended request leaves the window, or (all of them
                # still in flight) when one ends: woken by `_end`
                wait = self.seconds - (now - self._ended[0]) if self._ended else None
                if deadline is not None:
                    if wait is not None and now + wait >= deadline:
                        raise WaitTooLong(f"the rate limit's wait ({wait:.1f}s) would pass the time budget")
                    if now >= deadline:
                        raise WaitTooLong("the rate limit's wait (for requests in flight) would pass the time budget")
                    if wait is None:
                        wait = deadline - now
                self._cond.wait(wait)

    def _end(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._ended.append(time.monotonic())
            self._cond.notify_all()

    @contextmanager
    def slot(self, deadline: float | None = None):
        """Hold one request's place from its start until `seconds` after the block ends (wrap
        the whole request, its response read to the end, in it); WaitTooLong when it cannot
        start before `deadline` (a `time.monotonic()` value)."""
        if self._single is not None:
            timeout = -1 if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._single.acquire(timeout=timeout):
                raise WaitTooLong("another request to this provider is still running at the time budget's end")
        try:
            with self._shared_single.held(deadline) if self._shared_single is not None else nullcontext():
                with self._window(deadline):
                    yield
        finally:
            if self._single is not None:
                self._single.release()

    @contextmanager
    def _window(self, deadline: float | None):
        self._wait_for_start(deadline)
        try:
            entry = self._shared.acquire(deadline) if self._shared is not None else None
            try:
                yield
            finally:
                if entry is not None:
                    self._shared.ended(entry)  # type: ignore[union-attr]
        finally:
            self._end()


_windows: dict[tuple, Window] = {}


def window(kind: str, target: str, limit: int, seconds: float, one_at_a_time: bool = False) -> Window:
    """The process-wide window limiter for (kind, target): every thread shares it (and every
    process, through the shared store when there is one)."""
    key = (kind, target, limit, seconds, one_at_a_time, shared_store())
    with _lock:
        if key not in _windows:
            uri = shared_store()
            single = SharedLock(uri, f"{kind}|{target}") if uri and one_at_a_time else None
            _windows[key] = Window(limit, seconds, one_at_a_time, _shared(kind, target, limit, seconds), single)
        return _windows[key]
