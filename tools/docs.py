"""Search a folder of the user's own documents: PDF, Word (.docx), EPUB, OpenDocument text
(.odt), Markdown, text, reStructuredText and HTML.

Each file is read into units (deepresearch.tools.doc_readers): a PDF's pages, a Word or
OpenDocument file's pages or sections, an EPUB's sections, a text file's passages. A query
returns the best units, each a source of its own: a page is cited as that page (its `file:`
reference ends in `#page=N`, which opens it in a PDF viewer), a section as that section
(`#section=N`), and a text file's passages as the file (the best one stands for it). The
citation check then reads that page's text. The folder's index is kept between runs
(deepresearch.tools.docs_index): a file is read again only when it changes.

A file that cannot be read (binary, encrypted, corrupt, a scan with no text layer, too large,
not a regular file) is listed in `skipped` ("path: why", a line each) and the run goes on.
The folder is walked without recursion, so no nesting depth fails the run. A file name that
is not UTF-8 is read too: its `file:` URI keeps the name's bytes, its title shows them as
`\\xNN`.
"""

from __future__ import annotations

import re
from pathlib import Path

from deepresearch.embeddings.dense import hybrid_rank
from deepresearch.embeddings.registry import Embedder
from deepresearch.text.safe import display_path
from deepresearch.tools.base import SearchResult
from deepresearch.tools.doc_readers import EXTENSIONS  # noqa: F401 - what a docs folder reads
from deepresearch.tools.doc_units import Unit
from deepresearch.tools.docs_index import FileRecord, FolderIndex

_WORDS = re.compile(r"[^\W_]+")


def reference(path: Path, unit: Unit) -> str:
    """The `file:` URI a unit is cited by: the page (`#page=N`, as PDF viewers open it), the
    section (`#section=N`), or the file itself for a unit with neither."""
    uri = path.as_uri()
    if unit.page:
        return f"{uri}#page={unit.index}"
    if unit.section:
        return f"{uri}#section={unit.index}"
    return uri


class DocsSearch:
    name = "docs"

    def __init__(self, folder: str | Path, include: tuple = (), exclude: tuple = (), embedder: Embedder | None = None):
        self.embedder = embedder
        self.folder = Path(folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise ValueError(f"docs folder not found: {self.folder}")
        self.index = FolderIndex(self.folder, tuple(include), tuple(exclude))
        self.skipped: list[str] = self.index.skipped
        self.files: list[Path] = [f.path for f in self.index.files]
        if not self.index.size:
            chosen = " matching the documents' include and exclude globs" if include or exclude else ""
            raise ValueError(f"docs folder {display_path(str(self.folder))}: no readable file{chosen}")

    def rank(self, query: str, k: int) -> list[tuple[int, float]]:
        """The units that best match `query`, best first: (unit number, score). BM25 over the
        units' words, fused with the units nearest by meaning when there is an embedder (the score
        is then the fused rank's, 1/rank)."""
        return hybrid_rank(query, k, self.index.bm25, self.embedder, self.index.dense)

    def named(self, query: str) -> set[int]:
        """The files the query names (their numbers): every word of a file's name ("fntguide",
        "annual-report-2023") or of its title is a word of the query. A document asked about by name
        is a subject like any other."""
        said = set(_WORDS.findall(query.lower()))
        out = set()
        for i, record in enumerate(self.index.files):
            for name in (Path(record.rel).stem, str(record.meta.get("title") or "")):
                words = set(_WORDS.findall(name.lower()))
                if words and words <= said and any(len(w) > 2 for w in words):
                    out.add(i)
        return out

    def search(self, query: str, k: int) -> list[SearchResult]:
        seen: set[str] = set()
        out = []
        named = self.named(query)
        ranked = self.rank(query, self.index.size if named else k * 4)
        if named:  # the named documents' best units first, then the rest as ranked
            first = [x for x in ranked if self.index.file_of(x[0]) in named]
            ranked = first + [x for x in ranked if x not in first][: k * 4]
        for doc, _score in ranked:
            record, unit = self.index.unit(doc)
            url = reference(record.path, unit)
            if url in seen:  # a text file's passages: the best one stands for the file
                continue
            seen.add(url)
            out.append(self._result(record, unit, url))
            if len(out) == k:
                break
        return out

    def _result(self, record: FileRecord, unit: Unit, url: str) -> SearchResult:
        # a name that is not UTF-8 (surrogate escapes in Python): the URI keeps its bytes
        # (lossless), the title and the file field show them as \xNN
        rel = display_path(record.rel)
        meta = {
            "type": "document",
            "file": rel,
            "modified": record.modified,
            **record.meta,
            **({"page": unit.page} if unit.page else {"section": unit.section} if unit.section else {}),
        }
        meta.pop("title", None)
        return SearchResult(title=record.meta.get("title") or rel, url=url, text=unit.text, backend="docs", meta=meta)
