"""The units a document is cut into (pages, sections, passages) and what every reader shares: the
blocks of a laid-out document, HTML to text, and the error for a file that cannot be read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import html2text

PASSAGE_CHARS = 1200  # a text file's passages
SECTION_CHARS = 4000  # a section longer than this is cut into parts (each keeps its heading)


class Unreadable(Exception):
    """The file cannot be read; the message says why in a few words."""


@dataclass
class Unit:
    text: str
    index: int = 0  # a page's number in the file (1-based: `#page=N` opens it), or the unit's
    page: str = ""  # the page's label as printed on it ("12", "xii")
    section: str = ""  # the heading of the section it is part of


@dataclass
class Document:
    units: list[Unit]
    meta: dict = field(default_factory=dict)  # title, authors, year: from the file's own metadata


def html_to_text(html: str) -> str:
    h = html2text.HTML2Text()
    h.ignore_images = True
    h.ignore_links = True
    h.body_width = 0
    return h.handle(html)


_SENTENCE_END = re.compile(r"[.!?][\"'\u201d)\]]*\s")


def _cut(text: str, size: int) -> int:
    """Where to cut a text longer than `size`: after its last sentence that fits, else at its last
    space that fits (in the second half), else at `size`."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, size + 1)]
    if ends and ends[-1] > size // 4:
        return ends[-1]
    space = text.rfind(" ", size // 2, size)
    return space + 1 if space > 0 else size


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """`text` in pieces of at most `size` characters, cut between paragraphs where it can."""
    paras = [p.strip() for p in text.split("\n\n") if p.strip()]
    out, cur = [], ""
    for p in paras:
        while len(p) > size:  # one huge paragraph: cut it after a sentence (else between words)
            cut = _cut(p, size)
            out.append(p[:cut].strip())
            p = p[cut:].strip()
        if cur and len(cur) + len(p) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n\n{p}" if cur else p
    if cur:
        out.append(cur)
    return out


HEADING, PARAGRAPH, PAGE_BREAK = "h", "p", "page"
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def units_of(blocks: list[tuple[str, str]], paged: bool) -> list[Unit]:
    """Units from a document's blocks, (kind, text) in reading order: one per page when `paged`
    (the file records where its pages break), else one per section under its heading, cut in
    parts of at most SECTION_CHARS. A document with neither gives units with no locator."""
    if paged:
        pages: list[list[str]] = [[]]
        for kind, text in blocks:
            if kind == PAGE_BREAK:
                pages.append([])
            elif text.strip():
                pages[-1].append(text.strip())
        return [Unit("\n\n".join(p), index=n, page=str(n)) for n, p in enumerate(pages, 1) if p]
    sections: list[tuple[str, list[str]]] = [("", [])]
    for kind, text in blocks:
        if kind == HEADING and text.strip():
            sections.append((" ".join(text.split())[:120], [text.strip()]))
        elif kind != PAGE_BREAK and text.strip():
            sections[-1][1].append(text.strip())
    out: list[Unit] = []
    for heading, paras in sections:
        for part in passages("\n\n".join(paras), SECTION_CHARS) if paras else []:
            out.append(Unit(part, index=len(out) + 1, section=heading))
    return out
