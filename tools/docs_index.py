"""A docs folder's index, kept between runs: each file is read once, and again only when it
changes.

The cache lives in the user's cache folder (`<cache>/deepresearch/docs/<folder's hash>/`): an
SQLite database of every file read (its size and modification time, its metadata, its units'
texts and words, or why it could not be read) and the BM25 index built from them. On the next
run over the folder a file whose size and modification time are unchanged is not read again;
the BM25 index is loaded as it was saved when no file changed, and otherwise rebuilt from the
kept words (only changed files are read and tokenized again). One process at a time updates a
folder's cache (a lock file); a damaged cache is rebuilt, and a cache folder that cannot be
written leaves the index in memory: the cache never stops a run.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import shutil
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import platformdirs
from filelock import FileLock, Timeout

from deepresearch.choices.controls import file_wanted
from deepresearch.embeddings.dense import DenseIndex
from deepresearch.embeddings.registry import Embedder
from deepresearch.events import emit
from deepresearch.files import walk_files
from deepresearch.text.safe import display_path
from deepresearch.tools.bm25 import BM25Index, token_lists
from deepresearch.tools.doc_readers import EXTENSIONS, read
from deepresearch.tools.doc_units import Unit, Unreadable

ENCODE_CHUNK = 256  # units encoded, and their vectors written, at a time (a progress event after each)
ENCODE_BATCH = 16  # texts the embedded model runs at once: its activations are what a folder's encoding holds
SCHEMA = 1  # what the cache stores: a cache of another version is rebuilt
LOCK_SECONDS = 600  # how long a run waits for another process updating the same folder's cache
_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (rel BLOB PRIMARY KEY, size INTEGER, mtime INTEGER, problem TEXT,
                                  meta TEXT, units INTEGER);
CREATE TABLE IF NOT EXISTS vectors (rel BLOB, n INTEGER, model TEXT, v BLOB, PRIMARY KEY (rel, n, model));
CREATE TABLE IF NOT EXISTS units (rel BLOB, n INTEGER, idx INTEGER, page TEXT, section TEXT, text TEXT,
                                  tokens TEXT, PRIMARY KEY (rel, n));
"""


@dataclass
class FileRecord:
    path: Path
    rel: str  # the path relative to the folder, `/`-separated (bytes that are not UTF-8 as Python keeps them)
    meta: dict  # the document's own metadata: title, authors, date
    modified: str  # its modification date (ISO)
    units: int


def cache_folder(folder: Path) -> Path:
    digest = hashlib.sha1(os.fsencode(folder)).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("deepresearch")) / "docs" / digest


def _connect(path: Path | None) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
    db.executescript(_SCHEMA_SQL)
    row = db.execute("SELECT value FROM info WHERE key = 'schema'").fetchone()
    if row is None or row[0] != str(SCHEMA):
        db.executescript("DELETE FROM files; DELETE FROM units;")
        db.execute("INSERT OR REPLACE INTO info VALUES ('schema', ?)", (str(SCHEMA),))
        db.commit()
    return db


def _open_cache(folder: Path) -> tuple[sqlite3.Connection, Path | None]:
    """The folder's cache database and its cache folder; an in-memory one (and None) when the
    cache cannot be written."""
    where = cache_folder(folder)
    try:
        where.mkdir(parents=True, exist_ok=True)
        try:
            return _connect(where / "index.sqlite"), where
        except sqlite3.DatabaseError:  # damaged: start again
            (where / "index.sqlite").unlink(missing_ok=True)
            return _connect(where / "index.sqlite"), where
    except (OSError, sqlite3.Error):
        return _connect(None), None


def _modified(mtime_ns: int) -> str:
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(mtime_ns / 1e9))
    except (OverflowError, ValueError, OSError):
        return ""


def _small_batches(embedder: Embedder) -> Callable[[list[str]], np.ndarray]:
    """`embedder.encode`, running ENCODE_BATCH texts through the model at once when it takes a
    batch size (the embedded model): on the LaTeX manuals' pages a batch of 64 held 600 MB, one
    of 16 340 MB, and ran no slower. A provider's embedder is called as it is."""
    if "batch" in inspect.signature(embedder.encode).parameters:
        return functools.partial(getattr(embedder, "encode"), batch=ENCODE_BATCH)  # noqa: B009 - not the protocol's
    return embedder.encode


