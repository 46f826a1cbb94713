"""`deepresearch QUESTION`: research a question and print the report."""

from __future__ import annotations

import argparse
import os
import uuid
from pathlib import Path

from deepresearch.choices.backends import search_help
from deepresearch.choices.citation_styles import CHOICES as CITATION_STYLES
from deepresearch.choices.report_styles import NAMES as REPORT_STYLES
from deepresearch.cli.common import (
    _CURRENT,
    UsageError,
    _output_options,
    _Parser,
    _positive,
    _review_callback,
    _thread_meta,
    check_output,
    check_text,
    commands_help,
    finish,
    quoted_hint,
    resume_hint,
)
from deepresearch.cli.offline import chosen_model, meaning_line, needs_a_model
from deepresearch.text.safe import echoed, one_line


def run_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="deepresearch",
        description="Research a question and write a cited report.",
        epilog=commands_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", help="the research question")
    p.add_argument(
        "--mode",
        choices=["auto", "iterative", "deep"],
        default="auto",
        help="one loop (iterative), outline + parallel sections (deep), or pick (auto, default)",
    )
    p.add_argument(
        "--model",
        help="'local' (the default when installed: SmolLM2 in-process, offline), 'none' (no model: the "
        "extractive pipeline; the default without the 'local' extra), 'gguf:/path/model.gguf' (any chat "
        "GGUF file, in-process), 'openai:<model>', or a local "
        "server's 'ollama:<model>', 'vllm:<model>', 'llamacpp:<model>', 'lmstudio:<model>'",
    )
    p.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI; for a "
        "local server, its usual local address)",
    )
    p.add_argument(
        "--context-window",
        type=_positive(int),
        metavar="N",
        help="the model's context window in tokens: every prompt fits (default: what a vLLM or "
        "Ollama server says, else no limit)",
    )
    p.add_argument("--search", default="wiki", help=search_help())
    p.add_argument(
        "--embeddings",
        default="auto",
        metavar="SPEC",
        help="how texts are compared by meaning: local (all-MiniLM-L6-v2, offline), openai:<model>, "
        "ollama:<model>, none (BM25 alone), or auto (local when installed; the default)",
    )
    p.add_argument("--embeddings-base-url", metavar="URL", help="base URL of the embeddings endpoint")
    p.add_argument(
        "--search-base-url",
        action="append",
        metavar="NAME=URL",
        help="base URL override of one backend, e.g. pubmed=https://proxy/eutils (repeatable; a bare URL is Tavily's)",
    )
    sources = p.add_argument_group("source controls")
    sources.add_argument(
        "--include-domains",
        metavar="DOMAINS",
        help="web domains the run may use, comma-separated (e.g. nih.gov,who.int; subdomains too): "
        "web search asks for them, and a result from elsewhere never enters the run",
    )
    sources.add_argument("--exclude-domains", metavar="DOMAINS", help="web domains the run never uses, comma-separated")
    sources.add_argument(
        "--time-range",
        choices=["day", "week", "month", "year"],
        help="web search: only pages from the last day, week, month or year",
    )
    sources.add_argument("--start-date", metavar="YYYY-MM-DD", help="web search: only pages from this date on")
    sources.add_argument("--search-depth", choices=["basic", "advanced"], help="web search depth (default: Tavily's)")
    sources.add_argument(
        "--docs-include",
        metavar="GLOB",
        action="append",
        help="documents: read only files matching GLOB, e.g. '*.md' (repeatable)",
    )
    sources.add_argument(
        "--docs-exclude", metavar="GLOB", action="append", help="documents: never read files matching GLOB (repeatable)"
    )
    p.add_argument(
        "--mcp",
        metavar="CONFIG.json",
        help='MCP servers whose search tools join the run ({"mcpServers": {...}}); '
        "see 'deepresearch tools --mcp CONFIG.json'",
    )
    p.add_argument("--max-iterations", type=_positive(int), default=3, help="research loop iterations (default 3)")
    p.add_argument("--max-tokens", type=_positive(int), default=40000, help="token budget (default 40000)")
    p.add_argument("--max-seconds", type=_positive(float), default=600.0, help="time budget (default 600)")
    p.add_argument(
        "--max-cost",
        type=_positive(float),
        metavar="DOLLARS",
        help="cost budget in US dollars at the model's price (default: none); a partial report when it runs out",
    )
    p.add_argument(
        "--prices",
        metavar="FILE.toml",
        help="model prices, dollars per million tokens ([model] input, cached_input, output); overrides "
        "the built-in table (default: prices.toml in the user config directory, if any)",
    )
    p.add_argument("--sections", type=_positive(int), default=5, help="deep mode: sections at most (default 5)")
    p.add_argument("--concurrency", type=_positive(int), help="deep mode: sections researched at once")
    p.add_argument(
        "--outline",
        choices=["parallel", "dependent"],
        default="parallel",
        help="deep mode: sections researched all at once (parallel, default) or in layers, "
        "building on the sections they depend on (dependent)",
    )
    p.add_argument("--review", action="store_true", help="deep mode: review the outline before research")
    p.add_argument(
        "--clarify", action="store_true", help="answer clarifying questions first when the question is unclear"
    )
    p.add_argument("--template", metavar="FILE", help="a Markdown report template: its headings structure the report")
    p.add_argument(
        "--style",
        choices=list(REPORT_STYLES),
        help="a report style: academic, brief, news or popular (a template of its own: the structure, "
        "and with a capable model the tone; see 'deepresearch template --list')",
    )
    p.add_argument(
        "--language",
        default="auto",
        help="the report's language: 'auto' (the question's, default), or e.g. 'fr' or 'French'",
    )
    p.add_argument(
        "--citation-style",
        choices=list(CITATION_STYLES),
        default="numeric",
        help="how the report cites: numeric ([1], default), or apa, chicago (author-date), mla, ieee, "
        "vancouver (rendered from CSL); the Sources list follows it",
    )
    p.add_argument("--verify-with-model", action="store_true", help="judge citations with the model")
    p.add_argument(
        "--model-concurrency", type=_positive(int), default=8, help="model calls in flight at most (default 8)"
    )
    p.add_argument("--model-rpm", type=int, default=0, help="model requests per minute at most (0: no limit)")
    p.add_argument("--search-concurrency", type=_positive(int), default=4, help="searches in flight at most")
    p.add_argument("--search-rpm", type=int, default=0, help="searches per minute at most (0: no limit)")
    p.add_argument(
        "--charts",
        action="store_true",
        help="add charts of the report's dated events and compared quantities, every point checked "
        "against its cited source",
    )
    p.add_argument(
        "--charts-dir",
        metavar="DIR",
        help="folder for the chart files (default: REPORT_charts next to --output, else the cache folder)",
    )
    p.add_argument(
        "--chart-model",
        metavar="MODEL",
        help="a vision-capable 'openai:<model>' that critiques each chart (presentation only)",
    )
    p.add_argument("--chart-base-url", metavar="URL", help="the chart model's endpoint (default: --base-url)")
    p.add_argument(
        "--max-chart-iterations",
        type=int,
        default=2,
        help="critique-and-redraw rounds per chart (default 2; 0: render once)",
    )
    p.add_argument("--no-infer", action="store_true", help="do not record the report's provenance")
    p.add_argument("--thread-id", help="thread id for the checkpoint (default: a new one)")
    _output_options(p)
    return p


