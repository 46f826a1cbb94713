"""The `deepresearch` command.

    deepresearch QUESTION [options]        research a question, print the report
    deepresearch resume THREAD_ID          continue an interrupted, crashed or waiting run
    deepresearch threads                   list the runs in the checkpoint database

Every run is checkpointed (a SQLite file in the user data directory, or `--db`), so a run
that was interrupted, crashed or killed continues with `deepresearch resume THREAD_ID`, with
the settings it started with. An outline review (`--review`) nobody answers (stdin closed)
leaves the run waiting: the command says so, prints no report and exits 0; answer it later
with `deepresearch resume THREAD_ID --answer '{"action": "accept"}'`.

Exit status: 0 done (or left waiting for a review), 1 the run failed (it can be resumed),
2 bad input (also: unknown thread, unusable checkpoint database), 130 interrupted (Ctrl-C),
143 stopped (SIGTERM); interrupted and stopped runs can be resumed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sqlite3
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input: one line to stderr, exit status 2."""


# the run in progress, for the resume hint of the error and interrupt messages
_CURRENT: dict[str, str | None] = {"thread_id": None, "db": None}


def safe_db(db: str | None) -> str | None:
    """`db` fit to print: a password in a postgresql:// URL is masked."""
    if not db or "://" not in db:
        return db
    parts = urlsplit(db)
    if parts.password is None:
        return db
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def resume_hint(thread_id: str | None = None, db: str | None = None) -> str:
    """The command that continues the run, e.g. `deepresearch resume 3f2a… --db runs.sqlite`."""
    thread_id = thread_id or _CURRENT["thread_id"] or "THREAD_ID"
    db = db if db is not None else _CURRENT["db"]
    return f"deepresearch resume {thread_id}" + (f" --db {shlex.quote(safe_db(db))}" if db else "")


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
    p.add_argument("--model-concurrency", type=_positive(int), default=8, help="model calls in flight at most (default 8)")
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
            verify_with_model=args.verify_with_model, model_concurrency=args.model_concurrency,
            model_rpm=max(0, args.model_rpm), search_concurrency=args.search_concurrency,
            search_rpm=max(0, args.search_rpm), **extra,
        )
    except (ModelConfigError, ValueError) as e:
        raise UsageError(str(e)) from None


def check_settings(ctx) -> None:
    """A resumed run's model and search still work here (keys come from the environment)."""
    from deepresearch.models import ModelConfigError, check_model_spec
    from deepresearch.tools import check_search_spec

    try:
        check_model_spec(ctx.model)
        check_search_spec(ctx.search)
        if ctx.search == "tavily" and not os.environ.get("TAVILY_API_KEY"):
            raise ValueError("search 'tavily' needs TAVILY_API_KEY in the environment (or a .env file)")
    except (ModelConfigError, ValueError) as e:
        raise UsageError(f"cannot resume: {e}") from None


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


def emit_waiting(result: dict, args, progress) -> None:
    """The run waits for an outline review nobody answered: say how to answer it; no report."""
    request = (result.get("waiting") or [{}])[0]
    hint = resume_hint(result.get("thread_id"))
    if request.get("error"):
        progress.message(f"last answer not used: {request['error']}")
    progress.message(f"thread {result.get('thread_id')} is waiting for an outline review (round "
                     f"{request.get('round')}/{request.get('max_rounds')}); answer it with: {hint} --answer "
                     "'{\"action\": \"accept\"}' (or revise/replace), or run '" + hint + "' at a terminal")
    if args.json:
        out = {k: result[k] for k in ("question", "mode", "thread_id") if k in result}
        out.update(status="waiting", waiting=result["waiting"])
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()


def finish(result: dict, args, progress) -> int:
    if result.get("waiting"):
        emit_waiting(result, args, progress)
    else:
        emit_result(result, args, progress)
    return EXIT_OK


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


def _thread_meta(saver, thread_id: str) -> dict | None:
    """The run's settings, stored in the metadata of each of its checkpoints (None: no such run)."""
    for t in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}):
        if t.metadata.get("dr_context"):
            return t.metadata
    return None


