"""One process at a time changes a thread: a lock per (database, thread) that holds across
processes, taken by `deepresearch edit` (and by `resume` of a thread open for edits) for as
long as the command reads, rewrites and stores the report.

The lock is a file in the cache directory (`filelock`: an OS lock on the file, released when
the process ends, also by kill -9), named by a hash of the database (a SQLite file's resolved
path, or a PostgreSQL URL without its password) and the thread id. A second command on the
same thread waits for the first to finish, then works on the report as the first left it.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from filelock import FileLock, Timeout

from deepresearch.checkpoint import is_postgres


def _database_key(db: str) -> str:
    if is_postgres(db):
        return re.sub(r"(://[^:/@]*):[^@]*@", r"\1@", db)  # the password is not part of the name
    return str(Path(db).expanduser().resolve())


def lock_path(db: str, thread_id: str) -> Path:
    digest = hashlib.sha256(f"{_database_key(db)}\0{thread_id}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(platformdirs.user_cache_dir("deepresearch")) / "thread-locks" / f"{digest}.lock"


@contextmanager
def thread_lock(db: str, thread_id: str, on_wait=None):
    """Hold the thread's lock for the block. When another process holds it, `on_wait()` is
    called once and the lock is waited for (the other command finishes in its own time)."""
    path = lock_path(db, thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait:
            on_wait()
        lock.acquire()
    try:
        yield
    finally:
        lock.release()
