"""State of the iterative research loop.

State carries ids, short snippets and notes; full retrieved texts live in the run's store
(`deepresearch.store`) so checkpoints stay small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from langgraph.channels import DeltaChannel

from deepresearch.state.analysis import AnalysisData
from deepresearch.state.brief import BriefOutput, ChatInput, ChatOutput, ClarifyState
from deepresearch.state.feedback import FeedbackState


def add_evidence(current: list | None, writes: Sequence[list | None]) -> list:
    """Append new sources; a `None` write starts a fresh list (a new question on the thread).

    Used through LangGraph's DeltaChannel: checkpoints store only each step's new sources,
    not the whole growing list, so the checkpoint database grows linearly with the work.
    """
    out = list(current or [])
    for w in writes:
        out = [] if w is None else out + list(w)
    return out


class IterativeInput(ChatInput, total=False):
    """What a caller passes in: `question`, or chat `messages`."""


class IterativeOutput(BriefOutput, ChatOutput, total=False):
    """What a caller gets back."""

    question: str
    report: str
    sources: list[dict]
    usage: dict
    stopped_by: str
    citations: list[dict]
    removed: list[dict]
    errors: list[dict]
    analysis: AnalysisData  # what the question asks, read once by `analyse` (deepresearch.understanding)
    concepts: list[dict]  # what the research covers: the question's subjects, widened by `follow_leads`
    covered: list[str]  # names of the concepts some retrieved source covers
    unanswered: list[dict]  # what the question asks that no retrieved sentence answers (research/asked.py)
    rewrite_history: list[dict]  # edits of the finished report: {action, scope?, start, end, new_end, at}
    charts: list[dict]  # {title, kind, section, points: [{label, value, unit, citation}], files, iterations}
    charts_skipped: str | None  # why no chart was drawn (nothing chartable), when none was
    provenance: dict  # {sentences, concepts, searches, uncited} (deepresearch.provenance.chains)
    citation_style: str  # set when not numeric: the style the report is delivered in (report/citation_style.py)


class IterativeState(IterativeInput, IterativeOutput, ClarifyState, FeedbackState, total=False):
    """Everything the loop keeps between nodes."""

    asked: str  # the question this state's research is for
    iteration: int
    observations: list[str]  # the latest notes of `thinking`, bounded
    gaps: list[str]  # outstanding gaps from `knowledge_gap`
    tasks: list[dict]  # the searches chosen by `tool_selector`
    queries_done: list[str]
    rounds: list[int]  # the sources found by each gap check (two rounds adding none end the loop)
    # every retrieved source, {id, key, title, url, backend, snippet, text_ns}; nodes write only new ones
    evidence: Annotated[list[dict], DeltaChannel(add_evidence)]
    draft: str  # the writer's report before the source tracer checks it
    section: str  # set when the loop researches one section of a deep report
    prior: str  # a dependent section: what the sections it builds on found (shown with the notes)