def cmd_resume(argv: list[str]) -> int:
    from langgraph.types import Command

    from deepresearch.checkpoint import default_db, open_checkpointer
    from deepresearch.config import CONTEXT_FIELDS, Context
    from deepresearch.progress import Progress
    from deepresearch.runner import answer_reviews, build_graph, drive, result_of, run_config

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
        _CURRENT.update(thread_id=args.thread_id, db=args.db)
        try:
            stored = json.loads(meta["dr_context"])
            ctx = Context(**{k: v for k, v in stored.items() if k in CONTEXT_FIELDS})
            mode, question = meta["dr_mode"], meta.get("dr_question", "")
        except (ValueError, TypeError, KeyError) as e:
            raise UsageError(f"thread {args.thread_id}: its stored settings cannot be read ({e})") from None
        check_settings(ctx)  # keys are read again from the environment: say now if one is missing
        graph = build_graph(mode, saver)
        config = run_config(args.thread_id, ctx, mode, question)
        config["metadata"] = {k: v for k, v in meta.items() if k.startswith("dr_")}
        snapshot = graph.get_state(config)
        on_review = _review_callback(progress)  # a terminal or piped answers; end of input leaves it waiting
        if snapshot.interrupts:
            if answer is not None:
                inp = Command(resume={i.id: answer for i in snapshot.interrupts})
            else:
                inp = answer_reviews(snapshot, on_review)
                if inp is None:
                    return finish(result_of({**snapshot.values, "waiting": [i.value for i in snapshot.interrupts]},
                                            question=question, mode=mode, thread_id=args.thread_id), args, progress)
            progress.message(f"resuming thread {args.thread_id} with the review answer")
        elif answer is not None:
            raise UsageError(f"thread {args.thread_id} is not waiting for an outline review; drop --answer")
        elif not snapshot.tasks:
            # finished. (Not `not snapshot.next`: `next` leaves out tasks whose writes were
            # saved, so a run stopped after a step's writes but before its checkpoint has
            # an empty `next` and still work to do.)
            progress.message(f"thread {args.thread_id} had already finished")
            return finish(result_of(snapshot.values, question=question, mode=mode, thread_id=args.thread_id),
                          args, progress)
        else:
            inp = None
            at = sorted(set(snapshot.next)) or sorted({t.name for t in snapshot.tasks})
            progress.message(f"resuming thread {args.thread_id} at {', '.join(at)}")
        final = drive(graph, inp, config, ctx, on_event=progress, on_review=on_review)
        return finish(result_of(final, question=question, mode=mode, thread_id=args.thread_id), args, progress)


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


def _exit_promptly_on_signals() -> None:
    """Ctrl-C or SIGTERM during a run: say how to resume and exit at once.

    Unwinding normally would wait for every model call in flight (LangGraph cannot cancel
    running sync tasks), which with a slow model takes minutes. Leaving at once is safe:
    each checkpoint is one database transaction, so the run is resumable just as after a
    kill -9; at most the steps in flight are done again."""
    def handler(signum, frame):
        word = "interrupted" if signum == signal.SIGINT else "stopped"
        if _CURRENT["thread_id"]:
            message = f"\ndeepresearch: {word}; the run is checkpointed: '{resume_hint()}' continues it\n"
        else:
            message = f"\ndeepresearch: {word}\n"
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001
            pass
        os.write(2, message.encode("utf-8", "replace"))
        os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else 128 + signum)

    try:
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        pass


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # run as a program (not called from Python): leave promptly on Ctrl-C
        _exit_promptly_on_signals()
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
    except sqlite3.DatabaseError as e:  # a damaged file that opened but cannot be read
        print(f"deepresearch: the checkpoint database cannot be read ({redact(e)}); "
              "use another --db or remove the damaged file", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        if _CURRENT["thread_id"]:
            print(f"\ndeepresearch: interrupted; the run is checkpointed: '{resume_hint()}' continues it",
                  file=sys.stderr)
        else:
            print("\ndeepresearch: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - a one-line message, never a traceback
        hint = f"; '{resume_hint()}' continues it from its last checkpoint" if _CURRENT["thread_id"] else ""
        print(f"deepresearch: the run failed: {redact(type(e).__name__)}: {redact(e)}{hint}", file=sys.stderr)
        if os.environ.get("DEEPRESEARCH_DEBUG"):
            raise
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