def parse_base_urls(values: list[str] | None) -> dict[str, str]:
    """`--search-base-url NAME=URL` (repeatable; a bare URL is Tavily's) as {name: url}."""
    from deepresearch.tools import HTTP_BACKENDS, check_base_urls

    out: dict[str, str] = {}
    for value in values or []:
        name, sep, url = value.partition("=")
        if not sep or "://" in name:  # a bare URL (whose query may hold an '=')
            name, url = "tavily", value
        elif name not in HTTP_BACKENDS:
            raise ValueError(
                f"--search-base-url {one_line(value, 80)}: unknown backend {echoed(name)}; valid: {', '.join(HTTP_BACKENDS)}"
            )
        out[name] = url
    check_base_urls(out)
    return out


def chart_options(args) -> dict:
    """The chart settings: files next to the report (or in --charts-dir), named in the report by
    a path relative to it."""
    out = {"charts": args.charts, "infer": not args.no_infer, "max_chart_iterations": args.max_chart_iterations}
    if args.max_chart_iterations < 0:
        raise UsageError("--max-chart-iterations must be 0 or more")
    if args.chart_model:
        from deepresearch.llm.models import ModelConfigError, check_model_spec

        try:
            check_model_spec(args.chart_model)
        except ModelConfigError as e:
            raise UsageError(f"--chart-model: {e}") from None
        out["chart_model"] = args.chart_model
    if args.chart_base_url:
        out["chart_base_url"] = args.chart_base_url
    report_dir = Path(args.output).expanduser().resolve().parent if args.output else None
    if args.charts_dir:
        folder = Path(args.charts_dir).expanduser().resolve()
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"--charts-dir {args.charts_dir}: not a folder")
    elif report_dir is not None:
        folder = report_dir / (Path(args.output).stem + "_charts")
    else:
        return out  # stdout: the cache folder (the report names the files by their full path)
    out["charts_dir"] = str(folder)
    out["charts_href"] = os.path.relpath(folder, report_dir) if report_dir is not None else str(folder)
    return out


