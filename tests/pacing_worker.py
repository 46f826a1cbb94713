"""One worker process of tests/test_shared_limits.py: PubMed searches from a few threads against
the stub whose address is argv[1], paced by deepresearch's NCBI window (shared through
REDIS_URI or DATABASE_URI when the environment has one). It prints `ready`, waits for a line
`go SECONDS [THREADS]` on stdin, searches for that long (from THREADS threads, default 4), then prints its counts as JSON.

`arxiv`: the same with arXiv searches (argv[2] the stub's arXiv address).
`model CALLS RPM`: takes CALLS places of the model pacer (at most RPM a minute), printing
`ready`, then `call N` as each is given."""

from __future__ import annotations

import json
import sys
import threading
import time

from deepresearch.pacing import pacer, window
from deepresearch.tools.arxiv import ArxivSearch
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
    if sys.argv[1] == "arxiv":
        tool: ArxivSearch | PubMedSearch = ArxivSearch(base_url=sys.argv[2], max_retries=0)
        window("arxiv", tool.base_url, 1, 3.0, one_at_a_time=True)  # the shared store reached before the start
    else:
        tool = PubMedSearch(base_url=sys.argv[1], max_retries=0)  # a 429 is an error here, not retried away
        window("ncbi", tool.base_url, ncbi_limit(), 1.0)
    print("ready", flush=True)
    go = sys.stdin.readline().split()
    seconds, threads_n = float(go[1]), int(go[2]) if len(go) > 2 else THREADS
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

    threads = [threading.Thread(target=loop) for _ in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
