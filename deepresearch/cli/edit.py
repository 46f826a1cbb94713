"""`deepresearch edit THREAD_ID ACTION`: edit a finished report in place.

    deepresearch edit T expand --select "exact text of the report"
    deepresearch edit T shorten --start 120 --end 342
    deepresearch edit T supplementary_search --select "..." [--scope selected_and_related] [--query "..."]
    deepresearch edit T fact_check --select "..."
    deepresearch edit T sync --file EDITED.md        your own edit of the whole report
    deepresearch edit T finish                       no more edits

Works on any finished run of the database, also one started without `edit_after_report`: the
thread goes on to the graph's `report_feedback` node, which makes the edit and is checkpointed
on the same thread (so an edit cut off by a crash is done by `deepresearch resume T`). Prints
the new report (or writes --output). Exit 2 for an invalid request (the text is not in the
report, or is there more than once without --start/--end, a span cutting a citation…), with
one line; 1 when the edit was refused (budget spent, model failure): the report is unchanged.
When the model's rewrite could not be used (its reply was cut, or it did not do what was
asked) and a fallback did the edit (the sources' own sentences, new to the report, added;
the least supported sentences left out), a notice says so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from deepresearch.cli.common import (
    _CURRENT,
    EXIT_FAILED,
    UsageError,
    _output_options,
    _Parser,
    _thread_meta,
    check_output,
    check_text,
    emit_result,
)
from deepresearch.edit.actions import ACTIONS, SCOPES, EditError, find_span, parse_request
from deepresearch.files import FileReadError, read_text
from deepresearch.text.safe import echoed

MAX_FILE_BYTES = 4_000_000


def edit_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch edit", description="Edit a finished report in place; its citations are kept true.")
    p.add_argument("thread_id")
    p.add_argument("action", choices=ACTIONS, metavar="ACTION", help=", ".join(ACTIONS))
    p.add_argument("--select", metavar="TEXT", help="the exact text of the report to work on")
    p.add_argument("--start", type=int, metavar="N", help="the span's first character (offset into the report)")
    p.add_argument("--end", type=int, metavar="M", help="the character after the span")
    p.add_argument(
        "--scope",
        choices=SCOPES,
        help="supplementary_search: the selection only (default), or also the paragraphs the new findings bear on",
    )
    p.add_argument("--query", help="supplementary_search: what to search for (default: the selected text)")
    p.add_argument("--file", metavar="EDITED.md", help="sync: the whole report as you edited it")
    _output_options(p)
    return p


def build_request(args, report: str) -> dict:
    """The resume value for the node, checked here first: bad input never reaches the graph."""
    if args.action == "finish":
        return {"action": "finish"}
    if args.action == "sync":
        if not args.file:
            raise UsageError("sync needs --file EDITED.md (the whole report as you edited it)")
        path = Path(args.file).expanduser()
        try:  # a regular file of at most 4 MB: /dev/zero or a FIFO is refused, never read to its end
            text = read_text(path, MAX_FILE_BYTES)
        except UnicodeDecodeError:
            raise UsageError(f"--file {args.file}: not UTF-8 text") from None
        except FileReadError as e:
            raise UsageError(f"--file {args.file}: {e.reason}") from None
        value = {"action": "sync", "report": text}
    else:
        if args.file:
            raise UsageError("--file goes with sync only")
        if args.select is None and (args.start is None or args.end is None):
            raise UsageError(f"{args.action} needs --select TEXT or --start N --end M")
        if args.start is not None and args.end is not None:
            start, end = args.start, args.end
            if args.select is not None and report[start:end] != args.select:
                raise UsageError(f"--select is not the report's text at {start}-{end}")
        else:
            try:
                start, end = find_span(report, args.select)
            except EditError as e:
                raise UsageError(str(e)) from None
        value = {"action": args.action, "selected_text": report[start:end], "start": start, "end": end}
        if args.action == "supplementary_search":
            value["scope"] = args.scope or "selected_only"
            if args.query is not None:
                value["query"] = args.query
        elif args.scope or args.query:
            raise UsageError("--scope and --query go with supplementary_search only")
    try:
        return parse_request(value, report)
    except EditError as e:
        raise UsageError(str(e)) from None


def cmd_edit(argv: list[str]) -> int:
    from langgraph.types import Command

    from deepresearch.cli.progress import Progress
    from deepresearch.cli.resume import check_settings, stored_run
    from deepresearch.runtime.checkpoint import default_db, open_checkpointer, open_store, sqlite_exists
    from deepresearch.runtime.runner import _stream, build_graph, result_of, run_config
    from deepresearch.runtime.thread_lock import thread_lock

    args = edit_parser().parse_args(argv)
    check_text("the thread id", args.thread_id, one_line=True)
    for what, value in (("--select", args.select), ("--query", args.query)):
        check_text(what, value)
    check_output(args.output)
    db = args.db or default_db()
    if not sqlite_exists(db):
        raise UsageError(f"no such database: {db}" + ("" if args.db else " (no run was checkpointed yet)"))
    waited = []

    def wait_notice():
        waited.append(True)
        progress.notice(f"thread {args.thread_id} is being changed by another command; waiting for it to finish")

    # one command at a time changes a thread (across processes): a second edit waits, then
    # works on the report as the first one left it; nothing is read before the lock is held
    with (
        open_checkpointer(db) as saver,
        open_store(db) as store,
        Progress(quiet=args.quiet) as progress,
        thread_lock(db, args.thread_id, on_wait=wait_notice),
    ):
        meta = _thread_meta(saver, args.thread_id)
        if meta is None:
            raise UsageError(f"unknown thread id {echoed(args.thread_id)} (see 'deepresearch threads')")
        ctx, mode, question = stored_run(meta, args.thread_id)
        graph = build_graph(mode, saver, store)  # the run's texts are in the store beside the checkpoints
        config = run_config(args.thread_id, ctx, mode, question)
        config["metadata"] = {k: v for k, v in meta.items() if k.startswith("dr_")}
        snapshot = graph.get_state(config)
        pending = [i for i in snapshot.interrupts if (i.value or {}).get("type") == "report_feedback"]
        values = snapshot.values
        if not pending:
            if snapshot.interrupts or snapshot.tasks or not values.get("report"):
                raise UsageError(
                    f"thread {args.thread_id} has no finished report to edit; "
                    f"'deepresearch resume {args.thread_id}' finishes it first"
                )
            if values.get("edits", 0) >= ctx.max_edits:
                raise UsageError(f"thread {args.thread_id} has had its {ctx.max_edits} edits (max_edits)")
            if args.action == "finish":
                progress.notice(f"thread {args.thread_id} is not open for edits; nothing to finish")
                return emit_result(
                    result_of(values, question=question, mode=mode, thread_id=args.thread_id), args, progress
                )
        if waited and args.select is None and args.start is not None:
            raise UsageError(
                f"thread {args.thread_id} was edited by another command while this one waited: "
                "--start/--end may no longer point at the text you meant; give --select too"
            )
        request = build_request(args, values.get("report", ""))  # exit 2 before anything is written
        check_settings(ctx)
        _CURRENT.update(thread_id=args.thread_id, db=args.db)
        if not pending:  # a finished run: on to report_feedback, which pauses for this request
            # reopened as the feedback step's own update: its edge (not done yet) runs it again
            graph.update_state(
                config,
                {"editing": True, "feedback_done": False, "feedback_error": None, "last_change": None},
                as_node="report_feedback",
            )
            _stream(graph, None, config, ctx, progress)
            snapshot = graph.get_state(config)
            pending = [i for i in snapshot.interrupts if (i.value or {}).get("type") == "report_feedback"]
            if not pending:
                raise UsageError(f"thread {args.thread_id} could not be opened for edits")
        progress.notice(f"editing thread {args.thread_id}: {args.action}")
        # a plain resume value (not a map by interrupt id) is saved in the checkpoint before the
        # node runs: an edit cut off by a crash is finished by `deepresearch resume`
        final = _stream(graph, Command(resume=request), config, ctx, progress)
        snapshot = graph.get_state(config)
        values = snapshot.values or final
        waiting = [i.value for i in snapshot.interrupts]
        error = next((w.get("error") for w in waiting if w.get("error")), None)
        result = result_of(values, question=question, mode=mode, thread_id=args.thread_id)
        result["last_change"] = values.get("last_change")
        if error:  # refused: the report is as it was
            print(f"deepresearch: {error}", file=sys.stderr)
            return EXIT_FAILED
        fallback = (values.get("last_change") or {}).get("fallback")
        if fallback:  # the model's rewrite was not used: say what was done instead
            progress.notice(f"{args.action}: {fallback}")
        if waiting:
            progress.notice(f"edit {values.get('edits', 0)}/{ctx.max_edits} done; the thread stays open for edits")
        else:
            progress.notice(f"thread {args.thread_id}: editing finished")
        if args.json:
            result["edits"] = values.get("edits", 0)
        return emit_result(result, args, progress)
