"""Client-side pacing: at most N calls in flight and at most R requests per minute.

One pacer per (kind, target) is shared by every thread of the process, so parallel
sections share the limit instead of each flooding the provider.
"""

from __future__ import annotations

import threading

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


