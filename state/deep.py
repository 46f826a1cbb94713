"""State of the deep research graph, and its structured outline."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

from deepresearch.state.analysis import AnalysisData
from deepresearch.state.brief import BriefOutput, ChatInput, ChatOutput, ClarifyState
from deepresearch.state.feedback import FeedbackState

MAX_SECTIONS_SCHEMA = 20  # Context.max_sections is bounded by the same number


class SectionPlan(BaseModel):
    title: str = Field(min_length=1, description="The section's title.")
    key_question: str = Field(min_length=1, description="The question the section answers.")


class PlanHead(BaseModel):
    # an outline's title and background; each outline model below adds its own kind of sections
    title: str = Field(min_length=1, description="The report's title.")
    background: str = Field(default="", description="One or two sentences of context.")


class ReportPlan(PlanHead):
    sections: list[SectionPlan] = Field(
        min_length=1, max_length=MAX_SECTIONS_SCHEMA, description="The report's sections, in order."
    )


class DependentSection(SectionPlan):
    depends_on: list[int | str] = Field(
        default_factory=list,
        description="Titles (or numbers, counted from 0) of earlier sections this one builds on; empty if none.",
    )


class DependentReportPlan(PlanHead):
    """The outline of the `dependent` style (the same title, so one schema name to answer)."""

    model_config = ConfigDict(title="ReportPlan")
    sections: list[DependentSection] = Field(
        min_length=1, max_length=MAX_SECTIONS_SCHEMA, description="The report's sections, in order."
    )


class ReviewedSection(SectionPlan):
    """A section of a reviewer's replacement outline: `depends_on` may name anything; what
    does not resolve is dropped (with an event), never a reason to reject the outline."""

    depends_on: list[Any] = Field(default_factory=list)

    @field_validator("depends_on", mode="before")
    @classmethod
    def _as_list(cls, v):
        return [] if v is None else v if isinstance(v, list) else [v]


class ReviewedPlan(PlanHead):
    sections: list[ReviewedSection] = Field(min_length=1, max_length=MAX_SECTIONS_SCHEMA)


def outline_view(plan: dict) -> dict:
    """The outline as people see it: a title and sections with their key questions (and, in
    the dependent style, the sections each one builds on, by index)."""
    return {
        "title": plan["title"],
        "sections": [
            {"title": s["title"], "key_question": s["key_question"]}
            | ({"depends_on": list(s["depends_on"])} if "depends_on" in s else {})
            for s in plan["sections"]
        ],
    }


def collect(left: list | None, right: list | None) -> list:
    """Fan-in of section results; `None` resets (a new plan on the thread)."""
    if right is None:
        return []
    return (left or []) + right


class DeepInput(ChatInput, total=False):
    """What a caller passes in: `question`, or chat `messages`."""


class DeepOutput(BriefOutput, ChatOutput, total=False):
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
    analysis: AnalysisData  # what the question asks, read once by `analyse` (deepresearch.understanding)
    concepts: list[dict]  # what the research covers: the question's subjects (`analysis`)
    rewrite_history: list[dict]  # edits of the finished report: {action, scope?, start, end, new_end, at}
    citation_style: str  # set when not numeric: the style the report is delivered in (report/citation_style.py)
    charts: list[dict]  # {title, kind, section, points: [{label, value, unit, citation}], files, iterations}
    charts_skipped: str | None  # why no chart was drawn (nothing chartable), when none was
    provenance: dict  # {sentences, concepts, searches, uncited} (deepresearch.provenance.chains)


class DeepState(DeepInput, DeepOutput, ClarifyState, FeedbackState, total=False):
    plan: dict
    review_round: int
    review_action: str  # "ask" (review again), "revise" (back to the planner) or "go"
    review_comment: str | None
    review_error: str | None
    section_budget: dict
    fanout_at: float
    section_results: Annotated[list[dict], collect]
    # the dependent style: each section's dependencies (indices), the layers they make, and
    # what each researched section found (its research state, for its writer and dependents)
    depends: list[list[int]]
    layers: list[list[int]]
    section_findings: Annotated[list[dict], collect]
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
    language: str | None  # the report's language


class LayerTask(SectionTask, total=False):
    """A `Send` to layer_research / layer_write (the dependent style): a SectionTask's fields and these."""

    layer: int
    depends_on: list[int]
    dependents: int  # how many sections build on this one (none: it is written at once)
    evidence: list[dict]  # the dependencies' sources, numbered for this section
    prior: str  # the dependencies' findings, for this section's prompts
    failed_deps: list[str]  # titles of dependencies that could not be researched
    research: dict  # layer_write: the section's finished research (iterative state)
    research_seconds: float  # layer_write: how long that research took
