"""Which words go together in a search backend's documents: the context a typing error is read in.

A slip is often as near to one word as to another ("shvia": *Shia*, *Shiva*); the question's other
words tell them apart when one of the two is found with them far more often than chance would have
it (*Shiva* with "god"). Each candidate's evidence is the log-likelihood ratio (Dunning's G²) of the
documents that hold both it and each of the question's other words against the number expected if
the words fell in documents independently, summed over those words: a common word ("from") earns
nothing from being everywhere, a rare one nothing from one chance meeting. The documents each word
is in are gathered once per backend, when a question first needs them.
"""

from __future__ import annotations

import base64
import math
import re
import sys
import threading
from array import array
from collections.abc import Iterable

from deepresearch.text import words as _words
from deepresearch.text.words import fold
from deepresearch.understanding.tables import kept_table

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_postings: dict[int, tuple[int, dict[str, array]]] = {}
_owners: dict[int, object] = {}
_lock = threading.Lock()


def _derived(texts: Iterable[str]) -> tuple[int, dict[str, array]]:
    """(how many texts, the numbers of the texts each word is in)."""
    where: dict[str, array] = {}
    total = 0
    for doc, text in enumerate(texts):
        total += 1
        for word in set(_WORD.findall(fold(text))):
            ids = where.get(word)
            if ids is None:
                where[word] = ids = array("I")
            ids.append(doc)
    return total, where


def _encoded(tables: tuple[int, dict[str, array]]) -> dict:
    """The postings as JSON holds them: the words, how many documents each is in, and all their
    document numbers in one run of bytes (base64), read back in one piece."""
    total, where = tables
    ids = array("I")
    for each in where.values():
        ids.extend(each)
    return {
        "total": total,
        "words": list(where),
        "sizes": [len(each) for each in where.values()],
        "ids": base64.b64encode(ids.tobytes()).decode("ascii"),
        "layout": [ids.itemsize, sys.byteorder],
    }


def _decoded(data: dict) -> tuple[int, dict[str, array]]:
    ids = array("I")
    if data["layout"] != [ids.itemsize, sys.byteorder]:
        raise ValueError("postings kept by another machine")
    ids.frombytes(base64.b64decode(data["ids"], validate=True))
    if len(ids) != sum(data["sizes"]) or len(data["words"]) != len(data["sizes"]):
        raise ValueError("postings cut short")
    where: dict[str, array] = {}
    at = 0
    for word, size in zip(data["words"], data["sizes"]):
        where[word] = ids[at : at + size]
        at += size
    return int(data["total"]), where


def postings(backend) -> tuple[int, dict[str, array]] | None:
    """(how many documents, the ids of the documents each word is in) of a backend with titles.
    Derived once per corpus (deepresearch.understanding.tables keeps them)."""
    texts_fn = getattr(backend, "link_texts", None) or getattr(backend, "titles", None)
    if texts_fn is None:
        return None
    with _lock:
        if id(backend) not in _postings:
            program = (sys.modules[__name__], _words)
            _postings[id(backend)] = kept_table(
                backend, "postings", lambda: _derived(texts_fn()), _encoded, _decoded, program
            )
            _owners[id(backend)] = backend  # held: no other object takes its id while these stand
        return _postings[id(backend)]


def _g2(observed: int, expected: float) -> float:
    """The log-likelihood ratio of `observed` meetings against `expected` ones; 0 unless more."""
    if expected <= 0 or observed <= expected:
        return 0.0
    return 2 * (observed * math.log(observed / expected) - (observed - expected))


def evidence(word: str, others: Iterable[str], backend) -> float:
    """How far beyond chance `word` shares documents with `others` (folded words), summed."""
    known = postings(backend)
    if known is None:
        return 0.0
    total, where = known
    mine = where.get(word)
    if not mine:
        return 0.0
    docs = set(mine)
    score = 0.0
    for other in others:
        theirs = where.get(other)
        if other == word or not theirs:
            continue
        both = len(docs.intersection(theirs))
        score += _g2(both, len(mine) * len(theirs) / total)
    return score
