"""How many threads an in-process model (the embedded chat model, the embedding model) may use."""

from __future__ import annotations

import os

THREADS_ENV = "DEEPRESEARCH_LOCAL_THREADS"
MAX_THREADS = 4  # a 135M model gains nothing from more; more only spin against other work


def local_threads() -> int:
    """llama.cpp's threads for in-process models: DEEPRESEARCH_LOCAL_THREADS when set, else one per
    core this process may use but one (so a second run, a test worker or any other job keeps a core),
    at least one and at most four. llama.cpp's threads spin while they wait for each other: on a
    core another process holds, every step waits for that process's time slice (bench/llama_speed.py
    measures it: on 2 cores with the other one busy, two threads generate several times slower than one)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or not 1 <= int(raw) <= 256:
            raise ValueError(f"{THREADS_ENV} must be a whole number of threads from 1 to 256, not {raw[:20]!r}")
        return int(raw)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_THREADS, usable - 1))
