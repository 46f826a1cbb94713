"""Checkpointers for durable runs: a SQLite file (the CLI's default) or PostgreSQL.

    with open_checkpointer("runs.sqlite") as saver: ...
    with open_checkpointer("postgresql://user:pw@host:5432/db") as saver: ...
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path

import platformdirs


class CheckpointError(Exception):
    """The checkpoint database cannot be opened or read."""


def default_db() -> str:
    return str(Path(platformdirs.user_data_dir("deepresearch")) / "runs.sqlite")


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


@contextmanager
def open_checkpointer(db: str):
    if is_postgres(db):
        from langgraph.checkpoint.postgres import PostgresSaver

        try:
            cm = PostgresSaver.from_conn_string(db)
            saver = cm.__enter__()
            saver.setup()
        except Exception as e:  # noqa: BLE001 - never echo the URL: it may hold a password
            raise CheckpointError(f"cannot open the PostgreSQL checkpointer: {type(e).__name__}") from None
        try:
            yield saver
        finally:
            cm.__exit__(None, None, None)
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(db).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        saver = SqliteSaver(conn)
        saver.setup()
        conn.execute("SELECT count(*) FROM checkpoints").fetchone()
    except (sqlite3.Error, OSError) as e:
        raise CheckpointError(f"cannot use checkpoint file {path}: {e}") from None
    try:
        yield saver
    finally:
        conn.close()
