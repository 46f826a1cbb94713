"""CPU profile of the overhead row (row 2): where the Python work per model call goes.

    python -m bench.profile                 top 25 entries by own CPU time, then by cumulative
    python -m bench.profile --top 40 --runs 10 --bare
    python -m bench.profile --out /tmp/p.pstats    (for `python -m pstats /tmp/p.pstats`)

The iterative graph runs `--runs` times at zero latency against the stub, streamed like the
runner, exactly as in bench/overhead.py. Every thread of the process is profiled with its own
`cProfile.Profile` timed by `time.thread_time` (CPU time of that thread, so waiting on a lock or
a socket costs nothing): the profiles of LangGraph's worker threads, the search pool's and the
main thread are merged (the kept reply-reader and search threads are started anew inside the
profile); the stub's own threads (its HTTP server) are kept apart and only totalled (those
serving connections kept alive since the warm-up run are not profiled). `--bare` profiles the bare LangGraph graph of row 2 instead (the same messages,
the same stub).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import re
import sys
import threading
import time

from bench.harness import QUESTION, chat_requests, config_for, make_stub, setup_env, stream_run, stub_context

_profiles: list[tuple[str, cProfile.Profile]] = []
_plock = threading.Lock()


def _is_stub(name: str) -> bool:
    return "process_request_thread" in name or "serve_forever" in name


TIMER = time.thread_time  # --wall: time.perf_counter (waits count too)


def _start_thread_profile(frame, event, arg):  # threading.setprofile hook: the thread's first event
    prof = cProfile.Profile(TIMER)
    with _plock:
        _profiles.append((threading.current_thread().name, prof))
    prof.enable()  # replaces this hook for the thread


class profiled:
    """Profile the block in every thread started inside it (and the calling thread)."""

    def __enter__(self):
        _profiles.clear()
        self.main = cProfile.Profile(TIMER)
        _profiles.append(("MainThread", self.main))
        threading.setprofile(_start_thread_profile)
        self.main.enable()
        return self

    def __exit__(self, *exc):
        self.main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]

    def stats(self) -> tuple[pstats.Stats | None, float, float, dict[str, float]]:
        """(merged stats of our threads, our CPU seconds, the stub's CPU seconds, our CPU
        seconds by kind of thread)."""
        ours, stub_s, by_kind = None, 0.0, {}
        for name, prof in list(_profiles):
            try:
                prof.disable()  # a pool thread still alive: its profile so far
            except Exception:  # noqa: BLE001 - disabling from another thread is a no-op
                pass
            try:
                st = pstats.Stats(prof)
            except TypeError:  # a profile that recorded nothing
                continue
            if _is_stub(name):
                stub_s += st.total_tt
                continue
            kind = re.sub(r"[-_ ]?\d+(?:_\d+)?(?: \(.*\))?$", "", name) or name
            by_kind[kind] = by_kind.get(kind, 0.0) + st.total_tt
            if ours is None:
                ours = st
            else:
                ours.add(st)
        return ours, (ours.total_tt if ours else 0.0), stub_s, by_kind


def _fresh_kept_threads() -> None:
    """New groups of kept threads (reply readers, searches): the warm-up run started the old
    ones before the profile was on, and a thread is only profiled from its start."""
    import deepresearch.llm.streaming as streaming
    import deepresearch.nodes.execute_tools as execute_tools
    from deepresearch.worker_threads import KeptThreads

    streaming._READERS = KeptThreads("reply-reader", idle_seconds=KEPT_IDLE)
    execute_tools.SEARCHERS = KeptThreads("search", idle_seconds=KEPT_IDLE)


KEPT_IDLE = 0.25  # kept threads end this soon after the profiled runs, before the profiles are read:
# a thread's profile read while it waits would be closed with the reading thread's clock


def top(stats: pstats.Stats, key: str, n: int) -> str:
    buf = io.StringIO()
    stats.stream = buf
    stats.sort_stats(key).print_stats(n)
    text = buf.getvalue()
    start = text.find("   ncalls")
    return text[start:] if start >= 0 else text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="profiled runs (after one warm-up run)")
    ap.add_argument("--max-iterations", type=int, default=4)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--bare", action="store_true", help="profile the bare LangGraph graph of row 2 instead")
    ap.add_argument("--out", default=None, help="also write the merged pstats file here")
    ap.add_argument(
        "--wall",
        action="store_true",
        help="time by the wall clock instead of each thread's CPU time (where the threads wait)",
    )
    args = ap.parse_args(argv)
    global TIMER
    if args.wall:
        TIMER = time.perf_counter
    if args.runs < 1 or args.top < 1 or args.max_iterations < 1:
        ap.error("--runs, --top and --max-iterations must be at least 1")

    setup_env()
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from bench.harness import FAKE_OPENAI_KEY
    from bench.overhead import _messages, bare_graph
    from deepresearch.graphs.iterative import build

    with make_stub(latency=0.0) as stub:
        ctx = stub_context(stub, mode="iterative", max_iterations=args.max_iterations)
        cfg = lambda t: config_for(t, max_iterations=args.max_iterations)  # noqa: E731
        warm = stream_run(
            build(checkpointer=InMemorySaver(), store=InMemoryStore()), {"question": QUESTION}, cfg("warm"), ctx
        )
        if warm.error:
            print(f"the warm-up run failed: {warm.error}", file=sys.stderr)
            return 1
        calls = len(chat_requests(stub))
        prompts = [_messages(q["body"]) for q in chat_requests(stub)]
        model = ChatOpenAI(
            model="stub",
            base_url=stub.base_url,
            api_key=FAKE_OPENAI_KEY,
            timeout=30,
            max_retries=0,
            stream_usage=True,
            temperature=0.2,
        )
        if args.bare:
            for _ in bare_graph(model, prompts).stream(
                {"i": 0}, {"configurable": {"thread_id": "bw"}}, stream_mode=["custom", "values"]
            ):
                pass
        graphs = [
            bare_graph(model, prompts) if args.bare else build(checkpointer=InMemorySaver(), store=InMemoryStore())
            for _ in range(args.runs)
        ]  # compiled outside the profile: a server compiles once (row 2's store)
        _fresh_kept_threads()
        before = len(chat_requests(stub))
        t0 = time.monotonic()
        with profiled() as p:
            for k, graph in enumerate(graphs):
                if args.bare:
                    for _ in graph.stream(
                        {"i": 0},
                        {"configurable": {"thread_id": f"b{k}"}, "recursion_limit": len(prompts) + 10},
                        stream_mode=["custom", "values"],
                    ):
                        pass
                else:
                    r = stream_run(graph, {"question": QUESTION}, cfg(f"p{k}"), ctx)
                    if r.error:
                        print(f"run {k} failed: {r.error}", file=sys.stderr)
                        return 1
        wall = time.monotonic() - t0
        time.sleep(KEPT_IDLE * 3)  # the kept threads end (their profiles complete)
        n = len(chat_requests(stub)) - before
        stats, ours_s, stub_s, by_kind = p.stats()
    what = "bare LangGraph graph" if args.bare else "iterative graph"
    print(
        f"{what}: {args.runs} runs, {n} model calls ({calls} a run), wall {wall:.2f} s; "
        f"{'wall clock in threads' if args.wall else 'CPU'}: ours "
        f"{ours_s:.3f} s = {ours_s / n * 1000:.1f} ms per model call, the stub's {stub_s / n * 1000:.1f} ms per call "
        f"(profiled: cProfile slows Python about 2x)"
    )
    print(
        "by thread: "
        + ", ".join(f"{k} {v / n * 1000:.1f} ms" for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]))
        + " per model call"
    )
    if stats is None:
        return 1
    if args.out:
        stats.dump_stats(args.out)
    print(f"\nTop {args.top} by own CPU time (tottime):")
    print(top(stats, "tottime", args.top))
    print(f"Top {args.top} by cumulative CPU time (cumtime):")
    print(top(stats, "cumulative", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
