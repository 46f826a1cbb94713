"""BM25 ranking over a list of texts with `bm25s`, optionally cached on disk."""

from __future__ import annotations

import logging
from pathlib import Path

import bm25s
import Stemmer

# without PyStemmer's cache (size 0): it would keep a list per word stemmed (10,000, for as long as
# the process lives, scanned by every full pass of the garbage collector), and bm25s stems each
# distinct word of a batch once anyway (a query's few words cost microseconds)
_stemmer = Stemmer.Stemmer("english", 0)
logging.getLogger("bm25s").setLevel(logging.WARNING)


def _tokens(texts: list[str]):
    return bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer, show_progress=False)


def token_lists(texts: list[str]) -> list[list[str]]:
    """Each text's words as the index reads them (lower case, English stopwords out, stemmed):
    what `BM25Index.from_tokens` builds from, so texts worked out once can be kept."""
    return bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer, show_progress=False, return_ids=False)


class BM25Index:
    def __init__(self, retriever: bm25s.BM25, size: int):
        self._retriever = retriever
        self.size = size

    @classmethod
    def build(cls, texts: list[str]) -> BM25Index:
        retriever = bm25s.BM25()
        retriever.index(_tokens(texts), show_progress=False)
        return cls(retriever, len(texts))

    @classmethod
    def from_tokens(cls, tokens: list[list[str]]) -> BM25Index:
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(retriever, len(tokens))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._retriever.save(str(folder), show_progress=False)
        (folder / "ok").write_text(str(self.size))

    @classmethod
    def load(cls, folder: Path) -> BM25Index | None:
        """The index saved in `folder`, or None when there is none (or it is damaged)."""
        marker = folder / "ok"
        if not marker.exists():
            return None
        try:
            return cls(bm25s.BM25.load(str(folder), show_progress=False), int(marker.read_text()))
        except Exception:  # noqa: BLE001 - a damaged cache is rebuilt, never fatal
            return None

    @classmethod
    def cached(cls, texts_fn, folder: Path) -> BM25Index:
        """Load the index from `folder`, or build it from `texts_fn()` and save it there."""
        index = cls.load(folder)
        if index is None:
            index = cls.build(texts_fn())
            index.save(folder)
        return index

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """(document number, score) of the best `k` documents with a positive score."""
        if self.size == 0:
            return []
        tokens = _tokens([query])
        if not tokens.vocab:
            return []
        docs, scores = self._retriever.retrieve(tokens, k=min(k, self.size), show_progress=False, n_threads=1)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]
