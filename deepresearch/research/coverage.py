"""Coverage: does a retrieved source cover a concept of the question (its linked document was
retrieved, or the source holds all of its words), and which sources cover it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from itertools import islice
from typing import Any

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, stems, text_stems, tokens
from deepresearch.understanding.linking import SCAFFOLD


@functools.lru_cache(maxsize=8192)
def _norm_title(title: str) -> str:
    return fold(title).strip()


@functools.lru_cache(maxsize=4096)
def _wanted_stems(phrase: str) -> frozenset:
    """The stems a source must hold to cover a concept named `phrase` (once per phrase: each
    concept is checked against every source)."""
    return frozenset(stems([w for w in tokens(phrase) if w not in STOP]))


def covers(concept: Mapping[str, Any], source: dict, text: str | None = None) -> bool:
    """Does this retrieved source cover the concept? (A bridge is not covered by the text that
    named it: its own source must be found.)"""
    own = bool(concept.get("title")) and _norm_title(source.get("title", "")) == _norm_title(concept["title"])
    if concept.get("origin") == "bridge" and concept.get("source") and source.get("key") == concept["source"]:
        return own  # named by its own document, which covers it
    if concept.get("title"):
        return _norm_title(source.get("title", "")) == _norm_title(concept["title"])
    want = _wanted_stems(concept["phrase"] or concept["name"])
    if not want:
        return False
    return want <= text_stems(f"{source.get('title', '')} {text if text is not None else source.get('snippet', '')}")


def coverage(concepts: list[dict], evidence: list[dict], text_of=None) -> tuple[list[dict], list[dict]]:
    """(covered, missing) concepts given the retrieved sources."""
    covered: list[dict] = []
    missing: list[dict] = []
    for c in concepts:
        hit = any(covers(c, s, text_of(s) if text_of and not c.get("title") else None) for s in evidence)
        (covered if hit else missing).append(c)
    return covered, missing


def sources_for(concept: Mapping[str, Any], evidence: list[dict], text_of=None, limit: int | None = None) -> list[dict]:
    """The sources that cover the concept, in order (the first `limit` of them: the sources
    after those are not read)."""
    found = (s for s in evidence if covers(concept, s, text_of(s) if text_of and not concept.get("title") else None))
    return list(islice(found, limit))


def content_overlap(a: str, b: str) -> bool:
    """Do the two texts share a content word (stemmed, beyond stop words and scaffolding)?"""
    return not _content_stems(a).isdisjoint(_content_stems(b))


@functools.lru_cache(maxsize=1024)
def _content_stems(text: str) -> frozenset:
    """The stems of `text`'s content words, worked out once per text (the question is compared
    with every source)."""
    return frozenset(stems([w for w in tokens(text) if w not in STOP and w not in SCAFFOLD]))
