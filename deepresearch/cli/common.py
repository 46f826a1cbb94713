"""What the commands share: errors, the resume hint, output of results, option groups."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import shlex
import sys
import unicodedata
from pathlib import Path
from typing import overload
from urllib.parse import urlsplit, urlunsplit

from deepresearch.text.safe import echoed, one_line

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad input: one line to stderr, exit status 2."""


# the run in progress, for the resume hint of the error and interrupt messages
_CURRENT: dict[str, str | None] = {"thread_id": None, "db": None}


@overload
def safe_db(db: str) -> str: ...
@overload
def safe_db(db: None) -> None: ...
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
    return f"deepresearch resume {shlex.quote(thread_id)}" + (f" --db {shlex.quote(safe_db(db))}" if db else "")


def quoted_hint(thread_id: str | None = None, db: str | None = None) -> str:
    """The resume command set off in a sentence: in single quotes, or in double quotes when
    the (shell-quoted) command holds single quotes itself."""
    hint = resume_hint(thread_id, db)
    return f'"{hint}"' if "'" in hint else f"'{hint}'"


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"not a number: {echoed(text)}") from None
        if not math.isfinite(value):  # nan and inf are no budgets
            raise argparse.ArgumentTypeError(f"must be a finite number: {echoed(text)}")
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {echoed(text)}")
        return value

    return parse


