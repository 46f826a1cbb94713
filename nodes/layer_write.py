"""`layer_write`: the writing of a section that others depend on (the dependent style).

It runs in the step after the section's research, next to the research of the sections that
need it (pipelining: they need its findings, not its prose). The writer continues the
section's research state, with the budget share the section was given: research and writing
together keep to it.
"""

from __future__ import annotations

import time

from deepresearch.config import get_context
from deepresearch.sections.run import complete, run_section, section_context, section_result


def make_layer_write(writer_graph):
    """`writer_graph` runs the writer on a section's research state."""

    def layer_write(task: dict, runtime=None) -> dict:
        ctx = get_context(runtime)
        research = task["research"]
        started = time.monotonic()
        last, reason = run_section(writer_graph, research, section_context(ctx, task), task["index"])
        seconds = task.get("research_seconds", 0.0) + time.monotonic() - started
        result = section_result(task, {**research, **last}, reason, seconds)
        complete(result)
        return {"section_results": [result]}

    return layer_write
