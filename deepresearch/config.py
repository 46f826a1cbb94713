"""The runtime context: every setting of a run, with its default and a description.

This is the one source of configuration. The CLI, `langgraph dev` / Studio and Python
callers all pass a `Context` (or a dict of its fields); nodes read it through
`get_context(runtime)`, which applies the defaults when no context was passed.
Environment variables are read only for secrets (API keys) and for `base_url` when the
context leaves it empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal


MAX_SECTIONS = 20
MAX_QUESTION_CHARS = 4000


def validate_question(question: str) -> str:
    """The question, stripped; ValueError when it is empty or too long."""
    q = (question or "").strip()
    if not q:
        raise ValueError("the question is empty")
    if len(q) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question is {len(q):,} characters long; the limit is {MAX_QUESTION_CHARS:,}")
    return q


def _f(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Settings of one research run."""

    model: str = _f(
        "local",
        "Chat model: 'local' (SmolLM2-135M in-process, offline) or 'openai:<model>' "
        "for any OpenAI-compatible endpoint.",
    )
    base_url: str | None = _f(
        None, "Base URL of the OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI)."
    )
    search: str = _f(
        "wiki",
        "Search backend: 'wiki' (offline encyclopedia), 'docs:<folder>' (your own files) "
        "or 'tavily' (TAVILY_API_KEY).",
    )
    search_base_url: str | None = _f(None, "Override of the Tavily API base URL (proxies, tests).")
    mode: Literal["auto", "iterative", "deep"] = _f(
        "auto", "Which research workflow: one loop (iterative), outline + sections (deep), or auto."
    )
    max_iterations: int = _f(3, "Research loop iterations (search rounds) at most, per loop.")
    max_tokens: int = _f(40000, "Total token budget of the run (input + output, all calls).")
    max_seconds: float = _f(600.0, "Wall-clock budget of the run in seconds.")
    results_per_query: int = _f(3, "Search results kept per query.")
    max_sections: int = _f(5, "Deep mode: sections in the outline at most (up to 20).")
    section_concurrency: int | None = _f(None, "Deep mode: sections researched at once (default: all).")
    outline_style: Literal["parallel", "dependent"] = _f(
        "parallel",
        "Deep mode: every section researched at once (parallel), or sections that build on earlier "
        "ones (dependent): the outline gives each section `depends_on`, sections run in layers, a "
        "section starts when the research of those it depends on is done and gets their findings.",
    )
    outline_review: bool = _f(False, "Deep mode: pause for a person to review the outline.")
    max_review_rounds: int = _f(3, "Deep mode: outline review rounds before going ahead.")
    writer: Literal["auto", "single", "per_source", "extractive"] = _f(
        "auto",
        "How the writer works: one call for the whole report (single), one paragraph per "
        "source (per_source), the sources' own sentences chosen for the question (extractive: "
        "cannot invent, no model call), or auto (extractive for 'local', else single). Every "
        "style's sentences are checked: uncited or unsupported ones are dropped.",
    )
    planner: Literal["auto", "model", "concepts"] = _f(
        "auto",
        "Deep mode: outline from a model call (model), one section per concept of the question "
        "(concepts), or auto (concepts for 'local', else model). Model outlines are checked: a "
        "section off the question is replaced, and a comparison covers everything it compares.",
    )
    verify_with_model: bool = _f(
        False, "Judge each citation with a model call instead of the offline overlap scorer."
    )
    support_threshold: float = _f(0.25, "Citations scoring below this are marked unverified.")
    model_concurrency: int = _f(8, "Model calls in flight at once, across parallel sections.")
    model_rpm: int = _f(0, "Model requests per minute at most (0: no limit).")
    search_concurrency: int = _f(4, "Search requests in flight at once.")
    search_rpm: int = _f(0, "Search requests per minute at most (0: no limit).")
    request_timeout: float = _f(60.0, "Seconds one model or search request may take.")
    max_retries: int = _f(4, "Retries of a failed model or search request (429, 5xx, timeouts).")

    def __post_init__(self) -> None:
        for name, minimum in (
            ("max_iterations", 1),
            ("max_tokens", 1),
            ("max_sections", 1),
            ("max_review_rounds", 1),
            ("results_per_query", 1),
            ("model_concurrency", 1),
            ("search_concurrency", 1),
        ):
            if getattr(self, name) < minimum:
                raise ValueError(f"{name} must be at least {minimum}")
        if self.outline_style not in ("parallel", "dependent"):
            raise ValueError(f"outline_style must be 'parallel' or 'dependent', not {self.outline_style!r}")
        if self.max_sections > MAX_SECTIONS:
            raise ValueError(f"max_sections must be at most {MAX_SECTIONS}")
        if self.section_concurrency is not None and self.section_concurrency < 1:
            raise ValueError("section_concurrency must be at least 1")
        if self.max_seconds <= 0:
            raise ValueError("max_seconds must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must not be negative")


def tiny_model(ctx: Context) -> bool:
    """The embedded model: it proves the pipeline runs; the pipeline does not trust its judgement
    for what it can check itself (outlines, writing)."""
    return ctx.model == "local"


def get_context(runtime: Any = None) -> Context:
    """The run's context with defaults applied (LangGraph passes None when none was given)."""
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    if ctx is None:
        return Context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, dict):
        return Context(**{k: v for k, v in ctx.items() if k in CONTEXT_FIELDS})
    raise TypeError(f"context must be a Context or a dict, not {type(ctx).__name__}")


CONTEXT_FIELDS = frozenset(f.name for f in fields(Context))

__all__ = ["Context", "get_context", "CONTEXT_FIELDS", "replace"]