def check_text(what: str, value: str | None, *, one_line: bool = False) -> None:
    """Text given on the command line is valid UTF-8 (the shell may pass any bytes: Python
    keeps the invalid ones as surrogate escapes), and with `one_line` has no control characters."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} is not valid UTF-8 text") from None
    if one_line and any(unicodedata.category(c) == "Cc" for c in value):
        raise UsageError(f"{what} must not contain control characters (line breaks, tabs, escapes)")


# The commands besides a run, in the order `deepresearch --help` lists them: name -> (its
# arguments, what it does). `deepresearch NAME` runs `cmd_NAME` (deepresearch/cli/__init__.py).
COMMANDS = {
    "resume": ("THREAD_ID", "continue an interrupted, crashed or waiting run"),
    "edit": ("THREAD_ID ACTION", "edit a finished report in place"),
    "threads": ("", "list the runs in the checkpoint database"),
    "provenance": ("THREAD_ID", "how the research arrived at each report sentence"),
    "export": ("THREAD_ID", "a finished report as a file (md, html, docx, pdf)"),
    "template": ("SAMPLE -o FILE", "derive a report template from a sample report"),
    "tools": ("[--mcp CONFIG.json]", "list the search backends and MCP tools a run can use"),
    "users": ("add|remove|list", "manage the API tokens of a server's users"),
    "index": ("", "encode the offline encyclopedia for search by meaning (set-up does it)"),
    "setup": ("", "add search by meaning (the model's weights, the encyclopedia's vectors)"),
    "serve": ("[--port N]", "serve the graphs, the API and the web page (LangGraph server)"),
}


def commands_help() -> str:
    """The other commands, one a line (the run's --help ends with them)."""
    calls = {name: f"deepresearch {name} {args}".rstrip() for name, (args, _what) in COMMANDS.items()}
    width = max(map(len, calls.values())) + 2
    return "Other commands (each with --help):\n" + "\n".join(
        f"  {calls[name].ljust(width)}{what}" for name, (_args, what) in COMMANDS.items()
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(message)


LONGEST_WORD = 200  # an error line's longest run without a space (a value nobody cut: a path, an id)
LONGEST_LINE = 1000


def error_line(message) -> str:
    """The one line an error prints: whatever the message, on one line, with any run of more
    than LONGEST_WORD characters without a space cut, and at most LONGEST_LINE characters.
    (Values a person gave are cut to 80 characters where they are quoted: `safe_text.echoed`.)"""
    words = [w if len(w) <= LONGEST_WORD else w[: LONGEST_WORD - 1] + "…" for w in str(message).split()]
    return one_line(" ".join(words), LONGEST_LINE)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (default: stdout)")
    p.add_argument("--json", action="store_true", help="print one JSON object with the report, sources, usage…")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--db",
        metavar="PATH|URL",
        help="checkpoint database: a SQLite file or a postgresql:// URL "
        "(default: runs.sqlite in the user data directory)",
    )


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


# --- output -----------------------------------------------------------------------------


def _to_stdout(text: str) -> bool:
    """Write `text` to stdout; False when stdout is closed or its reader went away."""
    stream = sys.stdout
    if stream is None:
        return False
    try:
        stream.write(text)
        stream.flush()
        return True
    except (OSError, ValueError) as e:  # EPIPE, EBADF; ValueError: a closed file object
        if isinstance(e, OSError) and e.errno not in (errno.EPIPE, errno.EBADF, errno.EINVAL):
            raise
        try:  # nothing more can reach it: keep the interpreter's exit from complaining too
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            sys.stdout = None
        return False


def emit_result(result: dict, args, progress) -> int:
    """Deliver the report (a file, stdout, or JSON on stdout); the exit status: 1 when the
    report reached nowhere (stdout closed or broken and no --output)."""
    delivered = False
    if args.output:
        try:
            Path(args.output).expanduser().write_text(result.get("report", ""), encoding="utf-8")
        except OSError as e:
            # the run is safe in its checkpoint; the report still reaches stdout
            print(
                f"deepresearch: cannot write {args.output}: {e.strerror}; printing the report instead", file=sys.stderr
            )
            args.output = None
        else:
            delivered = True
            progress.message(f"report written to {args.output}")
    if args.json:
        ok = _to_stdout(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    elif not args.output:
        report = result.get("report", "")
        ok = _to_stdout(report if report.endswith("\n") else report + "\n")
    else:
        ok = True
    if not ok:
        what = "the report" if not delivered else "the JSON result"
        again = f"; {quoted_hint(result.get('thread_id'))} prints it again" if result.get("thread_id") else ""
        print(f"deepresearch: cannot write {what} to stdout (closed or broken pipe){again}", file=sys.stderr)
        if not delivered:
            return EXIT_FAILED
    # the report's last line: the verification summary, in the report's language
    verification = next(
        (
            line.strip("_ ")
            for line in reversed(result.get("report", "").splitlines())
            if len(line) > 2 and line.startswith("_") and line.endswith("_")
        ),
        None,
    )
    if verification:
        progress.message(verification)
    return EXIT_OK


def emit_waiting(result: dict, args, progress) -> int:
    """The run waits for an answer nobody gave (outline review, clarifying questions): say how
    to answer it; no report."""
    request = (result.get("waiting") or [{}])[0]
    hint = resume_hint(result.get("thread_id"))
    if request.get("error"):
        progress.message(f"last answer not used: {request['error']}")
    if request.get("type") == "clarify":
        for i, q in enumerate(request.get("questions") or [], 1):
            progress.message(f"  {i}. {q}")
        progress.notice(
            f"thread {result.get('thread_id')} is waiting for answers to clarifying questions (round "
            f"{request.get('round')}/{request.get('max_rounds')}); answer them with: {hint} --answer "
            '\'{"action": "answer", "answers": "..."}\' (or skip/finish), or run \'' + hint + "' at a terminal"
        )
    else:
        progress.notice(
            f"thread {result.get('thread_id')} is waiting for an outline review (round "
            f"{request.get('round')}/{request.get('max_rounds')}); answer it with: {hint} --answer "
            '\'{"action": "accept"}\' (or revise/replace), or run \'' + hint + "' at a terminal"
        )
    if args.json:
        out = {k: result[k] for k in ("question", "mode", "thread_id") if k in result}
        out.update(status="waiting", waiting=result["waiting"])
        if not _to_stdout(json.dumps(out, ensure_ascii=False, indent=2) + "\n"):
            print("deepresearch: cannot write the JSON result to stdout (closed or broken pipe)", file=sys.stderr)
            return EXIT_FAILED
    return EXIT_OK


def finish(result: dict, args, progress) -> int:
    from deepresearch.events import redact
    from deepresearch.runtime.runner import provider_failure
    from deepresearch.text.safe import one_line

    if result.get("waiting") and (result["waiting"][0] or {}).get("type") == "report_feedback":
        # the report is done and open for edits: deliver it, and say how to edit it
        progress.notice(
            f"thread {result.get('thread_id')} is open for edits: deepresearch edit "
            f"{shlex.quote(str(result.get('thread_id')))} ACTION --select TEXT (or finish)"
        )
        return emit_result({k: v for k, v in result.items() if k != "waiting"}, args, progress)
    if result.get("waiting"):
        return emit_waiting(result, args, progress)
    if result.get("stopped_by") == "cancelled":  # finished at the clarifying questions: no report
        progress.message(
            f"thread {result.get('thread_id')} was finished at the clarifying questions; no research, no report"
        )
        if args.json:
            json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
            sys.stdout.flush()
        return EXIT_OK
    cause = provider_failure(result)
    if cause:  # nothing was researched: no report, exit 1, and the thread can be run again
        print(
            f"deepresearch: no model call succeeded ({one_line(redact(cause), 300)}); no report was written; "
            f"once the cause is fixed, {quoted_hint(result.get('thread_id'))} researches it again",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return emit_result(result, args, progress)


def _review_callback(progress):
    from deepresearch.cli.clarifying import ask_clarify
    from deepresearch.cli.review import ask

    def on_review(value):
        if value.get("type") == "report_feedback":  # edits are made with `deepresearch edit`, not at a prompt
            return None
        progress.pause()
        try:
            return ask_clarify(value) if value.get("type") == "clarify" else ask(value)
        finally:
            progress.resume()

    return on_review


def _thread_meta(saver, thread_id: str) -> dict | None:
    """The run's settings, stored in the metadata of each of its checkpoints (None: no such run)."""
    for t in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}):
        if t.metadata.get("dr_context"):
            return t.metadata
    return None
