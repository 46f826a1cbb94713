"""Checkpointers for durable runs: a SQLite file (the CLI's default) or PostgreSQL.

From Python:

    from deepresearch.runtime.checkpoint import open_checkpointer
    from deepresearch.graphs.deep import build

    with open_checkpointer("postgresql://user:pw@host:5432/db") as saver:   # or "runs.sqlite"
        graph = build(checkpointer=saver)
        graph.invoke({"question": "..."}, {"configurable": {"thread_id": "t1"}}, context=...)
        # later, in another process: the same thread_id continues where it stopped
        graph.invoke(None, {"configurable": {"thread_id": "t1"}}, context=...)

`open_checkpointer` creates the tables on first use (`setup()`). `open_store(db)` opens the
LangGraph store beside it (a `PostgresStore` in the same database, or a `SqliteStore` in the same
file), where runs keep the full texts of their sources, so that a run resumed by another process
or machine verifies its citations against the same texts:

    with open_checkpointer(db) as saver, open_store(db) as store:
        graph = build(checkpointer=saver, store=store)

A LangGraph server deployment (`langgraph dev`, LangGraph Platform) brings its own checkpointer
and store: the graphs in `langgraph.json` are compiled without them.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
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


CLAIMS_TABLE = "deepresearch_threads"
BUSY_SECONDS = 30.0  # how long a write waits for another process's write (runs may share a file)


def sqlite_exists(db: str) -> bool:
    """A SQLite `db` that is there already (a PostgreSQL URL always counts as there)."""
    return is_postgres(db) or Path(db).expanduser().is_file()


def _check_writable(conn: sqlite3.Connection, path: Path) -> None:
    """A write that is rolled back: a read-only file (or folder) fails here, before any work."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"PRAGMA user_version = {int(version)}")
    except sqlite3.OperationalError as e:
        if conn.in_transaction:
            conn.rollback()
        if "readonly" in str(e) or "read-only" in str(e) or "permission" in str(e).lower():
            raise CheckpointError(
                f"checkpoint file {path} is read-only ({e}); use another --db or make it writable"
            ) from None
        raise
    conn.rollback()


@contextmanager
def _postgres(kind, setup, what: str, db: str):
    """`kind.from_conn_string(db)` entered and set up (tables created); CheckpointError with a
    one-line reason, the URL's password masked, when it cannot be used."""
    cm = None
    try:
        cm = kind.from_conn_string(db)
        opened = cm.__enter__()
        setup(opened)
    except Exception as e:  # noqa: BLE001 - never echo the URL: it may hold a password
        if cm is not None:
            try:
                cm.__exit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
        raise CheckpointError(
            f"cannot open the PostgreSQL {what}: {type(e).__name__}: {_without_password(str(e), db)}"
        ) from None
    try:
        yield opened
    finally:
        cm.__exit__(None, None, None)


@contextmanager
def open_checkpointer(db: str, *, write: bool = True):
    """A checkpointer for `db`: a SQLite file path or a postgresql:// URL (tables are created
    on first use). Raises CheckpointError with a one-line reason when it cannot be used; with
    `write`, a database that cannot be written is refused at once."""
    if is_postgres(db):
        from langgraph.checkpoint.postgres import PostgresSaver

        with _postgres(PostgresSaver, lambda saver: saver.setup(), "checkpointer", db) as saver:
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(db).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_SECONDS)
        conn.execute("PRAGMA journal_mode=WAL")
        saver = SqliteSaver(conn)
        saver.setup()
        conn.execute("SELECT count(*) FROM checkpoints").fetchone()
        if write:
            _check_writable(conn, path)
    except (sqlite3.Error, OSError) as e:
        if "readonly" in str(e):
            raise CheckpointError(
                f"checkpoint file {path} is read-only ({e}); use another --db or make it writable"
            ) from None
        raise CheckpointError(f"cannot use checkpoint file {path}: {e}") from None
    try:
        yield saver
    finally:
        conn.close()


def claim_thread(saver, thread_id: str) -> bool:
    """Record that `thread_id` is being started; False when it was already (by this process
    or another one). One insert into a table with the thread id as its key: atomic, so two
    processes starting the same thread at once cannot both get it."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    started = datetime.now(UTC).isoformat(timespec="seconds")
    if isinstance(saver, SqliteSaver):
        with saver.lock:
            try:
                with saver.conn:  # one transaction, committed
                    saver.conn.execute(
                        f"CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (thread_id TEXT PRIMARY KEY, started TEXT)"
                    )
                    saver.conn.execute(f"INSERT INTO {CLAIMS_TABLE} VALUES (?, ?)", (thread_id, started))
            except sqlite3.IntegrityError:
                return False
        return True
    import psycopg
    from psycopg_pool import ConnectionPool

    pooled = saver.conn.connection() if isinstance(saver.conn, ConnectionPool) else nullcontext(saver.conn)
    with saver.lock, pooled as conn:
        try:
            with conn.transaction():
                conn.execute(f"CREATE TABLE IF NOT EXISTS {CLAIMS_TABLE} (thread_id TEXT PRIMARY KEY, started TEXT)")
        except psycopg.errors.UniqueViolation:  # another process created it at the same moment
            pass
        with conn.transaction():
            row = conn.execute(
                f"INSERT INTO {CLAIMS_TABLE} VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING thread_id",
                (thread_id, started),
            ).fetchone()
    return row is not None


@contextmanager
def open_store(db: str):
    """The LangGraph store beside the checkpointer of `db` (tables created on first use): a
    PostgresStore in the same database, or a SqliteStore in the same file. Raises
    CheckpointError with a one-line reason when it cannot be used."""
    if is_postgres(db):
        from langgraph.store.postgres import PostgresStore

        with _postgres(PostgresStore, _setup, "store", db) as store:
            yield store
        return
    from langgraph.store.sqlite import SqliteStore

    path = Path(db).expanduser()
    conn = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), check_same_thread=False, timeout=BUSY_SECONDS, isolation_level=None
        )  # autocommit: the store opens its own transactions
        conn.execute("PRAGMA journal_mode=WAL")
        store = SqliteStore(conn)
        _setup(store)
    except (sqlite3.Error, OSError) as e:
        if conn is not None:
            conn.close()
        raise CheckpointError(f"cannot use the store in {path}: {e}") from None
    try:
        yield store
    finally:
        conn.close()


def _setup(store) -> None:
    """Create the store's tables; once more if another process was creating them at the same moment."""
    try:
        store.setup()
    except Exception:  # noqa: BLE001 - a concurrent first setup: the second try finds them made
        store.setup()