def make_context(args):
    from deepresearch.config import Context
    from deepresearch.llm.models import ModelConfigError, check_model_spec
    from deepresearch.tools import check_search_spec, split_specs

    extra = {"section_concurrency": args.concurrency} if args.concurrency else {}
    extra.update(chart_options(args))
    if args.template and args.style:
        raise UsageError("give --style or --template, not both")
    if args.template:
        from deepresearch.cli.template import read_text

        extra["template"] = read_text(args.template, "--template")
    if args.style:
        extra["style"] = args.style
    args.model, args.model_note = chosen_model(args.model)
    try:
        check_model_spec(args.model)
        if refused := needs_a_model(args, args.model):
            raise ValueError(refused)
        check_search_spec(args.search)
        if "tavily" in split_specs(args.search) and not os.environ.get("TAVILY_API_KEY"):
            raise ValueError("--search tavily needs TAVILY_API_KEY in the environment (or a .env file)")
        base_urls = parse_base_urls(args.search_base_url)
        mcp = None
        if args.mcp:
            from deepresearch.tools.mcp import load_config

            load_config(args.mcp)  # a missing or malformed file is bad input (exit 2)
            mcp = str(Path(args.mcp).expanduser().resolve())  # the path: the file's secrets stay out of checkpoints
        ctx = Context(
            model=args.model,
            base_url=args.base_url,
            search=args.search,
            embeddings=args.embeddings,
            embeddings_base_url=args.embeddings_base_url,
            search_base_urls=base_urls or None,
            mcp_servers=mcp,
            include_domains=args.include_domains,
            exclude_domains=args.exclude_domains,
            time_range=args.time_range,
            start_date=args.start_date,
            search_depth=args.search_depth,
            docs_include=args.docs_include,
            docs_exclude=args.docs_exclude,
            mode=args.mode,
            max_iterations=args.max_iterations,
            max_tokens=args.max_tokens,
            max_seconds=args.max_seconds,
            max_cost=args.max_cost,
            prices=args.prices,
            max_sections=args.sections,
            outline_review=args.review,
            outline_style=args.outline,
            verify_with_model=args.verify_with_model,
            citation_style=args.citation_style,
            model_concurrency=args.model_concurrency,
            model_rpm=max(0, args.model_rpm),
            search_concurrency=args.search_concurrency,
            search_rpm=max(0, args.search_rpm),
            clarify=args.clarify,
            language=args.language,
            context_window=served_window(args.model, args.base_url, args.context_window),
            **extra,
        )
        if (ctx.docs_include or ctx.docs_exclude) and any(s.startswith("docs:") for s in split_specs(ctx.search)):
            # globs that leave no file are bad input, found before any research
            from deepresearch.tools.registry import backend_for

            backend_for(ctx, "docs")  # the run's own backend, built once (and kept for the run)
        return ctx
    except (ModelConfigError, ValueError) as e:
        raise UsageError(str(e)) from None


