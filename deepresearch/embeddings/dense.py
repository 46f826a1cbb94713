"""A corpus's vectors, kept on disk beside its BM25 index (one file per embedding model), and the
fusion of a dense ranking with BM25's (reciprocal-rank fusion): `hybrid_rank`, how the encyclopedia
(tools/wiki.py) and a docs folder (tools/docs.py) rank."""

from __future__ import annotations

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

    @classmethod
    def cached(
        cls,
        texts_fn: Callable[[], list[str]],
        folder: Path,
        embedder: Embedder,
        on_build: Callable[[int, float | None], None] | None = None,
    ) -> DenseIndex:
        """The vectors of `texts_fn()` by `embedder`, from `folder` when they were built before;
        when they must be built, `on_build(items, None)` is told before and `on_build(items, seconds)`
        after (a first run waits minutes: its user is told why)."""
        path = folder / f"dense-{embedder.model_id}.npy"
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f".dense-{embedder.model_id}.lock")):  # one process builds, the others wait
            return cls._load_or_build(path, texts_fn, folder, embedder, on_build)

    @classmethod
    def _load_or_build(
        cls,
        path: Path,
        texts_fn: Callable[[], list[str]],
        folder: Path,
        embedder: Embedder,
        on_build: Callable[[int, float | None], None] | None,
    ) -> DenseIndex:
        if path.is_file():
            try:
                return cls(np.load(path, mmap_mode="r"))
            except (OSError, ValueError):  # a damaged file is built again, never fatal
                pass
        started = time.monotonic()
        texts = texts_fn()
        if on_build:
            on_build(len(texts), None)
        vectors = embedder.encode(texts).astype(np.float32)
        folder.mkdir(parents=True, exist_ok=True)
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
