"""Checkpointers for durable runs: a SQLite file (the CLI's default) or PostgreSQL.

From Python:

    from deepresearch.checkpoint import open_checkpointer
    from deepresearch.graphs.deep import build

    with open_checkpointer("postgresql://user:pw@host:5432/db") as saver:   # or "runs.sqlite"
        graph = build(checkpointer=saver)
        graph.invoke({"question": "..."}, {"configurable": {"thread_id": "t1"}}, context=...)
        # later, in another process: the same thread_id continues where it stopped
        graph.invoke(None, {"configurable": {"thread_id": "t1"}}, context=...)

`open_checkpointer` creates the tables on first use (`setup()`). A LangGraph server
deployment (`langgraph dev`, LangGraph Platform) brings its own checkpointer: the graphs in
`langgraph.json` are compiled without one.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs


class CheckpointError(Exception):
    """The checkpoint database cannot be opened or read."""


def default_db() -> str:
    return str(Path(platformdirs.user_data_dir("deepresearch")) / "runs.sqlite")


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


def _without_password(message: str, url: str) -> str:
    """The first line of a driver error, with the URL's password (if any) masked."""
    line = (message.strip().splitlines() or [""])[0][:300]
    password = urlsplit(url).password
    return line.replace(password, "***") if password else line


@contextmanager
def open_checkpointer(db: str, *, must_exist: bool = False):
    """A checkpointer for `db`: a SQLite file path or a postgresql:// URL (tables are created
    on first use). Raises CheckpointError with a one-line reason when it cannot be used."""
    if is_postgres(db):
        from langgraph.checkpoint.postgres import PostgresSaver

        cm = None
        try:
            cm = PostgresSaver.from_conn_string(db)
            saver = cm.__enter__()
            saver.setup()
        except Exception as e:  # noqa: BLE001 - never echo the URL: it may hold a password
            if cm is not None:
                try:
                    cm.__exit__(None, None, None)
                except Exception:  # noqa: BLE001
                    pass
            raise CheckpointError(f"cannot open the PostgreSQL checkpointer: {type(e).__name__}: "
                                  f"{_without_password(str(e), db)}") from None
        try:
            yield saver
        finally:
            cm.__exit__(None, None, None)
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(db).expanduser()
    if must_exist and not path.is_file():
        raise CheckpointError(f"no such database: {db}")
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
