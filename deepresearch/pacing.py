"""Client-side pacing: at most N calls in flight and at most R requests per minute.

One pacer per (kind, target) is shared by every thread of the process, so parallel
sections share the limit instead of each flooding the provider.

`window(...)` is the stricter kind a provider's published limit needs ("at most 3 requests
per second", "one request every three seconds"): at most `limit` requests start in any
window of `seconds` (a sliding log of start times, plus a small margin for network
jitter), and optionally one connection at a time. It holds whatever the run's concurrency.
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
    """At most `limit` request starts in any `seconds`-long window; `one_at_a_time` also
    keeps a single request in flight. `margin` widens the window a little so the limit
    still holds as seen by the server, whose arrival times jitter."""

    MARGIN = 0.25  # seconds: what a request may lag behind the next ones on the way to the server

    def __init__(self, limit: int, seconds: float, one_at_a_time: bool = False):
        self.limit = limit
        self.seconds = seconds
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()
        self._single = threading.Lock() if one_at_a_time else None

    def _wait_for_start(self, deadline: float | None) -> None:
        span = self.seconds + self.MARGIN
        while True:
            with self._lock:
                now = time.monotonic()
                while self._starts and now - self._starts[0] >= span:
                    self._starts.popleft()
                if len(self._starts) < self.limit:
                    self._starts.append(now)
                    return
                wait = span - (now - self._starts[0])
            if deadline is not None and now + wait >= deadline:
                raise WaitTooLong(f"the rate limit's wait ({wait:.1f}s) would pass the time budget")
            time.sleep(wait)

    @contextmanager
    def slot(self, deadline: float | None = None):
        """Hold one request's slot; WaitTooLong when it cannot start before `deadline`
        (a `time.monotonic()` value)."""
        if self._single is not None:
            timeout = -1 if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._single.acquire(timeout=timeout):
                raise WaitTooLong("another request to this provider is still running at the time budget's end")
        try:
            self._wait_for_start(deadline)
            yield
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
