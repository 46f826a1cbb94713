"""Where deepresearch keeps the indexes it derives from what is installed (the encyclopedia's BM25
index and vectors, the embedding model's runtime graph, the tables the reading of a question derives
from the encyclopedia's texts): the user's cache folder, or the folder DEEPRESEARCH_INDEX_DIR names.
Machines that share one (a deployment's volume, a test session) build each index once; a run's own
files (retrieved texts, thread locks) stay in the user's cache.

`kept_json` keeps a value worked out once in a JSON file of that folder: written whole or not at all
(a temporary file renamed into place), with a checksum of its content, so that a file cut short,
damaged or of another format is built again, never read wrong and never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

INDEX_DIR_ENV = "DEEPRESEARCH_INDEX_DIR"
T = TypeVar("T")


def index_dir() -> Path:
    given = os.environ.get(INDEX_DIR_ENV, "").strip()
    return Path(given).expanduser() if given else Path(platformdirs.user_cache_dir("deepresearch"))


def _stored(path: Path) -> Any:
    """The JSON value kept at `path`; raises when there is none or it is not whole (its first line,
    the SHA-1 of the rest, does not match)."""
    raw = path.read_bytes()
    digest, _, body = raw.partition(b"\n")
    if hashlib.sha1(body).hexdigest().encode() != digest:
        raise ValueError(f"{path}: damaged (its checksum does not match)")
    return json.loads(body)


def kept_json(path: Path, build: Callable[[], T], encode: Callable[[T], Any], decode: Callable[[Any], T]) -> T:
    """`build()`'s value, kept at `path` as the JSON `encode` makes of it: read back with `decode`
    when the file is there and whole, else built and written (other files named like it, the same
    name with another key, are removed: a changed corpus or program leaves no stale copies). A
    file that cannot be read or decoded is built again; a folder that cannot be written leaves the
    value unkept."""
    try:
        return decode(_stored(path))
    except Exception:  # noqa: BLE001 - none yet, or damaged: built again, never fatal
        pass
    value = build()
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps(encode(value), separators=(",", ":")).encode("ascii")
        tmp.write_bytes(hashlib.sha1(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, path)
        stem = path.name.rsplit("-", 1)[0]
        for other in path.parent.glob(f"{stem}-*{path.suffix}"):
            if other != path and other.name.rsplit("-", 1)[0] == stem:
                other.unlink(missing_ok=True)
    except (OSError, ValueError, TypeError):  # a folder that cannot be written: the value goes unkept
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return value
