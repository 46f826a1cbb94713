"""How close two texts are in meaning: the cosine of their vectors by the run's embedder
(deepresearch.embeddings), each text's vector worked out once (deepresearch.embeddings.vector_cache:
kept in memory and on disk across processes); without an embedder, the share of the query's content
words (stemmed) that the text holds."""

from __future__ import annotations

import threading

import numpy as np

from deepresearch.embeddings.registry import Embedder
from deepresearch.embeddings.vector_cache import VectorCache
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens


class Similarity:
    def __init__(self, embedder: Embedder | None):
        self.embedder = embedder
        self._cache = VectorCache(embedder) if embedder is not None else None

    def vectors(self, texts: list[str]) -> np.ndarray:
        assert self._cache is not None
        return self._cache.vectors(texts)

    def pieces_only(self, words: list[str]) -> frozenset[str]:
        """The words the embedder reads only as word pieces, whose closeness is one of spelling
        ("Diogenes" and "Diode"), not of meaning; none for an embedder that does not say."""
        split = getattr(self.embedder, "split_words", None)
        return frozenset(split(words)) if split else frozenset()

    def scores(self, query: str, texts: list[str]) -> list[float]:
        """Each text's closeness to `query`: a cosine (-1 to 1), or the share of its words (0 to 1)."""
        if not texts:
            return []
        if self.embedder is None:
            want = _content(query)
            return [len(want & _content(t)) / len(want) if want else 0.0 for t in texts]
        v = self.vectors([query, *texts])
        return [float(x) for x in v[1:] @ v[0]]


def _content(text: str) -> set[str]:
    return set(stems([w for w in tokens(text) if w not in STOP]))


_made: dict[str, Similarity] = {}
_made_lock = threading.Lock()


def similarity_for(embedder: Embedder | None) -> Similarity:
    """One Similarity per embedder for the process (its vectors kept across runs)."""
    key = embedder.model_id if embedder is not None else ""
    with _made_lock:
        if key not in _made:
            _made[key] = Similarity(embedder)
        return _made[key]
