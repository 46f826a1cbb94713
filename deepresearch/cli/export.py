"""`deepresearch export THREAD_ID --format md|html|docx|pdf|bibtex|ris|csljson [-o FILE]`: a
finished run's report, or the bibliography of its cited sources, as a file, from the checkpoint database (`--db`) or from a LangGraph server (`--url`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from deepresearch.cli.common import EXIT_OK, UsageError, _Parser, check_output, check_text


def export_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch export", description="Export a finished run's report to a file.")
    p.add_argument("thread_id")
    p.add_argument(
        "--format",
        "-f",
        choices=["md", "html", "docx", "pdf", "bibtex", "ris", "csljson"],
        default="md",
        help="md (the Markdown), html (a standalone page), docx (Word) or pdf; or the cited sources as "
        "a bibliography: bibtex (.bib), ris or csljson (CSL-JSON, .json)",
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="the file to write (default: REPORT-ID.FORMAT; '-' writes to stdout)"
    )
    p.add_argument(
        "--db", metavar="PATH|URL", help="checkpoint database (default: runs.sqlite in the user data directory)"
    )
    p.add_argument(
        "--url", metavar="URL", help="read the thread from a LangGraph server instead, e.g. http://127.0.0.1:2024"
    )
    p.add_argument(
        "--token", metavar="TOKEN", help="the token a server with users asks for (default: DEEPRESEARCH_TOKEN)"
    )
    return p


def _from_db(db: str, thread_id: str) -> dict:
    from deepresearch.runtime.checkpoint import open_checkpointer, sqlite_exists

    if not sqlite_exists(db):
        raise UsageError(f"no such database: {db}")
    with open_checkpointer(db, write=False) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        if found is None:
            raise UsageError(f"unknown thread id {thread_id!r} (see 'deepresearch threads')")
        return dict(found.checkpoint.get("channel_values") or {})


def _from_server(url: str, thread_id: str, token: str | None) -> dict:
    import httpx
    from langgraph_sdk import get_sync_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        state = get_sync_client(url=url, headers=headers).threads.get_state(thread_id)
    except httpx.HTTPStatusError as e:
        code = e.response.status_code
        if code == 401:
            raise UsageError(
                f"{url} refused the {'token' if token else 'request'}: give a valid one with --token "
                "or DEEPRESEARCH_TOKEN"
            ) from None
        raise UsageError(
            f"unknown thread id {thread_id!r} on {url}"
            if code in (404, 422)
            else f"the server answered {code} for thread {thread_id!r}"
        ) from None
    except httpx.HTTPError as e:
        raise UsageError(f"cannot reach {url}: {type(e).__name__}") from None
    values = state.get("values")
    return dict(values) if isinstance(values, dict) else {}


def cmd_export(argv: list[str]) -> int:
    from deepresearch.runtime.checkpoint import default_db
    from deepresearch.web.export import EXTENSIONS, ExportError, export

    args = export_parser().parse_args(argv)
    check_text("the thread id", args.thread_id, one_line=True)
    if args.output != "-":
        check_output(args.output)
    token = args.token or os.environ.get("DEEPRESEARCH_TOKEN") or None
    if token:
        check_text("the token", token, one_line=True)
    values = (
        _from_server(args.url, args.thread_id, token) if args.url else _from_db(args.db or default_db(), args.thread_id)
    )
    try:
        data = export(values, args.format)
    except ExportError as e:
        raise UsageError(f"thread {args.thread_id}: {e}") from None
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return EXIT_OK
    target = Path(args.output or f"report-{args.thread_id[:8]}.{EXTENSIONS.get(args.format, args.format)}").expanduser()
    target.write_bytes(data)
    print(f"wrote {target}", file=sys.stderr)
    return EXIT_OK
