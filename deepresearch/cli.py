"""The `deepresearch` command.

    deepresearch QUESTION [options]        research a question, print the report
    deepresearch resume THREAD_ID          continue an interrupted, crashed or waiting run
    deepresearch threads                   list the runs in the checkpoint database

Exit status: 0 done, 1 the run failed (it can be resumed), 2 bad input, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input: one line to stderr, exit status 2."""


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(message)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (default: stdout)")
    p.add_argument("--json", action="store_true", help="print one JSON object with the report, sources, usage…")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--db", metavar="PATH|URL", help="checkpoint database: a SQLite file or a postgresql:// URL "
                   "(default: runs.sqlite in the user data directory)")


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
    p.add_argument("--review", action="store_true", help="deep mode: review the outline before research")
    p.add_argument("--verify-with-model", action="store_true", help="judge citations with the model")
    p.add_argument("--model-concurrency", type=_positive(int), default=4, help="model calls in flight at most")
    p.add_argument("--model-rpm", type=int, default=0, help="model requests per minute at most (0: no limit)")
    p.add_argument("--search-concurrency", type=_positive(int), default=4, help="searches in flight at most")
    p.add_argument("--search-rpm", type=int, default=0, help="searches per minute at most (0: no limit)")
    p.add_argument("--thread-id", help="thread id for the checkpoint (default: a new one)")
    _output_options(p)
    return p


def resume_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch resume", description="Continue a run from its last checkpoint.")
    p.add_argument("thread_id")
    p.add_argument("--answer", metavar="JSON", help='answer a waiting outline review, e.g. \'{"action": "accept"}\'')
    _output_options(p)
    return p


def threads_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch threads", description="List the runs in the checkpoint database.")
    p.add_argument("--db", metavar="PATH|URL")
    p.add_argument("--json", action="store_true")
    return p


# --- checks -----------------------------------------------------------------------------

def check_output(path: str | None) -> None:
    if not path:
        return
    target = Path(path).expanduser()
    if target.is_dir():
        raise UsageError(f"--output {path}: is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--output {path}: folder {parent} does not exist")
    if (target.exists() and not os.access(target, os.W_OK)) or not os.access(parent, os.W_OK):
        raise UsageError(f"--output {path}: not writable")


def make_context(args):
    from deepresearch.config import Context
    from deepresearch.models import ModelConfigError, check_model_spec
    from deepresearch.tools import check_search_spec

    try:
        check_model_spec(args.model)
        check_search_spec(args.search)
        if args.search == "tavily" and not os.environ.get("TAVILY_API_KEY"):
            raise ValueError("--search tavily needs TAVILY_API_KEY in the environment (or a .env file)")
        return Context(
            model=args.model, base_url=args.base_url, search=args.search, search_base_url=args.search_base_url,
            mode=args.mode, max_iterations=args.max_iterations, max_tokens=args.max_tokens,
            max_seconds=args.max_seconds, max_sections=args.sections, outline_review=args.review,
            verify_with_model=args.verify_with_model, model_concurrency=args.model_concurrency,
            model_rpm=max(0, args.model_rpm), search_concurrency=args.search_concurrency,
            search_rpm=max(0, args.search_rpm),
        )
    except (ModelConfigError, ValueError) as e:
        raise UsageError(str(e)) from None


# --- output -----------------------------------------------------------------------------

def emit_result(result: dict, args, progress) -> None:
    if args.output:
        try:
            Path(args.output).expanduser().write_text(result.get("report", ""), encoding="utf-8")
        except OSError as e:
            # the run is safe in its checkpoint; the report still reaches stdout
            print(f"deepresearch: cannot write {args.output}: {e.strerror}; printing the report instead",
                  file=sys.stderr)
            args.output = None
        else:
            progress.message(f"report written to {args.output}")
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif not args.output:
        sys.stdout.write(result.get("report", ""))
        if not result.get("report", "").endswith("\n"):
            sys.stdout.write("\n")
    verification = next((line.strip("_ ") for line in reversed(result.get("report", "").splitlines())
                         if line.startswith("_Verification")), None)
    if verification and not args.quiet:
        progress.message(verification)
    sys.stdout.flush()


# --- commands ---------------------------------------------------------------------------

def _review_callback(progress):
    from deepresearch.review import ask

    def on_review(value):
        progress.pause()
        try:
            return ask(value)
        finally:
            progress.resume()

    return on_review


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
    db = args.db or default_db()
    with open_checkpointer(db) as saver, Progress(quiet=args.quiet) as progress:
        graph = build_graph(mode, saver)
        config = run_config(thread_id, ctx, mode, question, args.concurrency)
        if graph.get_state(config).values:
            raise UsageError(f"thread {thread_id} already exists; use 'deepresearch resume {thread_id}'")
        progress.message(f"thread {thread_id} ({mode} mode); resume with: deepresearch resume {thread_id}")
        final = drive(graph, {"question": question}, config, ctx, on_event=progress,
                      on_review=_review_callback(progress) if args.review else None)
        result = result_of(final, question=question, mode=mode, thread_id=thread_id)
        emit_result(result, args, progress)
    return EXIT_OK