def served_window(model: str, base_url: str | None, given: int | None) -> int | None:
    """For a local server's model (ollama:, vllm:, ...): check that the server serves it, before
    any research (ServerError, a ValueError, names the models it has); the context window is
    `given`, else what the server says."""
    from deepresearch.llm import providers

    if model.startswith("gguf:"):  # the window it runs with, from the file's metadata (no more)
        from deepresearch.choices import gguf

        return min(given or gguf.MAX_CONTEXT, gguf.context_window(model))
    if not providers.provider_of(model):
        return given
    entry = providers.check_served(model, base_url)
    return given or providers.served_context_window(model, base_url, entry)


def _say_cost_unknown(ctx, progress) -> None:
    """Once per run: a model without a price has no cost in `usage` (its calls are counted as unpriced)."""
    from deepresearch.choices.prices import price_for

    if price_for(ctx.model, ctx.prices) is None:
        progress.message(f"cost unknown: no price for {one_line(ctx.model, 80)} (give one with --prices FILE.toml)")


def cmd_run(argv: list[str]) -> int:
    from deepresearch.cli.progress import Progress
    from deepresearch.runtime.checkpoint import claim_thread, default_db, open_checkpointer, open_store
    from deepresearch.runtime.runner import build_graph, choose_mode, drive, result_of, run_config, validate_question

    args = run_parser().parse_args(argv)
    check_text("the question", args.question)  # before any work: bytes that are not UTF-8 are bad input
    check_text("--thread-id", args.thread_id, one_line=True)
    for what, value in (
        ("--model", args.model),
        ("--base-url", args.base_url),
        ("--search", args.search),
        ("--embeddings", args.embeddings),
        ("--embeddings-base-url", args.embeddings_base_url),
    ):
        check_text(what, value, one_line=True)
    try:
        question = validate_question(args.question)
    except ValueError as e:
        raise UsageError(str(e)) from None
    ctx = make_context(args)
    check_output(args.output)
    mode = choose_mode(question) if args.mode == "auto" else args.mode
    thread_id = args.thread_id or uuid.uuid4().hex[:12]
    if not thread_id.strip() or len(thread_id) > 200:
        raise UsageError("--thread-id must be 1 to 200 characters")
    db = args.db or default_db()
    # a read-only file: exit 2 here; the store (the sources' texts) sits beside the checkpoints
    with open_checkpointer(db) as saver, open_store(db) as store, Progress(quiet=args.quiet) as progress:
        graph = build_graph(mode, saver, store)
        config = run_config(thread_id, ctx, mode, question)
        # claimed first (atomic: one of two processes starting the same id gets it), then
        # checked against threads started before claims existed (or from Python)
        if (
            not claim_thread(saver, thread_id)
            or _thread_meta(saver, thread_id) is not None
            or graph.get_state(config).values
        ):
            raise UsageError(
                f"thread {thread_id} already exists (or another process is starting it); "
                f"use {quoted_hint(thread_id, args.db)} or another --thread-id"
            )
        _CURRENT.update(thread_id=thread_id, db=args.db)
        progress.notice(f"thread {thread_id} ({mode} mode); resume with: {resume_hint()}")
        _say_cost_unknown(ctx, progress)
        for line in (args.model_note, meaning_line(ctx)):
            if line:
                progress.message(line)
        final = drive(
            graph,
            {"question": question},
            config,
            ctx,
            on_event=progress,
            on_review=_review_callback(progress) if args.review or args.clarify else None,
        )
        return finish(result_of(final, question=question, mode=mode, thread_id=thread_id), args, progress)
