"""One worker process of tests/test_shared_limits.py: PubMed searches from a few threads against
the stub whose address is argv[1], paced by deepresearch's NCBI window (shared through
REDIS_URI or DATABASE_URI when the environment has one). It prints `ready`, waits for a line
`go SECONDS` on stdin, searches for that long, then prints its counts as JSON.

`model CALLS RPM`: takes CALLS places of the model pacer (at most RPM a minute), printing
`ready`, then `call N` as each is given."""

from __future__ import annotations

import json
import sys
import threading
import time

from deepresearch.pacing import pacer, window
from deepresearch.tools.base import SearchError
from deepresearch.tools.pubmed import PubMedSearch, ncbi_limit

THREADS = 4


def model_calls(calls: int, rpm: int) -> None:
    pacer("model", "stub-model", 4, rpm)  # the shared store reached before `ready`
    print("ready", flush=True)
    for n in range(calls):
        with pacer("model", "stub-model", 4, rpm).slot():
            print(f"call {n}", flush=True)


def main() -> None:
    if sys.argv[1] == "model":
        return model_calls(int(sys.argv[2]), int(sys.argv[3]))
    base = sys.argv[1]
    tool = PubMedSearch(base_url=base, max_retries=0)  # a 429 is an error here, not retried away
    window("ncbi", tool.base_url, ncbi_limit(), 1.0)  # the shared store reached before the start
    print("ready", flush=True)
    seconds = float(sys.stdin.readline().split()[1])
    stop = time.monotonic() + seconds
    counts = {"searches": 0, "errors": 0}
    lock = threading.Lock()

    def loop() -> None:
        while time.monotonic() < stop:
            try:
                tool.search("aspirin", 2)
                key = "searches"
            except SearchError:
                key = "errors"
            with lock:
                counts[key] += 1

    threads = [threading.Thread(target=loop) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
