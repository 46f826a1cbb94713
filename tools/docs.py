"""Search a folder of the user's own documents (.md, .txt, .rst, .html), BM25-ranked.

Files are split into passages; a query returns the best passage of each matching file,
pointing at the file's path. Binary files are skipped, huge files are read up to
MAX_FILE_BYTES, and text that is not UTF-8 is decoded as cp1252 with replacement, so
one odd file never stops a run; what was skipped is listed in `skipped`. Only regular files
are read (a FIFO or a device named `x.md` is skipped, never read to its end), and the folder
is walked without recursion, so no nesting depth fails the run. A file name that
is not UTF-8 is read too: its `file:` URI keeps the name's bytes, its title shows them as
`\\xNN`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import html2text

from deepresearch.files import read_bytes, walk_files
from deepresearch.text.safe import display_path
from deepresearch.tools.base import SearchResult
from deepresearch.tools.bm25 import BM25Index
from deepresearch.choices.controls import file_wanted

EXTENSIONS = {".md", ".markdown", ".txt", ".rst", ".html", ".htm"}
MAX_FILE_BYTES = 2_000_000
PASSAGE_CHARS = 1200


def _html_to_text(html: str) -> str:
    h = html2text.HTML2Text()
    h.ignore_images = True
    h.ignore_links = True
    h.body_width = 0
    return h.handle(html)


def read_document(path: Path) -> str | None:
    """The text of one file, or None when it is binary."""
    data = read_bytes(path, MAX_FILE_BYTES, truncate=True)  # FileReadError (an OSError) when not a regular file
    if b"\x00" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="ignore") if len(data) == MAX_FILE_BYTES else data.decode("cp1252", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        text = _html_to_text(text)
    return text


def _modified(path: Path) -> str:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).date().isoformat()
    except (OSError, ValueError, OverflowError):
        return ""


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    paras = [p.strip() for p in text.split("\n\n") if p.strip()]
    out, cur = [], ""
    for p in paras:
        while len(p) > size:  # one huge paragraph: cut it
            out.append(p[:size])
            p = p[size:]
        if cur and len(cur) + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n\n{p}" if cur else p
    if cur:
        out.append(cur)
    return out


class DocsSearch:
    name = "docs"

    def __init__(self, folder: str | Path, include: tuple = (), exclude: tuple = ()):
        self.folder = Path(folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise ValueError(f"docs folder not found: {self.folder}")
        self.skipped: list[str] = []
        self.files: list[Path] = []
        self.modified: list[str] = []  # each file's modification date (ISO), for citations
        self.passages: list[tuple[int, str]] = []  # (file number, passage)
        def unlisted(folder: str, e: OSError) -> None:
            self.skipped.append(f"{display_path(folder)}: {e.strerror or e}")

        for path in sorted(walk_files(self.folder, unlisted)):
            if path.suffix.lower() not in EXTENSIONS or not file_wanted(
                    path.relative_to(self.folder).as_posix(), include, exclude):
                continue
            try:
                text = read_document(path)
            except OSError as e:
                self.skipped.append(f"{display_path(str(path))}: {e.strerror or e}")
                continue
            if text is None:
                self.skipped.append(f"{display_path(str(path))}: binary")
                continue
            number = len(self.files)
            self.files.append(path)
            self.modified.append(_modified(path))
            self.passages.extend((number, p) for p in passages(text))
        if not self.passages:
            chosen = " matching the documents' include and exclude globs" if include or exclude else ""
            raise ValueError(f"docs folder {display_path(str(self.folder))}: no readable file{chosen}")
        self.index = BM25Index.build([p for _, p in self.passages])

    def search(self, query: str, k: int) -> list[SearchResult]:
        seen: set[int] = set()
        out = []
        for doc, _score in self.index.top(query, k * 4):
            number, text = self.passages[doc]
            if number in seen:
                continue
            seen.add(number)
            path = self.files[number]
            # a name that is not UTF-8 (surrogate escapes in Python): the URI keeps its bytes
            # (lossless), the title shows them as \xNN
            title = display_path(path.relative_to(self.folder).as_posix())
            out.append(SearchResult(title=title, url=path.as_uri(), text=text, backend="docs",
                                    meta={"type": "document", "file": display_path(path.name),
                                          "modified": self.modified[number]}))
            if len(out) == k:
                break
        return out
