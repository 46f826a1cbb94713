"""One process at a time changes a thread: a lock per (database, thread) that holds across
processes, taken by `deepresearch edit` and `deepresearch resume` for as long as the command
reads, rewrites and stores the report.

- A SQLite database (one machine): a lock file in the cache directory (`filelock`: an OS
  lock, released when the process ends, also by kill -9), named by a hash of the database's
  resolved path and the thread id.
- A PostgreSQL database (any number of machines): a session advisory lock on the server
  (`pg_advisory_lock`, keyed by a hash of the thread id), held on a connection of its own and
  released when it closes, also when the process dies.

A second command on the same thread waits for the first to finish, then works on the report
as the first left it.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from filelock import FileLock, Timeout

from deepresearch.runtime.checkpoint import CheckpointError, _without_password, is_postgres


def lock_path(db: str, thread_id: str) -> Path:
    key = f"{Path(db).expanduser().resolve()}\0{thread_id}"
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(platformdirs.user_cache_dir("deepresearch")) / "thread-locks" / f"{digest}.lock"


def advisory_key(thread_id: str) -> int:
    """The thread's advisory lock key: a signed 64-bit number from a hash of its id."""
    digest = hashlib.sha256(b"deepresearch thread\0" + thread_id.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def _file_lock(db: str, thread_id: str, on_wait):
    path = lock_path(db, thread_id)
    lock = FileLock(str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if on_wait:
                on_wait()
            lock.acquire()
    except OSError as e:  # an unwritable cache directory: say so (exit 2), change nothing
        raise CheckpointError(
            f"cannot lock thread {thread_id[:100]!r} for this command: {path.parent}: {e.strerror or e}"
        ) from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def _advisory_lock(db: str, thread_id: str, on_wait):
    import psycopg

    key, conn = advisory_key(thread_id), None
    try:
        conn = psycopg.connect(db, autocommit=True)
        got = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()  # one row: (locked,)
        if not (got and got[0]):
            if on_wait:
                on_wait()
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
    except psycopg.Error as e:
        if conn is not None:
            conn.close()
        raise CheckpointError(
            f"cannot lock thread {thread_id[:100]!r} on the PostgreSQL server: "
            f"{type(e).__name__}: {_without_password(str(e), db)}"
        ) from None
    try:
        yield
    finally:
        conn.close()  # ends the session: the lock goes with it


@contextmanager
def thread_lock(db: str, thread_id: str, on_wait=None):
    """Hold the thread's lock for the block. When another process holds it, `on_wait()` is
    called once and the lock is waited for (the other command finishes in its own time)."""
    lock = _advisory_lock if is_postgres(db) else _file_lock
    with lock(db, thread_id, on_wait):
        yield
