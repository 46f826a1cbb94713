"""Row 4: prompt tokens per iteration as the research goes on.

The iterative graph runs `max_iterations` iterations with a responder that never judges
the research complete and finds new sources on every search. The stub records every
request; each is assigned to its node (from its prompt) and to its iteration (a new
iteration starts with each `thinking` call; the last search round feeds only the writer,
which is reported apart). Tokens are characters / 4, as the stub counts.
"""

from __future__ import annotations

from bench.harness import (
    QUESTION,
    chat_requests,
    config_for,
    make_stub,
    node_of,
    prompt_tokens,
    responder,
    stream_run,
    stub_context,
)

LOOP_NODES = ("thinking", "knowledge_gap", "tool_selector")


def trend(values: list[int]) -> str:
    """'flat' when the last step adds under 3% (the prompt has reached its cap), else the growth."""
    if len(values) < 3:
        return "n/a"
    step = values[-1] - values[-2]
    if step <= 0.03 * values[-1]:
        return "flat"
    return f"growing (+{step} tokens/iteration at the end)"


def run(*, max_iterations: int = 8, log=print) -> dict:
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.graphs.iterative import build

    with make_stub(responder(), latency=0.0) as stub:
        ctx = stub_context(stub, mode="iterative", max_iterations=max_iterations)
        r = stream_run(
            build(checkpointer=InMemorySaver()),
            {"question": QUESTION},
            config_for("t", max_iterations=max_iterations),
            ctx,
        )
        calls = []
        iteration = 0
        for req in chat_requests(stub):
            node = node_of(req["body"])
            if node == "thinking":
                iteration += 1
            calls.append({"iteration": iteration, "node": node, "prompt_tokens": prompt_tokens(req["body"])})
    per_iter: dict[int, dict] = {}
    for c in calls:
        per_iter.setdefault(c["iteration"], {})[c["node"]] = (
            per_iter.get(c["iteration"], {}).get(c["node"], 0) + c["prompt_tokens"]
        )
    table = [{"iteration": i, **{k: t for k, t in v.items() if k in LOOP_NODES}} for i, v in sorted(per_iter.items())]
    trends = {n: trend([row[n] for row in table if n in row]) for n in LOOP_NODES}
    writer = sum(c["prompt_tokens"] for c in calls if c["node"] == "writer")
    loop_rows = [row for row in table if any(n in row for n in LOOP_NODES)]
    bounded = all(t in ("flat", "n/a") for t in trends.values())
    out = {
        "max_iterations": max_iterations,
        "iterations_run": r.final.get("usage", {}).get("iterations"),
        "stopped_by": r.final.get("stopped_by"),
        "sources": len(r.final.get("evidence", r.final.get("sources", []))),
        "per_iteration": table,
        "trend": trends,
        "writer_prompt_tokens": writer,
        "bounded": bounded,
        "error": r.error,
        "first_iteration_total": sum(v for k, v in loop_rows[0].items() if k in LOOP_NODES) if loop_rows else None,
        "last_iteration_total": sum(v for k, v in loop_rows[-1].items() if k in LOOP_NODES) if loop_rows else None,
    }
    log(f"  {'bounded' if bounded else 'NOT bounded'}: " + ", ".join(f"{k} {v}" for k, v in trends.items()))
    return out
