"""The question's analysis as state keeps it (node `analyse`; deepresearch.understanding reads it).

Plain data, so every checkpointer and the server's JSON carry it as they are; nodes read it as the
frozen `deepresearch.understanding.analysis.Analysis`.
"""

from __future__ import annotations

from typing_extensions import TypedDict


class ConceptData(TypedDict, total=False):
    """A thing or topic the research covers: `name`, the `query` searched for it, the backend
    `title` it is linked to (coverage then means that document was retrieved), the question's
    `phrase` for it, and its `origin`: question, model, described (a subject the question
    describes), bridge (reached through another thing's text), related (a broad question's
    related topic). Bridges and related concepts also say `via` what, and bridges the `sentence`
    and `source` that named them. A described subject that is not itself the answer ("which sea
    does the longest river ... flow into" describes a river) is `asked_of`."""

    name: str
    query: str
    title: str | None
    phrase: str
    origin: str
    description: str
    via: str
    sentence: str
    source: str
    asked_of: bool
    hops: int  # a bridge: how many of the question's roles it follows at once (1 unless said)


class FocusData(TypedDict):
    kind: str
    words: list[str]
    noun: str | None
    relation: str | None
    aspects: list[str]
    description: str | None


class HopData(TypedDict):
    relation: str
    phrase: str
    person: bool


class PartData(TypedDict):
    text: str
    kind: str


class AnalysisData(TypedDict):
    question: str
    language: str
    subjects: list[ConceptData]
    focus: FocusData
    broad: bool
    comparison: bool
    compared: list[ConceptData]
    hops: list[HopData]
    words: list[str]
    parts: list[PartData]
    spelled: str
