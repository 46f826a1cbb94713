"""Served graphs run on an event loop (langgraph dev, LangGraph Server), where LangGraph hands
sync nodes to the loop's default executor: a few threads shared by every run. The graphs'
sync nodes run in threads of their own there (deepresearch.node_threads), so concurrent runs
and their sections do not queue behind that executor. Each test gives the loop a default
executor of 2 threads and needs more nodes than that waiting at the same time."""

import asyncio
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from deepresearch.config import Context
from deepresearch.graphs.deep import build
from deepresearch.node_threads import own_threads
from tests.deep_helpers import deep_responder

Q = "Give an overview of the Eiffel Tower: its design, construction and purpose"
WAIT = 60  # seconds the barrier waits before it breaks (only ever reached when the code is broken)


def on_small_loop(coro_fn):
    """Run `coro_fn()` on a fresh event loop whose default executor has 2 threads."""

    async def go():
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
        return await coro_fn()

    return asyncio.run(go())


class S(TypedDict):
    i: int
    thread: str


def test_a_sync_node_runs_in_its_own_threads_with_the_runs_context():
    meet = threading.Barrier(6, timeout=WAIT)

    def node(state: S, runtime=None) -> dict:
        meet.wait()  # six runs' nodes at once: more than the loop's two threads
        return {"i": state["i"] + runtime.context["add"], "thread": threading.current_thread().name}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_edge("node", END)
    graph = own_threads(g).compile()

    async def runs():
        return await asyncio.gather(*(graph.ainvoke({"i": i}, context={"add": 100}) for i in range(6)))

    out = on_small_loop(runs)
    assert sorted(o["i"] for o in out) == [100, 101, 102, 103, 104, 105]  # the runtime reached the node
    assert all(o["thread"].startswith("deepresearch-node") for o in out)
    assert not meet.broken


def test_sections_of_concurrent_served_deep_runs_research_together(fake_model):
    """Two deep runs of three sections each: all six sections are in their research loops at
    once (each section's one knowledge-gap call waits for the five others)."""
    meet = threading.Barrier(6, timeout=WAIT)
    base = deep_responder(3)

    def respond(kind, prompt, n):
        if kind == "KnowledgeGapOutput":
            try:
                meet.wait()
            except threading.BrokenBarrierError as e:
                return e
        return base(kind, prompt, n)

    spec, model = fake_model(respond)
    graph = build(checkpointer=InMemorySaver())
    ctx = Context(model=spec, writer="single", max_iterations=2)

    async def runs():
        return await asyncio.gather(
            *(
                graph.ainvoke(
                    {"question": Q},
                    {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60},
                    context=ctx,
                )
                for _ in range(2)
            )
        )

    finals = on_small_loop(runs)
    assert not meet.broken
    for final in finals:
        assert [s["status"] for s in final["sections"]] == ["done"] * 3
        assert final["report"].count("## ") >= 3
    assert sum(1 for c in model.calls if c["kind"] == "KnowledgeGapOutput") == 6


def test_a_finished_runs_section_gate_is_not_kept(fake_model):
    """`section_concurrency` holds a run's sections to N at once with a gate per run; a server
    executing run after run keeps no gate of a finished run."""
    import gc

    from deepresearch.sections import run as section_run

    spec, model = fake_model(deep_responder(3))
    graph = build(checkpointer=InMemorySaver())
    ctx = Context(model=spec, writer="single", max_iterations=2, section_concurrency=1)
    for _ in range(3):
        final = graph.invoke(
            {"question": Q}, {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 60}, context=ctx
        )
        assert [s["status"] for s in final["sections"]] == ["done"] * 3
    gc.collect()
    assert len(section_run._gates) == 0
