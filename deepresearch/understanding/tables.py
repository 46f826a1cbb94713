"""The tables the reading of a question derives from a search backend's documents (the spelling
vocabulary, the title linker's tables, the documents each word is in), worked out once per corpus
and kept on disk among the indexes (deepresearch.embeddings.index_dir, folder `tables`): every
later process reads them in milliseconds instead of deriving them again (seconds for the
encyclopedia). A kept table is keyed by the backend's texts (its titles and the texts linked to
them) and by the program that derives it (the source of the modules named, the stemmer's and
Unicode's versions), so a changed corpus or a changed rule derives it anew. A backend of fewer than
MIN_KEPT texts derives its tables in milliseconds: they are not kept.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import Stemmer

from deepresearch.embeddings.index_dir import index_dir, kept_json

MIN_KEPT = 1_000  # texts
FORMAT = 1  # the files' layout: a new layout is a new key
T = TypeVar("T")

_texts: dict[int, str] = {}  # each backend's texts' digest, by id
_owners: dict[int, object] = {}  # held: no other object takes the id of one whose digest stands
_programs: dict[tuple[str, ...], str] = {}
_lock = threading.Lock()


def _texts_digest(backend) -> str | None:
    """The SHA-1 of the backend's titles and linked texts; None for a backend too small to keep."""
    with _lock:
        if id(backend) not in _texts:
            digest = hashlib.sha1()
            count = 0
            for part in ("titles", "link_texts"):
                texts_fn = getattr(backend, part, None)
                texts = list(texts_fn()) if texts_fn is not None else []
                count = max(count, len(texts))
                digest.update(f"{part}:{len(texts)}\n".encode())
                for text in texts:
                    digest.update(text.encode("utf-8", "surrogatepass"))
                    digest.update(b"\0")
            _texts[id(backend)] = digest.hexdigest() if count >= MIN_KEPT else ""
            _owners[id(backend)] = backend
        return _texts[id(backend)] or None


def _program_digest(modules: tuple[ModuleType, ...]) -> str:
    """The SHA-1 of what derives a table: its modules' source, the stemmer, Unicode, Python."""
    names = tuple(m.__name__ for m in modules)
    with _lock:
        if names not in _programs:
            digest = hashlib.sha1(f"{FORMAT}|{Stemmer.version()}|{unicodedata.unidata_version}|{sys.version}".encode())
            for module in modules:
                digest.update(module.__name__.encode() + b"\n")
                digest.update(Path(module.__file__ or "").read_bytes())
            _programs[names] = digest.hexdigest()
        return _programs[names]


def kept_table(
    backend,
    name: str,
    build: Callable[[], T],
    encode: Callable[[T], Any],
    decode: Callable[[Any], T],
    modules: tuple[ModuleType, ...],
) -> T:
    """`build()`'s table of the backend's documents, read from the tables folder when it was derived
    before from the same texts by the same program (`modules`: those whose code derives it), else
    derived now and kept there (`encode`: to JSON; `decode`: back)."""
    texts = _texts_digest(backend)
    if texts is None:
        return build()
    key = hashlib.sha1(f"{texts}|{_program_digest(modules)}".encode()).hexdigest()[:16]
    return kept_json(index_dir() / "tables" / f"{name}-{key}.json", build, encode, decode)
