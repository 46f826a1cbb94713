"""Where a question's names and its description stand: spans of its words, by name_flags (the
documents' usage of each word, else its capital letter)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from deepresearch.text.sentences import STOP
from deepresearch.text.words import singular
from deepresearch.understanding.embedded.question import DESCRIPTORS
from deepresearch.understanding.linking import Linker, name_flags


def name_runs(question: str, linker: Linker | None = None) -> list[tuple[int, int]]:
    """The token spans of the question's names (name_flags; its first word only when the next
    is a name too and it is no question word: "Which Indian poet ..." names "Indian")."""
    raw = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question)
    name = [f or (i == 0 and r[:1].isupper()) for i, (f, r) in enumerate(zip(name_flags(raw, linker), raw))]
    out, i = [], 1 if raw and raw[0].lower() in STOP else 0
    while i < len(raw):
        if name[i]:
            j = i
            while j + 1 < len(raw) and name[j + 1]:
                j += 1
            if i > 0 or j > i:
                out.append((i, j + 1))
            i = j + 1
        else:
            i += 1
    return out


def is_name_at(question: str, at: list[int], linker: Linker | None = None) -> bool:
    """Is the question's word at `at[0]` a name (name_flags)?"""
    raw = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question)
    return 0 <= at[0] < len(raw) and name_flags(raw, linker)[at[0]]


def names_its_head(
    words: list[str], span: tuple[int, int], found: list[dict], linker: Linker, kinds: AbstractSet[str] | None = None
) -> bool:
    """Is the word a superlative describes a linked name (by the documents' usage: "the first iPhone",
    not "the first president" or "the largest moon of Saturn"), or the start of a linked title that
    is no kind of thing the documents are (`kinds`: "the first Grey Road of Osterby", whose "grey"
    heads no description, not "the first president of the United States")?"""
    at = next((i for i in range(*span) if words[i] in DESCRIPTORS), None)
    if at is None or at + 1 >= len(words):
        return False
    head = words[at + 1]
    return any(
        c.get("title")
        and (c.get("at") or [0])[0] == at + 1
        and (
            linker.written_as_name(head)
            or (kinds is not None and (c.get("at") or [0, 0])[1] - at > 2 and singular(head) not in kinds)
        )
        for c in found
    )


def span_of(words: list[str], desc: str) -> tuple[int, int] | None:
    """The token span of the question the description covers."""
    want = desc.split()
    if not want:
        return None
    first = [i for i, w in enumerate(words) if w == want[0]]
    last = [i for i, w in enumerate(words) if w == want[-1]]
    if not first or not last:
        return None
    a = first[0]
    b = max((i for i in last if i >= a), default=None)
    return (a, b + 1) if b is not None else None
