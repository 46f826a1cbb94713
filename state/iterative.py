"""State of the iterative research loop.

State carries ids, short snippets and notes; full retrieved texts live in the text store
(`deepresearch.state.sources.TEXTS`) so checkpoints stay small.
"""

from __future__ import annotations

from typing_extensions import TypedDict


class IterativeInput(TypedDict):
    """What a caller passes in."""

    question: str


class IterativeOutput(TypedDict, total=False):
    """What a caller gets back."""

    question: str
    report: str
    sources: list[dict]
    usage: dict
    stopped_by: str
    citations: list[dict]
    removed: list[dict]
    errors: list[dict]


class IterativeState(IterativeInput, IterativeOutput, total=False):
    """Everything the loop keeps between nodes."""

    iteration: int
    observations: list[str]  # the latest notes of `thinking`, bounded
    gaps: list[str]  # outstanding gaps from `knowledge_gap`
    tasks: list[dict]  # the searches chosen by `tool_selector`
    queries_done: list[str]
    evidence: list[dict]  # every retrieved source: {id, key, title, url, backend, snippet}
    draft: str  # the writer's report before the source tracer checks it
    section: str  # set when the loop researches one section of a deep report
