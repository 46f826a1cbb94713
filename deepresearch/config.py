"""The runtime context: every setting of a run, with its default and a description.

This is the one source of configuration. The CLI, `langgraph dev` / Studio and Python
callers all pass a `Context` (or a dict of its fields); nodes read it through
`get_context(runtime)`, which applies the defaults when no context was passed.
Environment variables are read only for secrets (API keys) and for `base_url` when the
context leaves it empty.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from deepresearch import language, templates
from deepresearch.choices import citation_styles, controls, gguf, report_styles
from deepresearch.choices.backends import base_url_help, search_help
from deepresearch.choices.prices import price_for
from deepresearch.embeddings.registry import check as embeddings_check
from deepresearch.text.safe import echoed

MAX_SECTIONS = 20
MAX_QUESTION_CHARS = 4000
MAX_CLARIFY_QUESTIONS = 10
_SCHEMAS: dict = {}  # Context's pydantic schemas, made once (Context.__get_pydantic_core_schema__)


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
        "Chat model: 'local' (SmolLM2-135M in-process, offline), 'none' (no model: the extractive pipeline; a "
        "setting that needs a model is refused), 'gguf:<path>' (any chat GGUF file, in-process; "
        "the context window from its metadata), 'openai:<model>' for any "
        "OpenAI-compatible endpoint, or a local server's model: 'ollama:<model>', 'vllm:<model>', "
        "'llamacpp:<model>', 'lmstudio:<model>' (each at its usual local address unless base_url is set).",
    )
    base_url: str | None = _f(None, "Base URL of the OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI).")
    search: str = _f("wiki", search_help())
    embeddings: str = _f(
        "auto",
        "How texts are compared by meaning (the encyclopedia's and a docs folder's hybrid search; the "
        "re-ranking of web and tool results): 'local' (all-MiniLM-L6-v2 in-process, offline), 'local-int8' "
        "(the same with int8 weights: faster, ranks a little differently), 'openai:<model>' or a local "
        "server's ('ollama:nomic-embed-text'), 'none' (BM25 alone), or 'auto': local when its model is "
        "installed, else none.",
    )
    embeddings_base_url: str | None = _f(
        None, "Base URL of the embeddings endpoint (default: the provider's usual one; OPENAI_BASE_URL for openai:)."
    )
    search_base_url: str | None = _f(None, "Override of the Tavily API base URL (proxies, tests).")
    search_base_urls: dict[str, str] | None = _f(
        None, "Base URL overrides per backend, e.g. {'pubmed': 'https://proxy.example/eutils'} " + base_url_help() + "."
    )
    include_domains: list[str] | None = _f(
        None,
        "Web domains the run may use, e.g. ['nih.gov', 'who.int'] (subdomains too): web search is asked "
        "for them only, and a result from any other domain, from any backend, never enters the run.",
    )
    exclude_domains: list[str] | None = _f(
        None, "Web domains the run never uses (subdomains too), whatever a backend returns."
    )
    time_range: Literal["day", "week", "month", "year"] | None = _f(
        None, "Web search: only pages from the last day, week, month or year (Tavily's time_range)."
    )
    start_date: str | None = _f(None, "Web search: only pages from this date on, YYYY-MM-DD (Tavily's start_date).")
    search_depth: Literal["basic", "advanced"] | None = _f(
        None, "Web search depth: 'basic' or 'advanced' (Tavily's search_depth; None: Tavily's default)."
    )
    docs_include: list[str] | None = _f(
        None,
        "Documents: read only the files matching one of these patterns, e.g. ['*.md', 'reports/*'] "
        "(matched against the path in the folder and the file name).",
    )
    docs_exclude: list[str] | None = _f(None, "Documents: never read the files matching one of these patterns.")
    mcp_servers: str | dict | None = _f(
        None,
        "MCP servers whose search tools join the run: the path of a JSON config, or the config "
        "itself, {'mcpServers': {name: {'command', 'args', 'env'} | {'url', 'transport'}}}.",
    )
    mode: Literal["auto", "iterative", "deep"] = _f(
        "auto", "Which research workflow: one loop (iterative), outline + sections (deep), or auto."
    )
    max_iterations: int = _f(3, "Research loop iterations (search rounds) at most, per loop.")
    max_tokens: int = _f(40000, "Total token budget of the run (input + output, all calls).")
    max_seconds: float = _f(600.0, "Wall-clock budget of the run in seconds.")
    max_cost: float | None = _f(
        None,
        "Cost budget of the run in US dollars, at the model's price (None: no limit). It holds like the "
        "token budget: when it runs out the report is written from what was found. Needs a known price.",
    )
    prices: str | None = _f(
        None,
        "A TOML file of model prices, dollars per million tokens: [model] input, cached_input, output; "
        "it overrides the built-in table (default: prices.toml in the user config directory, if any).",
    )
    results_per_query: int = _f(3, "Search results kept per query.")
    max_sections: int = _f(5, "Deep mode: sections in the outline at most (up to 20).")
    section_concurrency: int | None = _f(None, "Deep mode: sections researched at once (default: all).")
    section_execution: Literal["local", "server"] = _f(
        "local",
        "Deep mode: where sections are researched: 'local' (threads of the process running the report) or "
        "'server' (each a run of the deployment's `section` graph on the LangGraph server, which any worker "
        "takes; the server's address is DEEPRESEARCH_SECTION_SERVER, see docs/server.md).",
    )
    outline_style: Literal["parallel", "dependent"] = _f(
        "parallel",
        "Deep mode: every section researched at once (parallel), or sections that build on earlier "
        "ones (dependent): the outline gives each section `depends_on`, sections run in layers, a "
        "section starts when the research of those it depends on is done and gets their findings.",
    )
    outline_review: bool = _f(False, "Deep mode: pause for a person to review the outline.")
    max_review_rounds: int = _f(3, "Deep mode: outline review rounds before going ahead.")
    clarify: bool = _f(
        False,
        "Before the research, ask the person clarifying questions when the question is unclear "
        "(an interrupt; answers become part of the research brief).",
    )
    max_clarify_questions: int = _f(3, "Clarifying questions asked at most in one round (1 to 10).")
    max_clarify_rounds: int = _f(1, "Rounds of clarifying questions before the research goes on.")
    template: str | None = _f(
        None,
        "A Markdown report template: its '#' to '###' headings give the report's structure (deep mode: "
        "the outline) and the text under each says what that part covers. A template's parts raise "
        "max_sections to their number. The CLI's --template FILE reads it from a file.",
    )
    style: Literal["academic", "brief", "news", "popular"] | None = _f(
        None,
        "A report style, a template of its own: 'academic' (abstract, methods of the research, findings, "
        "limitations; the Sources list is its references), 'brief' (the answer, five bullets, the sources), "
        "'news' or 'popular'. It gives the report its structure, and a capable model its tone too. Not with "
        "template. `deepresearch template --list` shows them.",
    )
    language: str = _f(
        "auto",
        "The report's language: 'auto' (the question's, detected; English when it cannot be told), or a "
        "code or name such as 'fr' or 'French'. Searches keep the backend's language.",
    )
    writer: Literal["auto", "single", "per_source", "extractive"] = _f(
        "auto",
        "How the writer works: one call for the whole report (single), one paragraph per "
        "source (per_source), the sources' own sentences closest in meaning to the question, up to five a "
        "source (extractive: cannot invent, no model call), or auto (extractive for 'local' and 'none', else single). Every "
        "style's sentences are checked: uncited or unsupported ones are dropped.",
    )
    planner: Literal["auto", "model", "concepts"] = _f(
        "auto",
        "Deep mode: outline from a model call (model), one section per concept of the question "
        "(concepts), or auto (concepts for 'local' and 'none', else model). Model outlines are checked: a "
        "section off the question is replaced, and a comparison covers everything it compares.",
    )
    edit_after_report: bool = _f(
        False,
        "After the report, pause for a person to edit it in place (an interrupt: expand, shorten, "
        "polish, supplementary_search, fact_check, sync, finish); `deepresearch edit` works on any finished run.",
    )
    max_edits: int = _f(10, "Edits of a finished report at most (sync excluded); then the run ends.")
    citation_style: str = _f(
        "numeric",
        "How the report cites: 'numeric' ([1], the sources numbered in order of first citation), or a CSL "
        "style: 'apa', 'chicago' (author-date), 'mla', 'ieee', 'vancouver'. In-text citations and the Sources "
        "list follow it; the checks of the citations do not change. The run keeps the numbered form (edits "
        "and the web page's citation links use it); the result, the CLI's output and the exports are styled.",
    )
    verify_with_model: bool = _f(False, "Judge each citation with a model call instead of the offline overlap scorer.")
    support_threshold: float = _f(0.25, "Citations scoring below this are marked unverified.")
    charts: bool = _f(
        False,
        "After the source tracer, draw charts of the report's dated events (a timeline) and comparable "
        "quantities (a bar chart), every point checked against its cited source's full text; placed after the "
        "section they draw from, as a local image file (SVG and PNG).",
    )
    max_charts: int = _f(3, "Charts in one report at most.")
    charts_dir: str | None = _f(
        None,
        "Folder the chart files are written to (default: a folder in the user cache directory; the "
        "CLI's default is a folder next to --output). Server runs also keep them in the run's store.",
    )
    charts_href: str | None = _f(
        None,
        "The chart folder as the report's image paths name it, relative to the report (default: charts_dir as given).",
    )
    chart_model: str | None = _f(
        None,
        "A vision-capable model that critiques each rendered chart ('openai:<model>', any "
        "OpenAI-compatible endpoint that takes images); its answer may change the presentation, never the data. "
        "Unset: code checks only (overlapping labels, empty axes).",
    )
    chart_base_url: str | None = _f(None, "Base URL of the chart model's endpoint (default: base_url).")
    max_chart_iterations: int = _f(2, "Critique-and-redraw rounds per chart at most (0: render once, no critique).")
    infer: bool = _f(
        True,
        "After the source tracer (and charts), record each report sentence's provenance: question -> "
        "concept or gap -> search -> source -> passage (output `provenance`; no model call; "
        "`deepresearch provenance THREAD_ID` shows it).",
    )
    model_concurrency: int = _f(8, "Model calls in flight at once, across parallel sections.")
    model_rpm: int = _f(0, "Model requests per minute at most (0: no limit).")
    search_concurrency: int = _f(4, "Search requests in flight at once.")
    search_rpm: int = _f(0, "Search requests per minute at most (0: no limit).")
    request_timeout: float = _f(60.0, "Seconds one model or search request may take.")
    max_retries: int = _f(4, "Retries of a failed model or search request (429, 5xx, timeouts).")
    context_window: int | None = _f(
        None,
        "The model's context window in tokens: every prompt, with its completion cap, fits in it "
        "(sources and notes trimmed by relevance, whole sources first). None: no limit (the CLI reads it "
        "from a vLLM or Ollama server when it says).",
    )

    def __post_init__(self) -> None:
        for name in (
            "max_iterations",
            "max_tokens",
            "max_seconds",
            "max_sections",
            "request_timeout",
            "support_threshold",
        ):  # nan and inf are no budgets (nan passes every comparison)
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {echoed(value)}")
        for name, minimum in (
            ("max_iterations", 1),
            ("max_tokens", 1),
            ("max_sections", 1),
            ("max_review_rounds", 1),
            ("max_clarify_questions", 1),
            ("max_clarify_rounds", 1),
            ("results_per_query", 1),
            ("model_concurrency", 1),
            ("search_concurrency", 1),
            ("max_edits", 1),
            ("max_charts", 1),
            ("max_chart_iterations", 0),
        ):
            if getattr(self, name) < minimum:
                raise ValueError(f"{name} must be at least {minimum}")
        if self.section_execution not in ("local", "server"):
            raise ValueError(f"section_execution must be 'local' or 'server', not {echoed(self.section_execution)}")
        if self.outline_style not in ("parallel", "dependent"):
            raise ValueError(f"outline_style must be 'parallel' or 'dependent', not {echoed(self.outline_style)}")
        if self.max_sections > MAX_SECTIONS:
            raise ValueError(f"max_sections must be at most {MAX_SECTIONS}")
        if self.section_concurrency is not None and self.section_concurrency < 1:
            raise ValueError("section_concurrency must be at least 1")
        if not math.isfinite(self.max_seconds) or self.max_seconds <= 0:
            raise ValueError("max_seconds must be a finite positive number")
        if self.context_window is not None and (
            isinstance(self.context_window, bool)
            or not isinstance(self.context_window, int)
            or self.context_window < 256
        ):
            raise ValueError(
                f"context_window must be a whole number of tokens, at least 256, not {self.context_window!r}"
            )
        if self.max_retries < 0:
            raise ValueError("max_retries must not be negative")
        if self.max_clarify_questions > MAX_CLARIFY_QUESTIONS:
            raise ValueError(f"max_clarify_questions must be at most {MAX_CLARIFY_QUESTIONS}")
        language.check(self.language)
        embeddings_check(self.embeddings)
        citation_styles.check(self.citation_style)
        controls.check(self)
        self._check_cost()
        if self.style is not None:  # a report style is a template of its own (deepresearch.choices.report_styles)
            self.template = report_styles.template_for(self.style, self.template)
        if self.template is not None:
            if not isinstance(self.template, str):
                raise ValueError("template must be Markdown text")
            parts = len(templates.parse_template(self.template)["sections"])  # TemplateError is a ValueError
            self.max_sections = max(self.max_sections, parts)  # every part of the template is a section
        if self.context_window is None and str(self.model).startswith(gguf.PREFIX):
            if why := gguf.problem(self.model):  # no such file, not GGUF
                raise ValueError(why)
            self.context_window = gguf.context_window(self.model)  # prompts fit the window it runs with

    # LangGraph's server filters each run's context by this class's JSON schema, made anew for
    # every run it starts (a pydantic TypeAdapter and its schema: about 12 ms of the server's CPU
    # a run on 2 cores). The schema never changes, so pydantic makes it once.
    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        if cls is not Context or source is not Context:  # a subclass: its own schema
            return handler(source)
        if "core" not in _SCHEMAS:
            _SCHEMAS["core"] = handler(source)
        return copy.deepcopy(_SCHEMAS["core"])  # pydantic edits the schemas it is given

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema, handler):
        if cls is not Context:
            return handler(core_schema)
        key = (handler.mode, type(handler.generate_json_schema))
        if key not in _SCHEMAS:
            _SCHEMAS[key] = handler.resolve_ref_schema(handler(core_schema))
        return copy.deepcopy(_SCHEMAS[key])

    def _check_cost(self) -> None:
        price = price_for(self.model, self.prices)  # a price table that cannot be read: ValueError
        # the run's price, read once with the context: every node's budget asks for it
        self.__dict__["_price"] = ((self.model, self.prices), price)
        if self.max_cost is None:
            return
        if (
            isinstance(self.max_cost, bool)
            or not isinstance(self.max_cost, (int, float))
            or not math.isfinite(self.max_cost)
            or self.max_cost <= 0
        ):
            raise ValueError(f"max_cost must be a positive number of dollars, not {echoed(self.max_cost)}")
        if price is None:
            raise ValueError(
                f"max_cost: the price of {echoed(self.model)} is not known; give it in a TOML "
                "price table (prices, the CLI's --prices FILE)"
            )


def model_price(ctx: Any):
    """The price of the context's model (deepresearch.choices.prices), as read when the context was
    made (again if its model or price table was changed since)."""
    kept = getattr(ctx, "__dict__", {}).get("_price")
    key = (ctx.model, getattr(ctx, "prices", None))
    if kept is not None and kept[0] == key:
        return kept[1]
    return price_for(*key)


EXTRACTIVE = ("local", "none")  # the model specs under which the pipeline's own checks decide


def tiny_model(ctx: Context) -> bool:
    """The embedded model: it proves the pipeline runs; the pipeline does not trust its judgement
    for what it can check itself (outlines, writing)."""
    return ctx.model in EXTRACTIVE


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
