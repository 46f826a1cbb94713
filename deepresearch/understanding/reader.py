"""One small interface, two readers: `reader_for` picks the embedded rules or a capable model (checked
by the rules), and `Analysis.of(state)` gives back what the `analyse` node stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from deepresearch.config import Context, tiny_model
from deepresearch.llm.budget import Budget
from deepresearch.state.analysis import ConceptData
from deepresearch.understanding.analysis import Analysis
from deepresearch.understanding.embedded.reader import EmbeddedReader, rules_reading
from deepresearch.understanding.linking import linking_backend
from deepresearch.understanding.model import ModelReader


class Reader(Protocol):
    def read(
        self, question: str, brief: str, given: Sequence[ConceptData] | None = None
    ) -> tuple[Analysis, list[dict]]:
        """The question's analysis (its concepts `given`, or found), and the errors met finding them.
        `brief`: the question with what the person said when asked to clarify it."""
        ...


def reader_for(ctx: Context, budget: Budget, *, outline: bool = False) -> Reader:
    """The embedded rules for the tiny local model, else the model checked by the rules, for both
    graphs. `outline`: the deep graph's question (the rules read it as English)."""
    backend = linking_backend(ctx)
    if tiny_model(ctx):
        return EmbeddedReader(backend, any_language=not outline)
    return ModelReader(ctx, budget, backend)


def prepare(ctx: Context, question: str) -> None:
    """Load what reading `question` and a first search take: the run's first search backend (the
    encyclopedia: its titles and search index), its vocabulary and the embedding model, by reading
    the question once with the rules (no model call; a backend without titles is not searched).
    Start-up, done before a run's graph starts: loading has no deadline (a loaded machine takes
    several times an idle one's time), so inside the run it could carry the run past its budget."""
    backend = linking_backend(ctx)
    EmbeddedReader(backend).read(question, question)
    if load := getattr(backend, "load", None):  # what a local backend's first search reads
        load()


def analysis_of(state: Mapping[str, Any]) -> Analysis:
    """The analysis the `analyse` node stored; a state from before that node existed (an older
    checkpoint) is read by the rules from its question and concepts."""
    data = state.get("analysis")
    if data and data.get("question") == state.get("question"):
        return Analysis.of_data(data)
    return rules_reading(state.get("question", ""), state.get("concepts") or [])
