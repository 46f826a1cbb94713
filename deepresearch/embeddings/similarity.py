"""How close two texts are in meaning: the cosine of their vectors by the run's embedder
(deepresearch.embeddings), each text's vector worked out once per process; without an embedder,
the share of the query's content words (stemmed) that the text holds."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from deepresearch.embeddings.registry import Embedder
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens

KEPT = 50_000  # texts whose vectors are kept (a few hundred sentences a run; sentences recur across runs)


class Similarity:
    def __init__(self, embedder: Embedder | None):
        self.embedder = embedder
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, texts: list[str]) -> np.ndarray:
        assert self.embedder is not None
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._kept))
        if missing:
            made = self.embedder.encode(missing)
            with self._lock:
                for text, vector in zip(missing, made):
                    self._kept[text] = vector
                while len(self._kept) > KEPT:
                    self._kept.popitem(last=False)
        with self._lock:
            return np.stack([self._kept[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)

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