def _thread_meta(saver, thread_id: str) -> dict | None:
    meta = None
    for t in saver.list({"configurable": {"thread_id": thread_id}}):
        if t.metadata.get("dr_context"):
            meta = t.metadata  # the oldest one with our keys wins (list is newest first)
    return meta


def cmd_resume(argv: list[str]) -> int:
    from langgraph.types import Command

    from deepresearch.checkpoint import default_db, open_checkpointer
    from deepresearch.config import CONTEXT_FIELDS, Context
    from deepresearch.progress import Progress
    from deepresearch.runner import build_graph, drive, result_of, run_config

    args = resume_parser().parse_args(argv)
    check_output(args.output)
    answer = None
    if args.answer is not None:
        try:
            answer = json.loads(args.answer)
        except json.JSONDecodeError as e:
            raise UsageError(f"--answer is not valid JSON: {e.msg} at character {e.pos}") from None
        if not isinstance(answer, dict) or answer.get("action") not in ("accept", "revise", "replace"):
            raise UsageError('--answer must be an object with "action": "accept", "revise" or "replace"')
    with open_checkpointer(args.db or default_db()) as saver, Progress(quiet=args.quiet) as progress:
        meta = _thread_meta(saver, args.thread_id)
        if meta is None:
            raise UsageError(f"unknown thread id {args.thread_id!r} (see 'deepresearch threads')")
        stored = json.loads(meta["dr_context"])
        ctx = Context(**{k: v for k, v in stored.items() if k in CONTEXT_FIELDS})
        mode, question = meta["dr_mode"], meta.get("dr_question", "")
        graph = build_graph(mode, saver)
        config = run_config(args.thread_id, ctx, mode, question, meta.get("dr_concurrency") or None)
        config["metadata"] = {k: v for k, v in meta.items() if k.startswith("dr_")}
        snapshot = graph.get_state(config)
        if snapshot.interrupts:
            if answer is None and not sys.stdin.isatty():
                raise UsageError("this run is waiting for an outline review: answer with --answer JSON")
            first = answer if answer is not None else _review_callback(progress)(snapshot.interrupts[0].value)
            inp = Command(resume={i.id: first for i in snapshot.interrupts})
        elif not snapshot.next:
            progress.message(f"thread {args.thread_id} had already finished")
            emit_result(result_of(snapshot.values, question=question, mode=mode, thread_id=args.thread_id),
                        args, progress)
            return EXIT_OK
        else:
            inp = None
            progress.message(f"resuming thread {args.thread_id} at {', '.join(snapshot.next)}")
        on_review = _review_callback(progress) if sys.stdin.isatty() else None
        final = drive(graph, inp, config, ctx, on_event=progress, on_review=on_review)
        emit_result(result_of(final, question=question, mode=mode, thread_id=args.thread_id), args, progress)
    return EXIT_OK


def cmd_threads(argv: list[str]) -> int:
    from deepresearch.checkpoint import default_db, open_checkpointer

    args = threads_parser().parse_args(argv)
    rows: dict[str, dict] = {}
    with open_checkpointer(args.db or default_db()) as saver:
        for t in saver.list(None):
            tid = t.config["configurable"]["thread_id"]
            if t.config["configurable"].get("checkpoint_ns"):
                continue
            row = rows.setdefault(tid, {"thread_id": tid, "status": None, "question": "", "mode": "", "started": ""})
            if row["status"] is None:  # newest checkpoint of the thread
                values = t.checkpoint.get("channel_values", {})
                waiting = any(w[1] == "__interrupt__" for w in (t.pending_writes or []))
                row["status"] = "done" if values.get("report") else "waiting for review" if waiting else "incomplete"
                row["updated"] = t.checkpoint.get("ts", "")[:19]
            if t.metadata.get("dr_question"):
                row.update(question=t.metadata["dr_question"], mode=t.metadata.get("dr_mode", ""),
                           started=t.metadata.get("dr_started", "")[:19])
    listed = sorted(rows.values(), key=lambda r: r.get("updated", ""), reverse=True)
    if args.json:
        json.dump(listed, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif not listed:
        print("no runs yet")
    else:
        for r in listed:
            print(f"{r['thread_id']}  {r['status']:<18}  {r.get('updated', ''):<19}  {r['mode']:<9}  {r['question'][:70]}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from dotenv import load_dotenv

    load_dotenv(override=False)  # keys from a .env file; never overrides the real environment
    from deepresearch.checkpoint import CheckpointError
    from deepresearch.events import redact

    try:
        if argv and argv[0] == "resume":
            return cmd_resume(argv[1:])
        if argv and argv[0] == "threads":
            return cmd_threads(argv[1:])
        if argv and argv[0] == "run":
            argv = argv[1:]
        return cmd_run(argv)
    except UsageError as e:
        print(f"deepresearch: {redact(e)}", file=sys.stderr)
        return EXIT_USAGE
    except CheckpointError as e:
        print(f"deepresearch: {redact(e)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ndeepresearch: interrupted; the run is checkpointed and can be resumed", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - a one-line message, never a traceback
        print(f"deepresearch: the run failed: {redact(type(e).__name__)}: {redact(e)}; "
              "'deepresearch resume THREAD_ID' continues it from its last checkpoint", file=sys.stderr)
        if os.environ.get("DEEPRESEARCH_DEBUG"):
            raise
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