class FolderIndex:
    """The readable files of `folder` (those of the known extensions matching the include and
    exclude globs), their units, and the BM25 index over the units' words. `skipped`: a line per
    file that could not be read ("path: why"). `read_pages`, `read_seconds`: what this run had
    to read (nothing when the cache held every file)."""

    def __init__(self, folder: Path, include: tuple = (), exclude: tuple = ()):
        self.folder = folder
        self.skipped: list[str] = []
        self.files: list[FileRecord] = []
        self.read_pages = 0
        self.read_seconds = 0.0
        self._lock = threading.Lock()
        self._dense: dict[str, DenseIndex] = {}
        self.embed_seconds = 0.0
        self._db, where = _open_cache(folder)
        lock = FileLock(str(where / "lock")) if where else None
        try:
            if lock:
                lock.acquire(timeout=LOCK_SECONDS)
        except (Timeout, OSError):
            lock = None  # another process holds it for too long: go on without it
        try:
            self._update(include, exclude)
            self._units = [(f, n) for f, record in enumerate(self.files) for n in range(record.units)]
            self.bm25 = self._bm25(where, include, exclude)
        finally:
            if lock:
                lock.release()

    @property
    def size(self) -> int:
        return len(self._units)

    def _said(self, status: str, **fields: object) -> None:
        """A progress event of this folder's indexing (`reading`: files read of those to read,
        pages so far; `building`, `encoding`, `built`: the units' vectors)."""
        what = "vectors of the documents" if status != "reading" else "documents"
        emit("indexing", index=f"the {what} in {display_path(self.folder.name)}", status=status, **fields)

    # --- reading the files that changed ---------------------------------------------------------

    def _update(self, include: tuple, exclude: tuple) -> None:
        def unlisted(folder: str, e: OSError) -> None:
            self.skipped.append(f"{display_path(folder)}: {e.strerror or e}")

        known = {
            bytes(rel): (size, mtime) for rel, size, mtime in self._db.execute("SELECT rel, size, mtime FROM files")
        }
        present: set[bytes] = set()
        listed: list[tuple[Path, str, bytes, int]] = []
        wanted: list[tuple[Path, str, bytes, tuple[int, int]]] = []
        for path in sorted(walk_files(self.folder, unlisted)):
            rel = path.relative_to(self.folder).as_posix()
            if path.suffix.lower() not in EXTENSIONS or not file_wanted(rel, include, exclude):
                continue
            key = os.fsencode(rel)
            present.add(key)
            try:
                st = os.stat(path)
            except OSError as e:
                self.skipped.append(f"{display_path(str(path))}: {e.strerror or e}")
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO, a device: never cached, never read to its end
                self._read(path, key, None)
                continue
            if known.get(key) != (st.st_size, st.st_mtime_ns):
                wanted.append((path, rel, key, (st.st_size, st.st_mtime_ns)))
            listed.append((path, rel, key, st.st_mtime_ns))
        # the files new or changed, one at a time (one document's pages in memory), each said: a
        # first question on a large folder shows how far it has read (files of those to read, pages)
        for done, (path, rel, key, signature) in enumerate(wanted, 1):
            self._read(path, key, signature)
            self._said("reading", files=done, of=len(wanted), pages=self.read_pages, file=display_path(rel))
        for path, rel, key, mtime_ns in listed:
            self._keep(path, rel, key, mtime_ns)
        gone = [k for k in known if k not in present and not os.path.lexists(self.folder / os.fsdecode(k))]
        if gone:  # files removed from the folder leave the cache
            self._db.executemany("DELETE FROM files WHERE rel = ?", [(k,) for k in gone])
            self._db.executemany("DELETE FROM units WHERE rel = ?", [(k,) for k in gone])
            self._db.executemany("DELETE FROM vectors WHERE rel = ?", [(k,) for k in gone])
            self._db.commit()

    def _read(self, path: Path, key: bytes, signature: tuple[int, int] | None) -> None:
        """Read one file into the cache (its units, or why it cannot be read)."""
        started = time.perf_counter()
        problem, doc = "", None
        try:
            doc = read(path)
        except Unreadable as e:
            problem = str(e)
        except OSError as e:  # deepresearch.files.FileReadError: not a regular file, too large
            problem = str(e) if not e.strerror else e.strerror
        except Exception as e:  # noqa: BLE001 - a parser's own failure on an odd file skips that file
            problem = f"could not be read ({type(e).__name__})"
        self.read_seconds += time.perf_counter() - started
        if signature is None:  # not a regular file: said, never kept
            self.skipped.append(f"{display_path(str(path))}: {problem or 'not a regular file'}")
            return
        units = doc.units if doc else []
        self.read_pages += len(units)
        tokens = token_lists([u.text for u in units]) if units else []
        with self._db:
            self._db.execute("DELETE FROM units WHERE rel = ?", (key,))
            self._db.execute("DELETE FROM vectors WHERE rel = ?", (key,))
            self._db.executemany(
                "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (key, n, u.index, u.page, u.section, u.text, " ".join(t))
                    for n, (u, t) in enumerate(zip(units, tokens))
                ],
            )
            self._db.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                (key, *signature, problem, json.dumps(doc.meta if doc else {}), len(units)),
            )

    def _keep(self, path: Path, rel: str, key: bytes, mtime_ns: int) -> None:
        row = self._db.execute("SELECT problem, meta, units FROM files WHERE rel = ?", (key,)).fetchone()
        if row is None:
            return
        problem, meta, units = row
        if problem:
            self.skipped.append(f"{display_path(str(path))}: {problem}")
        elif units:
            self.files.append(FileRecord(path, rel, json.loads(meta or "{}"), _modified(mtime_ns), units))

    # --- the BM25 index ---------------------------------------------------------------------

    def _bm25(self, where: Path | None, include: tuple, exclude: tuple) -> BM25Index:
        """Loaded as saved when the files are those it was built from, else built from the
        kept words (and saved)."""
        if not self._units:  # nothing readable: the caller says so
            return BM25Index(None, 0)
        files = [(os.fsencode(f.rel).hex(), f.units) for f in self.files]
        rows = {bytes(k): (s, m) for k, s, m in self._db.execute("SELECT rel, size, mtime FROM files")}
        signature = hashlib.sha1(
            json.dumps([SCHEMA, [(k, n, rows.get(bytes.fromhex(k))) for k, n in files]]).encode()
        ).hexdigest()[:16]
        globs = hashlib.sha1(json.dumps([list(include), list(exclude)]).encode()).hexdigest()[:8]
        target = where / f"bm25-{globs}-{signature}" if where else None
        if target is not None and (index := BM25Index.load(target)) is not None and index.size == len(self._units):
            return index
        tokens: list[list[str]] = []
        for f in self.files:
            rows_of = self._db.execute("SELECT tokens FROM units WHERE rel = ? ORDER BY n", (os.fsencode(f.rel),))
            tokens.extend(t.split() for (t,) in rows_of)
        index = BM25Index.from_tokens(tokens)
        if target is not None and where is not None:
            for old in where.glob(f"bm25-{globs}-*"):  # what the same globs built before
                shutil.rmtree(old, ignore_errors=True)
            try:
                index.save(target)
            except OSError:
                shutil.rmtree(target, ignore_errors=True)
        return index

    # --- the units' vectors (the dense half of the hybrid search) ----------------------------------

    def dense(self, embedder: Embedder) -> DenseIndex:
        """The units' vectors by `embedder`, in the index's order: kept in the cache per file and
        model, so only the units of files that changed are embedded again."""
        with self._lock:
            if embedder.model_id in self._dense:
                return self._dense[embedder.model_id]
            started = time.perf_counter()
            encode = _small_batches(embedder)
            rows: list[np.ndarray | None] = []
            missing: list[tuple[int, bytes, int]] = []  # (row, file, unit) of the units with no kept vector
            for f, n in self._units:
                key = os.fsencode(self.files[f].rel)
                hit = self._db.execute(
                    "SELECT v FROM vectors WHERE rel = ? AND n = ? AND model = ?", (key, n, embedder.model_id)
                ).fetchone()
                if hit is None:
                    missing.append((len(rows), key, n))
                rows.append(np.frombuffer(hit[0], dtype=np.float32) if hit else None)
            if missing:
                self._said("building", items=len(missing))
                for start in range(0, len(missing), ENCODE_CHUNK):  # a chunk's texts and tokens in memory at a time
                    part = missing[start : start + ENCODE_CHUNK]
                    vectors = np.asarray(encode([self._text(key, n) for _, key, n in part]), dtype=np.float32)
                    with self._db:
                        self._db.executemany(
                            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                            [(key, n, embedder.model_id, v.tobytes()) for (_, key, n), v in zip(part, vectors)],
                        )
                    for (at, _, _), v in zip(part, vectors):
                        rows[at] = v
                    self._said("encoding", done=start + len(part), items=len(missing))
                self.embed_seconds = time.perf_counter() - started
                self._said("built", items=len(missing), seconds=round(self.embed_seconds, 1))
            kept = [r for r in rows if r is not None]
            matrix = np.vstack(kept).astype(np.float32) if kept else np.zeros((0, 1), np.float32)
            self._dense[embedder.model_id] = DenseIndex(matrix)
            return self._dense[embedder.model_id]

    def _text(self, key: bytes, n: int) -> str:
        return self._db.execute("SELECT text FROM units WHERE rel = ? AND n = ?", (key, n)).fetchone()[0]

    # --- reading a unit back ------------------------------------------------------------------

    def file_of(self, doc: int) -> int:
        """The number (in `files`) of the file the index's document number `doc` is a unit of."""
        return self._units[doc][0]

    def unit(self, doc: int) -> tuple[FileRecord, Unit]:
        """The file and the unit of the index's document number `doc`."""
        f, n = self._units[doc]
        record = self.files[f]
        with self._lock:
            row = self._db.execute(
                "SELECT idx, page, section, text FROM units WHERE rel = ? AND n = ?", (os.fsencode(record.rel), n)
            ).fetchone()
        idx, page, section, text = row
        return record, Unit(text, index=idx, page=page, section=section)
