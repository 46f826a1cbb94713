"""Typing errors in a question, corrected against the search backend's own words.

People type questions with slips ("who desgined the eifel tower"). A word of the question that no
document of the backend uses is replaced by the backend's word nearest to it by edit distance (at
most two edits; among the nearest, the one most documents use), as a search box's "did you mean"
does. Only a backend with titles (the encyclopedia) has a vocabulary; elsewhere the question stays
as typed. A capitalized word inside the question is most often a name the user wrote on purpose,
one the backend may not know ("Who founded OpenAI?" is not about *Open*): it is corrected only at
one edit ("Mozrat"), a lower-case word (or the question's first) at up to two. The question itself
is kept as asked: the correction is what is read and searched.

Only an English question is corrected. Slips can hide a question's language from the detector
("whree did the ferry to the islnd laeve from?" is not confidently English): a question detected as
another language whose corrected form is English is read as English.

A question typed all in lower case ("when were haydn and handel born") hides its names, which the
reading finds by their capitals; its words then take the case the backend's documents usually give
them inside a sentence ("Haydn", "Handel"; "born" stays), as a truecaser does.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

from rapidfuzz import process
from rapidfuzz.distance import OSA

from deepresearch.language import DEFAULT, detect
from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, stem
from deepresearch.understanding.embedded.forms import fronted

MAX_EDITS = 2
NAME_EDITS = 1  # a capitalized word inside the question: a name, corrected only when one slip away
NAME_SHARE = 4  # a word the documents capitalize inside sentences this many times as often as not: a name
MIN_LENGTH = 4  # shorter words are too often another word at one edit
MIN_USES = 2  # a correction is a word at least this many documents use
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")

_vocabularies: dict[int, tuple[Counter, list[str]]] = {}
_cases: dict[int, tuple[Counter, Counter]] = {}
_stems: dict[int, frozenset[str]] = {}
_owners: dict[int, object] = {}
_lock = threading.Lock()
# a word inside a sentence (not after its end): its case is the writer's choice, not the sentence's
_INSIDE = re.compile(r"(?<![.!?:\n\"“(])\s+([A-Za-z][a-z'’-]*)")


def vocabulary(backend) -> tuple[Counter, list[str]] | None:
    """(how many documents use each word, the words) of a backend with titles; None without."""
    texts_fn = getattr(backend, "link_texts", None) or getattr(backend, "titles", None)
    if texts_fn is None:
        return None
    with _lock:
        if id(backend) not in _vocabularies:
            counts: Counter = Counter()
            capital: Counter = Counter()
            lower: Counter = Counter()
            for text in texts_fn():
                counts.update(set(fold(w) for w in _WORD.findall(text)))
                for w in _INSIDE.findall(text):
                    (capital if w[:1].isupper() else lower)[fold(w)] += 1
            # a title's words are the names a question most often misspells ("Obama" that one text uses):
            # the title counts as a use
            titles_fn = getattr(backend, "titles", None) if getattr(backend, "link_texts", None) else None
            for title in titles_fn() if titles_fn is not None else []:
                counts.update(set(fold(w) for w in _WORD.findall(title)))
            words = [w for w, n in counts.items() if n >= MIN_USES and len(w) >= MIN_LENGTH - 1]
            _vocabularies[id(backend)] = (counts, words)
            _stems[id(backend)] = frozenset(stem(w) for w in counts)
            _cases[id(backend)] = (capital, lower)
            _owners[id(backend)] = backend  # held: no other object takes its id while these stand
        return _vocabularies[id(backend)]


def truecased(question: str, backend) -> str:
    """A question typed without capitals, each word in the case the backend's documents usually
    write it inside a sentence; any other question as it is."""
    if any(ch.isupper() for ch in question) or backend is None or vocabulary(backend) is None:
        return question
    capital, lower = _cases[id(backend)]

    def case(m: re.Match) -> str:
        word = m.group(0)
        low = fold(word)
        if low in STOP or capital[low] < MIN_USES or capital[low] <= NAME_SHARE * lower[low]:
            return word
        return word[:1].upper() + word[1:]

    return _WORD.sub(case, question)


def corrected(question: str, backend) -> str:
    """The question with each word the backend does not know replaced by its nearest known word."""
    known = vocabulary(backend) if backend is not None else None
    if known is None:
        return question
    counts, words = known

    def fix(m: re.Match) -> str:
        word = m.group(0)
        low = fold(word)
        if len(low) < MIN_LENGTH or low in STOP or counts.get(low, 0) or not low.isalpha():
            return word
        if stem(low) in _stems[id(backend)]:
            return word  # another form of a word the documents use ("tutored": they say "tutor")
        edits = NAME_EDITS if word[:1].isupper() and question[: m.start()].strip() else MAX_EDITS
        near = process.extract(low, words, scorer=OSA.distance, score_cutoff=edits, limit=20)
        if not near:
            return word
        best = min(near, key=lambda hit: (hit[1], -counts[hit[0]], hit[0]))[0]
        return best.capitalize() if word[:1].isupper() else best

    return truecased(_WORD.sub(fix, question), backend)


def language_and_reading(question: str, backend) -> tuple[str, str]:
    """(the question's language, the question as read: corrected when it is English, and with a
    question word at its end put first)."""
    language, spelled = detect(question), corrected(question, backend)
    if language == DEFAULT or (spelled != question and detect(spelled) == DEFAULT):
        return DEFAULT, fronted(spelled)
    return language, question
