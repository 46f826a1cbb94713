"""Client-side pacing: at most N calls in flight and at most R requests per minute.

One pacer per (kind, target) is shared by every thread of the process, so parallel
sections share the limit instead of each flooding the provider.

`window(...)` is the stricter kind a provider's published limit needs ("at most 3 requests
per second", "one request every three seconds"): at most `limit` requests in any window of
`seconds` as the server counts them, and optionally one connection at a time. A request
reaches the server at some moment between its start here and the end of its response, so
it counts from its start until `seconds` after it ended: the limit holds however late a
request arrives (a thread that lost the CPU, a slow network), whatever the run's concurrency.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager

from langchain_core.rate_limiters import InMemoryRateLimiter


class Pacer:
    def __init__(self, concurrency: int, rpm: int):
        self.concurrency = concurrency
        self.rpm = rpm
        self._slots = threading.BoundedSemaphore(concurrency)
        self._limiter = (
            InMemoryRateLimiter(requests_per_second=rpm / 60.0, check_every_n_seconds=0.02, max_bucket_size=1)
            if rpm > 0
            else None
        )

    @contextmanager
    def slot(self):
        with self._slots:
            if self._limiter is not None:
                self._limiter.acquire(blocking=True)
            yield


_pacers: dict[tuple, Pacer] = {}
_lock = threading.Lock()


def pacer(kind: str, target: str, concurrency: int, rpm: int) -> Pacer:
    key = (kind, target, concurrency, rpm)
    with _lock:
        if key not in _pacers:
            _pacers[key] = Pacer(concurrency, rpm)
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

    def __init__(self, limit: int, seconds: float, one_at_a_time: bool = False):
        self.limit = limit
        self.seconds = seconds
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
            self._wait_for_start(deadline)
            try:
                yield
            finally:
                self._end()
        finally:
            if self._single is not None:
                self._single.release()


_windows: dict[tuple, Window] = {}


def window(kind: str, target: str, limit: int, seconds: float, one_at_a_time: bool = False) -> Window:
    """The process-wide window limiter for (kind, target): every thread shares it."""
    key = (kind, target, limit, seconds, one_at_a_time)
    with _lock:
        if key not in _windows:
            _windows[key] = Window(limit, seconds, one_at_a_time)
        return _windows[key]
