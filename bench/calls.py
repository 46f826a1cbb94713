"""One model call and one search, alone (no graph): where row 2's time per call goes.

    python -m bench.calls [--n 300]

Against the in-process stub at zero latency, CPU and wall time per call (median of three
rounds, each after a warm-up) of:

- the bare graph's call: `ChatOpenAI.invoke` through the openai SDK (not streamed);
- the same `ChatOpenAI.stream` through the SDK (what every call of ours was before
  deepresearch.llm.transport);
- ours: `deepresearch.llm.calls.chat` (budget, pacer, a reply read by a kept reader thread up to
  its cap, through deepresearch.llm.transport);
- one Tavily search through tools/tavily.py (a kept client).

The stub's own CPU is in every figure (it runs in this process).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.harness import FAKE_OPENAI_KEY, make_stub, setup_env, stub_context


def _time(fn, n: int) -> tuple[float, float]:
    for _ in range(max(5, n // 10)):
        fn()
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        fn()
    return (time.process_time() - c0) / n * 1000, (time.perf_counter() - w0) / n * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.calls", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300, help="calls per round")
    args = ap.parse_args(argv)
    setup_env()
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    from deepresearch.llm.budget import Budget
    from deepresearch.llm.calls import chat
    from deepresearch.tools.tavily import TavilySearch

    messages = [
        SystemMessage(content="You are a careful researcher. " * 20),
        HumanMessage(content="In two to four sentences, what do the sources say? " + "word " * 400),
    ]
    rows: dict[str, list[tuple[float, float]]] = {}
    with make_stub(latency=0.0) as stub:
        ctx = stub_context(stub, mode="iterative")
        sdk = ChatOpenAI(
            model="stub",
            base_url=stub.base_url,
            api_key=FAKE_OPENAI_KEY,
            timeout=30,
            max_retries=0,
            stream_usage=True,
            temperature=0.2,
        )
        budget = Budget(max_tokens=10**12, max_seconds=10**9, max_iterations=3)
        search = TavilySearch(base_url=stub.root_url)
        count = iter(range(10**9))
        cases = {
            "bare graph's call: ChatOpenAI.invoke (SDK)": lambda: sdk.invoke(messages),
            "ChatOpenAI.stream through the SDK": lambda: list(sdk.stream(messages)),
            "ours: llm.chat (streamed, lean transport)": lambda: chat(ctx, budget, messages, node="writer"),
            "one Tavily search (3 results)": lambda: search.search(f"eiffel tower {next(count)}", 3),
        }
        for _ in range(3):
            for name, fn in cases.items():
                rows.setdefault(name, []).append(_time(fn, args.n))
    width = max(map(len, rows))
    print(f"{'':{width}}  cpu ms  wall ms   (median of 3 rounds of {args.n})")
    for name, figures in rows.items():
        cpu = statistics.median(f[0] for f in figures)
        wall = statistics.median(f[1] for f in figures)
        print(f"{name:{width}}  {cpu:6.2f}  {wall:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
