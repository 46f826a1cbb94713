"""`deepresearch threads`: list the runs in the checkpoint database."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext

from deepresearch.cli.common import EXIT_OK, _Parser


def threads_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deepresearch threads", description="List the runs in the checkpoint database.")
    p.add_argument("--db", metavar="PATH|URL")
    p.add_argument("--json", action="store_true")
    return p


def _finished(values: dict, metadata: dict) -> str:
    """A finished run is `editable` (`deepresearch edit`) until it has had its max_edits edits."""
    try:
        limit = int(json.loads(metadata.get("dr_context") or "{}").get("max_edits") or 10)
    except (ValueError, TypeError, AttributeError):
        limit = 10
    return "editable" if values.get("edits", 0) < limit else "done"


def cmd_threads(argv: list[str]) -> int:
    from deepresearch.runtime.checkpoint import default_db, open_checkpointer, sqlite_exists
    from deepresearch.runtime.runner import provider_failure

    args = threads_parser().parse_args(argv)
    rows: dict[str, dict] = {}
    db = args.db or default_db()
    # listing only reads: a read-only file is fine, and a missing one is not created
    with open_checkpointer(db, write=False) if sqlite_exists(db) else nullcontext() as saver:
        for t in saver.list(None) if saver is not None else []:
            tid = t.config["configurable"]["thread_id"]
            if t.config["configurable"].get("checkpoint_ns"):
                continue
            row = rows.setdefault(tid, {"thread_id": tid, "status": None, "question": "", "mode": "", "started": ""})
            if row["status"] is None:  # newest checkpoint of the thread
                values = t.checkpoint.get("channel_values", {})
                waiting = any(w[1] == "__interrupt__" for w in (t.pending_writes or []))
                row["status"] = (
                    ("failed" if provider_failure(values) else _finished(values, t.metadata))
                    if values.get("report")
                    else "waiting for review"
                    if waiting
                    else "cancelled"
                    if values.get("stopped_by") == "cancelled"
                    else "incomplete"
                )
                row["updated"] = t.checkpoint.get("ts", "")[:19]
            if t.metadata.get("dr_question"):
                row.update(
                    question=t.metadata["dr_question"],
                    mode=t.metadata.get("dr_mode", ""),
                    started=t.metadata.get("dr_started", "")[:19],
                )
    listed = sorted(rows.values(), key=lambda r: r.get("updated", ""), reverse=True)
    if args.json:
        json.dump(listed, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif not listed:
        print("no runs yet")
    else:
        for r in listed:
            print(
                f"{r['thread_id']}  {r['status']:<18}  {r.get('updated', ''):<19}  {r['mode']:<9}  {r['question'][:70]}"
            )
    return EXIT_OK
