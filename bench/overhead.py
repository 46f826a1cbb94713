"""Row 2: orchestration overhead per model call, against a bare LangGraph graph.

Zero stub latency. Our iterative graph (streamed like the runner: custom + values, an
in-memory checkpointer and store, as `langgraph dev` gives a run; without a store the texts
go to the local file store) runs a fixed number of iterations; the bare graph is one node that
loops through LangGraph once per call, sending the very same message lists with a plain
`ChatOpenAI` to the same stub, also streamed with a checkpointer. Per-call time is the
run's wall time divided by its chat requests (median of several runs, interleaved); CPU per
call is the process's CPU time over the same span (the in-process stub's share included). The
bare graph runs twice: with `invoke` (the baseline of the ratio) and reading each reply as a
stream (as ours reads every reply, to cut it at its cap; the stub streams chunked and keeps
the connection, as a provider does). A third bare graph also
makes ours' searches (the same queries through the same Tavily backend, in ours' order, a
superstep per round, each round's searches at once as ours makes them): what is left between
it and ours is our research work and our graph's extra supersteps. A fourth does the same and
also takes as many supersteps as ours (the extra ones do nothing): ours' I/O and ours' steps
with none of the research work, the floor for a graph shaped like ours. A fifth is that floor
also sending progress events on the custom stream where ours sends its own (one before each
round's searches for each query, one from each search's thread when it returns, one before
each model call: 27 against ours' 28), with LangGraph's own `get_stream_writer`: the floor
as the issue defines it sends none, and each event costs a run of LangGraph's sync stream a
wake-up of its waiter thread and of the loop (bench/README.md, "Row 2: ours against the floor").
It is reported beside the floor, not instead of it.
"""

from __future__ import annotations

import statistics
import time
from typing import TypedDict

from bench.harness import FAKE_OPENAI_KEY, QUESTION, chat_requests, config_for, make_stub, stream_run, stub_context


class BareState(TypedDict):
    i: int


_POOL = None  # the bare graphs' search threads, kept across runs as ours' are


def bare_graph_with_searches(
    model, steps: list[tuple[str, object]], search, *, supersteps: int = 0, events: bool = False
):
    """The bare graph doing ours' I/O too: one superstep per model call (the same messages)
    and per round of searches (the same queries, at once, through the same Tavily backend),
    in ours' order; no research work around them. `supersteps`: pad with supersteps that do
    nothing up to that many (ours' count). `events`: also send progress events where ours
    sends its own (see the module's docstring)."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.config import get_stream_writer
    from langgraph.graph import END, START, StateGraph

    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(8, thread_name_prefix="bare-search")
    steps = steps + [("none", None)] * max(0, supersteps - len(steps))

    def step(state: BareState) -> dict:
        kind, what = steps[state["i"]]
        write = get_stream_writer() if events else None
        if kind == "call":
            if write:
                write({"type": "judging", "iteration": state["i"]})
            model.invoke(what)
        elif kind == "search":

            def one(query: str):
                found = search.search(query, 3)
                if write:
                    write({"type": "search_complete", "query": query, "tool": "tavily", "results": len(found)})
                return found

            if write:  # the writer reads the run's config: each search runs in a copy of the node's context
                for query in what:
                    write({"type": "searching", "query": query, "tool": "tavily"})
                list(_POOL.map(lambda cq: cq[0].run(one, cq[1]), [(contextvars.copy_context(), q) for q in what]))
            else:
                list(_POOL.map(one, what))
        return {"i": state["i"] + 1}

    g = StateGraph(BareState)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["i"] < len(steps) else END, ["step", END])
    return g.compile(checkpointer=InMemorySaver())


def _steps(requests: list[dict]) -> list[tuple[str, object]]:
    """Model calls and rounds of searches, in the order the stub saw them."""
    steps: list[tuple[str, object]] = []
    for q in requests:
        if "/chat/" in q["path"]:
            steps.append(("call", _messages(q["body"])))
        elif steps and steps[-1][0] == "search":
            steps[-1][1].append(q["body"]["query"])
        else:
            steps.append(("search", [q["body"]["query"]]))
    return steps


def bare_graph(model, prompts: list[list], *, streamed: bool = False):
    """START -> call -> (call again | END): one ChatOpenAI call per superstep (`streamed`:
    read as a stream of chunks, as ours reads every reply, instead of `invoke`)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    def call(state: BareState) -> dict:
        if streamed:
            for _ in model.stream(prompts[state["i"]]):
                pass
        else:
            model.invoke(prompts[state["i"]])
        return {"i": state["i"] + 1}

    g = StateGraph(BareState)
    g.add_node("call", call)
    g.add_edge(START, "call")
    g.add_conditional_edges("call", lambda s: "call" if s["i"] < len(prompts) else END, ["call", END])
    return g.compile(checkpointer=InMemorySaver())


