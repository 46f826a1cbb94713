"""`deepresearch QUESTION`: research a question and print the report."""

from __future__ import annotations

import argparse
import os
import uuid

from deepresearch.cli.common import (_CURRENT, UsageError, _output_options, _Parser, _positive, _review_callback,
                                     _thread_meta, check_output, finish, resume_hint)


def run_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch", description="Research a question and write a cited report.",
                epilog="Other commands: 'deepresearch resume THREAD_ID', 'deepresearch threads'.")
    p.add_argument("question", help="the research question")
    p.add_argument("--mode", choices=["auto", "iterative", "deep"], default="auto",
                   help="one loop (iterative), outline + parallel sections (deep), or pick (auto, default)")
    p.add_argument("--model", default="local", help="'local' (default, offline) or 'openai:<model>'")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL or OpenAI)")
    p.add_argument("--search", default="wiki", help="'wiki' (default, offline), 'docs:<folder>' or 'tavily'")
    p.add_argument("--search-base-url", help="Tavily API base URL override")
    p.add_argument("--max-iterations", type=_positive(int), default=3, help="research loop iterations (default 3)")
    p.add_argument("--max-tokens", type=_positive(int), default=40000, help="token budget (default 40000)")
    p.add_argument("--max-seconds", type=_positive(float), default=600.0, help="time budget (default 600)")
    p.add_argument("--sections", type=_positive(int), default=5, help="deep mode: sections at most (default 5)")
    p.add_argument("--concurrency", type=_positive(int), help="deep mode: sections researched at once")
    p.add_argument("--outline", choices=["parallel", "dependent"], default="parallel",
                   help="deep mode: sections researched all at once (parallel, default) or in layers, "
                        "building on the sections they depend on (dependent)")
    p.add_argument("--review", action="store_true", help="deep mode: review the outline before research")
    p.add_argument("--verify-with-model", action="store_true", help="judge citations with the model")
    p.add_argument("--model-concurrency", type=_positive(int), default=8, help="model calls in flight at most (default 8)")
    p.add_argument("--model-rpm", type=int, default=0, help="model requests per minute at most (0: no limit)")
    p.add_argument("--search-concurrency", type=_positive(int), default=4, help="searches in flight at most")
    p.add_argument("--search-rpm", type=int, default=0, help="searches per minute at most (0: no limit)")
    p.add_argument("--thread-id", help="thread id for the checkpoint (default: a new one)")
    _output_options(p)
    return p


def make_context(args):
    from deepresearch.config import Context
    from deepresearch.models import ModelConfigError, check_model_spec
    from deepresearch.tools import check_search_spec

    extra = {"section_concurrency": args.concurrency} if args.concurrency else {}
    try:
        check_model_spec(args.model)
        check_search_spec(args.search)
        if args.search == "tavily" and not os.environ.get("TAVILY_API_KEY"):
            raise ValueError("--search tavily needs TAVILY_API_KEY in the environment (or a .env file)")
        return Context(
            model=args.model, base_url=args.base_url, search=args.search, search_base_url=args.search_base_url,
            mode=args.mode, max_iterations=args.max_iterations, max_tokens=args.max_tokens,
            max_seconds=args.max_seconds, max_sections=args.sections, outline_review=args.review,
            outline_style=args.outline,
            verify_with_model=args.verify_with_model, model_concurrency=args.model_concurrency,
            model_rpm=max(0, args.model_rpm), search_concurrency=args.search_concurrency,
            search_rpm=max(0, args.search_rpm), **extra,
        )
    except (ModelConfigError, ValueError) as e:
        raise UsageError(str(e)) from None


def cmd_run(argv: list[str]) -> int:
    from deepresearch.checkpoint import default_db, open_checkpointer
    from deepresearch.progress import Progress
    from deepresearch.runner import build_graph, choose_mode, drive, result_of, run_config, validate_question

    args = run_parser().parse_args(argv)
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
    with open_checkpointer(db) as saver, Progress(quiet=args.quiet) as progress:
        graph = build_graph(mode, saver)
        config = run_config(thread_id, ctx, mode, question)
        if _thread_meta(saver, thread_id) is not None or graph.get_state(config).values:
            raise UsageError(f"thread {thread_id} already exists; use '{resume_hint(thread_id, args.db)}'")
        _CURRENT.update(thread_id=thread_id, db=args.db)
        progress.message(f"thread {thread_id} ({mode} mode); resume with: {resume_hint()}")
        final = drive(graph, {"question": question}, config, ctx, on_event=progress,
                      on_review=_review_callback(progress) if args.review else None)
        return finish(result_of(final, question=question, mode=mode, thread_id=thread_id), args, progress)
