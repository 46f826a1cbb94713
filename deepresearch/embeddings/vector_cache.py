"""Vectors worked out once: each text's vector kept by the embedder's model id and the text's hash,
in memory (the least recently used dropped first) and, for an embedder whose vectors stay the same
from one process to the next (`keeps_vectors`), in a SQLite file beside the encyclopedia's indexes
(deepresearch.embeddings.index_dir), which every process on the machine reads and adds to. When two
threads ask for the same text at once, one encodes it and the other waits for its vector.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from deepresearch.embeddings.index_dir import index_dir
from deepresearch.embeddings.registry import Embedder

KEPT = 50_000  # vectors kept in memory (a few hundred texts a run; texts recur across runs)
ON_DISK = 200_000  # vectors kept on disk (1.5 kB each for 384 dimensions); the least recently used go first
PRUNE_EVERY = 2_000  # vectors written between two checks of the disk's size


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def disk_path(embedder: Embedder, root: Path | None = None) -> Path | None:
    """Where `embedder`'s vectors are kept between processes; None when they are not (an embedder
    that does not say its vectors stay the same)."""
    if not getattr(embedder, "keeps_vectors", False):
        return None
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder.model_id)
    return (root or index_dir()) / "vectors" / f"{safe}.sqlite"


class DiskVectors:
    """One embedder's vectors in a SQLite file: (text hash, vector, last used). Any failure to read
    or write it is left unsaid: the vectors are then worked out again, never wrong."""

    def __init__(self, path: Path):
        self.path = path
        self._written = 0
        self._ok = True
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB, used REAL)")
        except (OSError, sqlite3.Error):
            self._ok = False

    def _connect(self) -> contextlib.closing[sqlite3.Connection]:
        """A connection of its own (closed after use): each call may come from another thread."""
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe, one sync a checkpoint, not a write
        return contextlib.closing(db)

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        if not self._ok or not keys:
            return {}
        found: dict[str, np.ndarray] = {}
        try:
            with self._connect() as db:
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk).fetchall()
                    found.update((k, np.frombuffer(v, dtype=np.float32).copy()) for k, v in rows)
                if found:  # what is used stays: the prune drops the least recently used
                    db.execute("BEGIN")
                    db.executemany("UPDATE vectors SET used = ? WHERE key = ?", [(time.time(), k) for k in found])
                    db.execute("COMMIT")
        except sqlite3.Error:
            return found
        return found

    def put(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        if not self._ok:
            return
        now = time.time()
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in items]
        try:
            with self._connect() as db:
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
                db.execute("COMMIT")
                self._written += len(rows)
                if self._written >= PRUNE_EVERY:
                    self._written = 0
                    db.execute(
                        "DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used DESC LIMIT -1 OFFSET ?)",
                        (ON_DISK,),
                    )
        except sqlite3.Error:
            pass


class VectorCache:
    """`vectors(texts)`: the embedder's vectors of `texts`, each worked out once."""

    def __init__(self, embedder: Embedder, root: Path | None = None, kept: int = KEPT):
        self.embedder = embedder
        self.kept = kept
        path = disk_path(embedder, root)
        self.disk = DiskVectors(path) if path is not None else None
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._pending: dict[str, threading.Event] = {}  # texts being encoded now, by another thread
        self._lock = threading.Lock()

    def _remember(self, found: dict[str, np.ndarray]) -> None:
        with self._lock:
            for key, vector in found.items():
                self._memory[key] = vector
                self._memory.move_to_end(key)
            while len(self._memory) > self.kept:
                self._memory.popitem(last=False)

    def vectors(self, texts: list[str]) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        text_of = dict(zip(keys, texts))
        got: dict[str, np.ndarray] = {}
        mine: list[str] = []
        theirs: list[tuple[str, threading.Event]] = []
        with self._lock:
            for key in text_of:
                if key in self._memory:
                    self._memory.move_to_end(key)  # used: kept longest
                    got[key] = self._memory[key]
                elif key in self._pending:
                    theirs.append((key, self._pending[key]))
                else:
                    self._pending[key] = threading.Event()
                    mine.append(key)
        if mine:
            try:
                made = self.disk.get(mine) if self.disk else {}
                todo = [k for k in mine if k not in made]
                if todo:
                    encoded = self.embedder.encode([text_of[k] for k in todo])
                    fresh = {k: np.asarray(v, dtype=np.float32) for k, v in zip(todo, encoded)}
                    if self.disk:
                        self.disk.put(fresh.items())
                    made.update(fresh)
                self._remember(made)
                got.update(made)
            finally:
                with self._lock:
                    for key in mine:
                        self._pending.pop(key).set()
        late = []
        for key, event in theirs:
            event.wait()
            with self._lock:
                vector = self._memory.get(key)
            if vector is None:  # its encoding failed (or it was dropped already): worked out here
                late.append(key)
            else:
                got[key] = vector
        if late:
            encoded = self.embedder.encode([text_of[k] for k in late])
            fresh = {k: np.asarray(v, dtype=np.float32) for k, v in zip(late, encoded)}
            self._remember(fresh)
            got.update(fresh)
        if not texts:
            return np.zeros((0, 1), np.float32)
        return np.stack([got[k] for k in keys])
