"""State of the deep research graph, and its structured outline."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from pydantic import BaseModel, Field

from deepresearch.state.brief import BriefOutput, ClarifyState

MAX_SECTIONS_SCHEMA = 20  # Context.max_sections is bounded by the same number


class SectionPlan(BaseModel):
    title: str = Field(min_length=1, description="The section's title.")
    key_question: str = Field(min_length=1, description="The question the section answers.")


class ReportPlan(BaseModel):
    title: str = Field(min_length=1, description="The report's title.")
    background: str = Field(default="", description="One or two sentences of context.")
    sections: list[SectionPlan] = Field(min_length=1, max_length=MAX_SECTIONS_SCHEMA,
                                        description="The report's sections, in order.")


def outline_view(plan: dict) -> dict:
    """The outline as people see it: a title and sections with their key questions."""
    return {"title": plan["title"],
            "sections": [{"title": s["title"], "key_question": s["key_question"]} for s in plan["sections"]]}


def collect(left: list | None, right: list | None) -> list:
    """Fan-in of section results; `None` resets (a new plan on the thread)."""
    if right is None:
        return []
    return (left or []) + right


class DeepInput(TypedDict):
    question: str


class DeepOutput(BriefOutput, total=False):
    question: str
    report: str
    outline: dict
    sections: list[dict]  # {title, status, stopped_by, sources, reason?}
    sources: list[dict]
    citations: list[dict]
    removed: list[dict]
    usage: dict
    stopped_by: str
    errors: list[dict]
    concepts: list[dict]  # what the question is about (deepresearch.concepts)


class DeepState(DeepInput, DeepOutput, ClarifyState, total=False):
    plan: dict
    review_round: int
    review_action: str  # "ask" (review again), "revise" (back to the planner) or "go"
    review_comment: str | None
    review_error: str | None
    section_budget: dict
    fanout_at: float
    section_results: Annotated[list[dict], collect]
    evidence: list[dict]  # the run's source registry after collect_drafts (ids renumbered globally)
    drafts: list[dict]  # per section, in outline order, citations in global numbers
    draft: str  # the assembled report before the source tracer


class SectionTask(TypedDict):
    """What one `Send` to section_research carries: only what the branch needs."""

    index: int
    title: str
    key_question: str
    report_title: str
    budget: dict
    concepts: list[dict]  # the section's concepts, set by the planner (empty: the section finds its own)
    brief: str  # the report's brief (the question and the person's clarifications)
    language: str  # the report's language
