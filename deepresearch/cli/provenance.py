"""`deepresearch provenance THREAD_ID`: how the research arrived at each sentence of a run's report.

    deepresearch provenance THREAD_ID               the provenance as text (one line per step)
    deepresearch provenance THREAD_ID --html FILE   one standalone HTML page: click a sentence to see its
                                               chain and the source passage, highlighted
    deepresearch provenance THREAD_ID --mermaid     a Mermaid flowchart: question -> concepts -> searches
                                               -> sources -> sections
    deepresearch provenance THREAD_ID --json        the provenance record itself

A run made with `infer` off (`--no-infer`) is read from its checkpoint all the same.
(`deepresearch trace` is the same command under its former name.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from deepresearch.cli.common import EXIT_OK, UsageError, _Parser, _thread_meta, check_output, check_text


def provenance_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch provenance", description="Show how the research arrived at each report sentence.")
    p.add_argument("thread_id")
    p.add_argument("--html", metavar="FILE", help="write one standalone HTML page (no network needed)")
    p.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart of the research")
    p.add_argument("--json", action="store_true", help="print the provenance record as JSON")
    p.add_argument("--db", metavar="PATH|URL")
    return p


def provenance_of(thread_id: str, db: str | None) -> dict:
    from deepresearch.cli.resume import stored_run
    from deepresearch.provenance.chains import build
    from deepresearch.runtime.checkpoint import default_db, open_checkpointer, open_store, sqlite_exists
    from deepresearch.runtime.runner import build_graph, run_config

    db = db or default_db()
    if not sqlite_exists(db):
        raise UsageError(f"no such database: {db}")
    with open_checkpointer(db, write=False) as saver, open_store(db) as store:
        meta = _thread_meta(saver, thread_id)
        if meta is None:
            raise UsageError(f"unknown thread id {thread_id!r} (see 'deepresearch threads')")
        ctx, mode, question = stored_run(meta, thread_id)
        values = build_graph(mode, saver, store).get_state(run_config(thread_id, ctx, mode, question)).values
    if not values.get("report"):
        raise UsageError(f"thread {thread_id} has no report yet (see 'deepresearch threads')")
    return values.get("provenance") or build(values)


def cmd_provenance(argv: list[str]) -> int:
    from deepresearch.provenance.views import as_html, as_mermaid, as_text

    args = provenance_parser().parse_args(argv)
    check_text("the thread id", args.thread_id, one_line=True)
    check_output(args.html)
    prov = provenance_of(args.thread_id, args.db)
    if args.html:
        try:
            Path(args.html).expanduser().write_text(as_html(prov), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--html {args.html}: {e.strerror}") from None
        print(f"deepresearch: provenance page written to {args.html}", file=sys.stderr)
    if args.json:
        sys.stdout.write(json.dumps(prov, ensure_ascii=False, indent=2) + "\n")
    elif args.mermaid:
        sys.stdout.write(as_mermaid(prov))
    elif not args.html:
        sys.stdout.write(as_text(prov))
    return EXIT_OK
