"""A corpus's vectors, kept on disk beside its BM25 index (one file per embedding model), and the
fusion of a dense ranking with BM25's (reciprocal-rank fusion): `hybrid_rank`, how the encyclopedia
(tools/wiki.py) and a docs folder (tools/docs.py) rank."""

from __future__ import annotations

import functools
import inspect
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from filelock import FileLock

from deepresearch.embeddings.registry import Embedder

RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al. 2009)
POOL = 50  # candidates of each ranking that the fusion sees
WEIGHTS = (1.0, 2.0)  # BM25's and the dense ranking's say in the fusion (chosen on development questions)


class WordRanking(Protocol):
    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """(document number, score) of the best `k` documents for `query`'s words (BM25), best first."""
        ...


class DenseIndex:
    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors

    @staticmethod
    def path(folder: Path, embedder: Embedder, key: str = "") -> Path:
        """The vectors' file: one per embedding model and `key` (what else makes other vectors: the
        corpus's content, the text format, the token cap)."""
        return folder / f"dense-{embedder.model_id}{'-' + key if key else ''}.npy"

    @classmethod
    def stored(cls, folder: Path, embedder: Embedder, key: str = "") -> DenseIndex | None:
        """The vectors built before, or None (none yet, or a damaged file: built again later)."""
        path = cls.path(folder, embedder, key)
        if path.is_file():
            try:
                return cls(np.load(path, mmap_mode="r"))
            except (OSError, ValueError):
                return None
        return None

    @classmethod
    def cached(
        cls,
        texts_fn: Callable[[], list[str]],
        folder: Path,
        embedder: Embedder,
        on_build: Callable[[int, float | None], None] | None = None,
        key: str = "",
        max_tokens: int | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> DenseIndex:
        """The vectors of `texts_fn()` by `embedder` (each text's first `max_tokens` tokens when the
        embedder takes a cap), from `folder` when they were built before; when they must be built,
        `on_build(items, None)` is told before and `on_build(items, seconds)` after (a first run waits
        minutes: its user is told why), and `on_progress(done, items)` as they are encoded."""
        path = cls.path(folder, embedder, key)
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f".{path.stem}.lock")):  # one process builds, the others wait
            if (ready := cls.stored(folder, embedder, key)) is not None:
                return ready
            started = time.monotonic()
            texts = texts_fn()
            if on_build:
                on_build(len(texts), None)
            vectors = _encode_all(embedder, texts, max_tokens, on_progress)
            tmp = folder / f".{path.name}.{os.getpid()}.tmp.npy"
            np.save(tmp, vectors)
            tmp.replace(path)
            if on_build:
                on_build(len(texts), time.monotonic() - started)
            return cls(vectors)

    def top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(item number, cosine) of the `k` items nearest `query` (a unit vector), best first."""
        if len(self.vectors) == 0 or k <= 0:
            return []
        scores = np.asarray(self.vectors @ query)
        k = min(k, len(scores))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(i), float(scores[i])) for i in best]


CHUNK = 1024  # texts encoded between two progress reports


def _encode_all(
    embedder: Embedder, texts: list[str], max_tokens: int | None, on_progress: Callable[[int, int], None] | None
) -> np.ndarray:
    """`embedder`'s vectors of `texts`, in order: in chunks of texts of a similar length (shortest
    first, so each chunk pads little), telling `on_progress(done, total)` after each."""
    capped = max_tokens is not None and "max_tokens" in inspect.signature(embedder.encode).parameters
    encode: Callable[[list[str]], np.ndarray] = embedder.encode
    if capped:
        encode = functools.partial(getattr(embedder, "encode"), max_tokens=max_tokens)  # noqa: B009 - not the protocol's
    if not texts:
        return np.asarray(encode([]), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(order), CHUNK):
        rows = order[start : start + CHUNK]
        part = np.asarray(encode([texts[i] for i in rows]), dtype=np.float32)
        if out is None:
            out = np.zeros((len(texts), part.shape[1]), np.float32)
        out[rows] = part
        if on_progress:
            on_progress(min(start + CHUNK, len(texts)), len(texts))
    assert out is not None
    return out


def fuse(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: int = RRF_K) -> list[int]:
    """Items of several rankings (best first), by weighted reciprocal-rank fusion: each ranking
    gives an item weight / (k + its rank); ties keep the first ranking's order."""
    score: dict[int, float] = {}
    first: dict[int, tuple[int, int]] = {}
    for r, (ranking, weight) in enumerate(zip(rankings, weights)):
        for rank, item in enumerate(ranking, 1):
            score[item] = score.get(item, 0.0) + weight / (k + rank)
            first.setdefault(item, (r, rank))
    return sorted(score, key=lambda i: (-score[i], first[i]))


def hybrid_rank(
    query: str, k: int, words: WordRanking, embedder: Embedder | None, dense: Callable[[Embedder], DenseIndex]
) -> list[tuple[int, float]]:
    """The documents that best match `query`, best first: (document number, score). BM25's (`words`,
    with its scores) alone without an embedder; with one, fused with the `POOL` nearest by meaning in
    `dense(embedder)` (asked for only then), and the score is the fused rank's, 1/rank."""
    lexical = words.top(query, max(k, POOL) if embedder else k)
    if embedder is None:
        return lexical
    near = dense(embedder).top(embedder.encode([query])[0], max(k, POOL))
    fused = fuse([[d for d, _ in lexical], [d for d, _ in near]], WEIGHTS)[:k]
    return [(d, 1.0 / rank) for rank, d in enumerate(fused, 1)]