def _messages(body: dict) -> list:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds.get(m.get("role"), HumanMessage)(content=str(m.get("content") or "")) for m in body["messages"]]


def _spread(xs: list[float]) -> str:
    """median (lower and upper quartile)"""
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else xs * 3
    return f"{statistics.median(xs):.2f} ({q[0]:.2f}-{q[-1]:.2f})"


def run(*, repeats: int = 5, max_iterations: int = 4, log=print) -> dict:
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from deepresearch.graphs.iterative import build
    from deepresearch.tools.tavily import TavilySearch

    ours_pc, bare_pc, stream_pc, ours_s, bare_s, io_pc, shaped_pc = [], [], [], [], [], [], []
    events_pc = []  # the floor also sending progress events
    shaped_cpu = []  # the floor's process CPU per call
    ours_cpu, bare_cpu, stream_cpu = [], [], []  # process CPU time (the stub's threads included)
    searches = calls = supersteps = 0
    errors = []
    with make_stub(latency=0.0) as stub:
        ctx = stub_context(stub, mode="iterative", max_iterations=max_iterations)
        model = ChatOpenAI(
            model="stub",
            base_url=stub.base_url,
            api_key=FAKE_OPENAI_KEY,
            timeout=ctx.request_timeout,
            max_retries=ctx.max_retries,
            stream_usage=True,
            temperature=0.2,
        )
        prompts: list[list] = []
        steps: list[tuple[str, object]] = []
        search = TavilySearch(base_url=stub.root_url)
        # compiled once, as a server compiles its graphs once and runs every thread on them (with one
        # checkpointer and one store): what a compiled graph works out on its first run is not a run's cost
        graph = build(checkpointer=InMemorySaver(), store=InMemoryStore())
        bare: dict = {}  # the bare graphs, compiled once too (the same steps every run), by `streamed`
        io_graphs: dict = {}  # the bare graphs making ours' searches, by (the supersteps they pad to, sending events)
        for rep in range(repeats + 1):  # the first round warms both up and is not counted
            start = len(stub.requests)
            c0 = time.process_time()
            r = stream_run(graph, {"question": QUESTION}, config_for(f"o{rep}", max_iterations=max_iterations), ctx)
            cpu_ours = time.process_time() - c0
            if r.error:
                errors.append(r.error)
            mine = stub.requests[start:]
            n_chat = sum(1 for q in mine if "/chat/" in q["path"])
            if not prompts:
                prompts = [_messages(q["body"]) for q in chat_requests(stub)[-n_chat:]]
                calls, searches = n_chat, len(mine) - n_chat
                steps = _steps(mine)
                # the last checkpoint's step counts the supersteps that ran nodes (as the bare graphs')
                supersteps = graph.get_state(config_for(f"o{rep}", max_iterations=max_iterations)).metadata["step"]
            times, cpu = {}, {}
            for streamed in (False, True):
                if streamed not in bare:
                    bare[streamed] = bare_graph(model, prompts, streamed=streamed)
                t0, c0 = time.monotonic(), time.process_time()
                for _ in bare[streamed].stream(
                    {"i": 0},
                    {"configurable": {"thread_id": f"b{rep}{streamed}"}, "recursion_limit": len(prompts) + 10},
                    stream_mode=["custom", "values"],
                ):
                    pass
                times[streamed] = time.monotonic() - t0
                cpu[streamed] = time.process_time() - c0
            io_s, io_cpu = {}, {}
            for padded, events in ((0, False), (supersteps, False), (supersteps, True)):
                key = (padded, events)
                if key not in io_graphs:
                    io_graphs[key] = bare_graph_with_searches(model, steps, search, supersteps=padded, events=events)
                t0, c0 = time.monotonic(), time.process_time()
                for _ in io_graphs[key].stream(
                    {"i": 0},
                    {
                        "configurable": {"thread_id": f"io{rep}{padded}{events}"},
                        "recursion_limit": max(len(steps), padded) + 10,
                    },
                    stream_mode=["custom", "values"],
                ):
                    pass
                io_s[key] = time.monotonic() - t0
                io_cpu[key] = time.process_time() - c0
            if rep == 0:
                continue
            io_pc.append(io_s[0, False] / len(prompts))
            shaped_pc.append(io_s[supersteps, False] / len(prompts))
            shaped_cpu.append(io_cpu[supersteps, False] / len(prompts))
            events_pc.append(io_s[supersteps, True] / len(prompts))
            ours_cpu.append(cpu_ours / n_chat)
            bare_cpu.append(cpu[False] / len(prompts))
            stream_cpu.append(cpu[True] / len(prompts))
            ours_s.append(r.seconds)
            bare_s.append(times[False])
            ours_pc.append(r.seconds / n_chat)
            bare_pc.append(times[False] / len(prompts))
            stream_pc.append(times[True] / len(prompts))
    ours, bare, streamed = statistics.median(ours_pc), statistics.median(bare_pc), statistics.median(stream_pc)
    out = {
        "repeats": repeats,
        "max_iterations": max_iterations,
        "model_calls": calls,
        "search_requests": searches,
        "ours_per_call_ms": ours * 1000,
        "bare_per_call_ms": bare * 1000,
        "ratio": ours / bare,
        "extra_per_call_ms": (ours - bare) * 1000,
        "ours_run_s": statistics.median(ours_s),
        "bare_run_s": statistics.median(bare_s),
        "bare_streamed_per_call_ms": streamed * 1000,
        "ratio_streamed": ours / streamed,
        "ours_cpu_per_call_ms": statistics.median(ours_cpu) * 1000,
        "bare_cpu_per_call_ms": statistics.median(bare_cpu) * 1000,
        "bare_streamed_cpu_per_call_ms": statistics.median(stream_cpu) * 1000,
        "cpu_ratio": statistics.median(ours_cpu) / statistics.median(bare_cpu),
        "bare_io_per_call_ms": statistics.median(io_pc) * 1000,
        "ratio_io": ours / statistics.median(io_pc),
        "io_to_bare": statistics.median(io_pc) / bare,
        "supersteps": supersteps,
        "bare_steps": len(steps),
        "bare_shaped_per_call_ms": statistics.median(shaped_pc) * 1000,
        "shaped_to_bare": statistics.median(shaped_pc) / bare,
        "ratio_shaped": ours / statistics.median(shaped_pc),
        # the same comparison run by run (each run of ours against the floor run right after it): on a
        # shared machine one run's figure moves by a tenth or more, so its spread is reported too
        "ratio_shaped_runs": [round(a / b, 3) for a, b in zip(ours_pc, shaped_pc)],
        "ratio_shaped_cpu": statistics.median(ours_cpu) / statistics.median(shaped_cpu),
        # the floor sending progress events where ours sends its own (reported beside the floor)
        "bare_events_per_call_ms": statistics.median(events_pc) * 1000,
        "ratio_events": ours / statistics.median(events_pc),
        "ratio_events_runs": [round(a / b, 3) for a, b in zip(ours_pc, events_pc)],
        "errors": errors,
    }
    log(
        f"  ours {out['ours_per_call_ms']:.1f} ms/call, bare {out['bare_per_call_ms']:.1f} ms/call "
        f"(streamed {out['bare_streamed_per_call_ms']:.1f}), ratio {out['ratio']:.2f} "
        f"({out['ratio_streamed']:.2f} to the streamed bare graph; {out['ratio_io']:.2f} to the bare graph making "
        f"ours' searches too, {out['bare_io_per_call_ms']:.1f} ms/call, itself {out['io_to_bare']:.2f} the bare graph; "
        f"{out['ratio_shaped']:.2f} to it in ours' {supersteps} supersteps, {out['bare_shaped_per_call_ms']:.1f} ms/call, "
        f"itself {out['shaped_to_bare']:.2f}; run by run {_spread(out['ratio_shaped_runs'])}; "
        f"CPU {out['ratio_shaped_cpu']:.2f}; {out['ratio_events']:.2f} to it sending events too, "
        f"{out['bare_events_per_call_ms']:.1f} ms/call)"
    )
    return out
