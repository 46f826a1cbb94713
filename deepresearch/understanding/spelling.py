"""Typing errors in a question, corrected against the search backend's own words.

People type questions with slips ("who desgined the eifel tower"). A word of the question that no
document of the backend uses is replaced by the backend's word nearest to it by edit distance (at
most two edits), as a search box's "did you mean" does. Among the nearest, a noisy channel's choice:
a word that keeps the slip's first letter (slips seldom touch it), then the one the question's other
words share documents with far beyond chance, and far more than with the commonest
(deepresearch.understanding.cooccurrence: "shvia" beside "hindu" and "god" is *Shiva*, not the
commoner *Shia*; "the frod motor company" is *Ford*, not "from"; another slip counts as its first
reading), and without such evidence the one most documents use. Edit distance stays the first
criterion: on the development questions, letting context reach a word one edit further corrected
fewer slips. A word of a stem the backend knows ("tutored": it says "tutor") is no slip, unless a
word of another stem one edit away has that evidence ("bardy" beside "super bowl": *Brady*). A word
the backend knows is never changed: slips that make another real word ("slain" for "spain") are left
as typed, since every rule tried on the development questions changed more correct words than it
mended. Only a backend with titles (the encyclopedia) has a vocabulary; elsewhere the question stays
as typed. A capitalized word inside the question is most often a name the user wrote on purpose, one
the backend may not know ("Who founded OpenAI?" is not about *Open*): it is corrected only at one
edit ("Mozrat"), a lower-case word (or the question's first) at up to two. The question itself is
kept as asked: the correction is what is read and searched.

Only an English question is corrected. Slips can hide a question's language from the detector
("whree did the ferry to the islnd laeve from?" is not confidently English): a question detected as
another language whose corrected form is English is read as English.

A question typed all in lower case ("when were haydn and handel born") hides its names, which the
reading finds by their capitals; its words then take the case the backend's documents usually give
them inside a sentence ("Haydn", "Handel"; "born" stays), as a truecaser does.
"""

from __future__ import annotations

import re
import sys
import threading
from collections import Counter

from rapidfuzz import process
from rapidfuzz.distance import OSA

from deepresearch.language import DEFAULT, detect
from deepresearch.text import sentences as _sentences
from deepresearch.text import words as _words
from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, stem
from deepresearch.understanding.cooccurrence import evidence
from deepresearch.understanding.embedded.forms import fronted
from deepresearch.understanding.linking import linker_for
from deepresearch.understanding.tables import kept_table

MAX_EDITS = 2
NAME_EDITS = 1  # a capitalized word inside the question: a name, corrected only when one slip away
NAME_SHARE = 4  # a word the documents capitalize inside sentences this many times as often as not: a name
MIN_LENGTH = 4  # shorter words are too often another word at one edit
MIN_USES = 2  # a correction is a word at least this many documents use
# the evidence (log-likelihood ratio, G²) that picks a slip's reading by its context: chance exceeds
# it once in a hundred (the chi-squared distribution's 0.99 point at one degree of freedom)
EVIDENCE = 6.63
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-])*")  # "Cortés" is one word

_vocabularies: dict[int, tuple[Counter, list[str]]] = {}
_cases: dict[int, tuple[Counter, Counter]] = {}
_stems: dict[int, frozenset[str]] = {}
_owners: dict[int, object] = {}
_lock = threading.Lock()
# a word inside a sentence (not after its end): its case is the writer's choice, not the sentence's
_INSIDE = re.compile(r"(?<![.!?:\n\"“(])\s+([^\W\d_](?:[^\W\d_]|['’-])*)")


def _derived(texts: list[str], titles: list[str]) -> dict:
    """The tables `vocabulary` reads, of a backend's texts (and titles, when the texts are others)."""
    counts: Counter = Counter()
    capital: Counter = Counter()
    lower: Counter = Counter()
    for text in texts:
        counts.update(set(_WORD.findall(fold(text))))  # "Pietà" is "pieta", not "piet"
        for w in _INSIDE.findall(text):
            if w[1:] != w[1:].lower():
                continue  # "NASA", "McCartney": not a word a writer chose to capitalize
            (capital if w[:1].isupper() else lower)[fold(w)] += 1
    # a title's words are the names a question most often misspells ("Obama" that one text uses):
    # the title counts as a use
    for title in titles:
        counts.update(set(_WORD.findall(fold(title))))
    words = [w for w, n in counts.items() if n >= MIN_USES and len(w) >= MIN_LENGTH - 1]
    return {"counts": counts, "words": words, "stems": frozenset(stem(w) for w in counts), "cases": (capital, lower)}


def _encoded(tables: dict) -> dict:
    capital, lower = tables["cases"]
    return {
        "counts": tables["counts"],
        "words": tables["words"],
        "stems": sorted(tables["stems"]),
        "capital": capital,
        "lower": lower,
    }


def _decoded(data: dict) -> dict:
    return {
        "counts": Counter(data["counts"]),
        "words": list(data["words"]),
        "stems": frozenset(data["stems"]),
        "cases": (Counter(data["capital"]), Counter(data["lower"])),
    }


def vocabulary(backend) -> tuple[Counter, list[str]] | None:
    """(how many documents use each word, the words) of a backend with titles; None without.
    Derived once per corpus (deepresearch.understanding.tables keeps it)."""
    texts_fn = getattr(backend, "link_texts", None) or getattr(backend, "titles", None)
    if texts_fn is None:
        return None
    with _lock:
        if id(backend) not in _vocabularies:
            titles_fn = getattr(backend, "titles", None) if getattr(backend, "link_texts", None) else None

            def build() -> dict:
                return _derived(list(texts_fn()), list(titles_fn()) if titles_fn is not None else [])

            program = (sys.modules[__name__], _words, _sentences)
            tables = kept_table(backend, "spelling", build, _encoded, _decoded, program)
            _vocabularies[id(backend)] = (tables["counts"], tables["words"])
            _stems[id(backend)] = tables["stems"]
            _cases[id(backend)] = tables["cases"]
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


def _nearest(m: re.Match, question: str, backend) -> tuple[list[str], bool]:
    """(the known words fewest edits from the slip `m`, a word the backend does not use; whether the
    word may be no slip at all): ([], False) when it is no slip or has no near word."""
    counts, words = _vocabularies[id(backend)]
    word = m.group(0)
    low = fold(word)
    if len(low) < MIN_LENGTH or low in STOP or counts.get(low, 0) or not low.isalpha():
        return [], False
    # another form of a word the documents use ("tutored": they say "tutor") is no slip, unless the
    # question's other words call for a word of another stem one slip away ("tom bardy": Brady)
    doubtful = stem(low) in _stems[id(backend)]
    edits = NAME_EDITS if doubtful or (word[:1].isupper() and question[: m.start()].strip()) else MAX_EDITS
    near = process.extract(low, words, scorer=OSA.distance, score_cutoff=edits, limit=None)
    if doubtful:
        near = [hit for hit in near if stem(hit[0]) != stem(low)]
    fewest = min((hit[1] for hit in near), default=0)
    nearest = sorted(hit[0] for hit in near if hit[1] == fewest)
    # a slip seldom touches a word's first letter (a few slips in a hundred, in studies of typing errors)
    kept = [w for w in nearest if w[0] == low[0]]
    return (kept, True) if doubtful else (kept or nearest, False)


def _choice(near: list[str], doubtful: bool, context: set[str], backend) -> str | None:
    """Of the words equally near a slip, the one the question's other words go with (far beyond
    chance, in the backend's documents, and by far more than with the commonest); without such
    evidence, the one most documents use, or none for a word that may be no slip."""
    counts = _vocabularies[id(backend)][0]
    commonest = None if doubtful else min(near, key=lambda w: (-counts[w], w))
    if len(near) > 1 or doubtful:
        scored = [(evidence(w, context, backend), counts[w], w) for w in near]
        best = max(scored, key=lambda s: (s[0], s[1], [-ord(ch) for ch in s[2]]))
        # the commonest word's own evidence is the bar: one chance meeting of a rare word with one of a
        # long question's words ("found") is no reason to pass over the word most documents use
        bar = evidence(commonest, context, backend) if commonest else 0.0
        if best[0] - bar >= EVIDENCE:
            return best[2]
    return commonest


def corrected(question: str, backend) -> str:
    """The question with each word the backend does not know replaced by its nearest known word,
    read in the context of the question's other words."""
    known = vocabulary(backend) if backend is not None else None
    if known is None:
        return question
    counts = known[0]
    found = list(_WORD.finditer(question))
    slips = {i: near for i, m in enumerate(found) if (near := _nearest(m, question, backend))[0]}
    if not slips:
        return truecased(question, backend)
    folded = [fold(m.group(0)) for m in found]
    context = {w for w in folded if len(w) >= 3 and w not in STOP and counts.get(w, 0)}
    chosen = {i: _choice(*near, context, backend) for i, near in slips.items()}
    if len(slips) > 1:  # read again with the other slips as first read ("cittizen kane": a citizen)
        chosen = {
            i: _choice(*near, context | {w for j, w in chosen.items() if j != i and w}, backend)
            for i, near in slips.items()
        }
    out: list[str] = []
    end = 0
    for i, m in enumerate(found):
        if reading := chosen.get(i):
            out += [question[end : m.start()], reading.capitalize() if m.group(0)[:1].isupper() else reading]
            end = m.end()
    return truecased("".join(out) + question[end:], backend)


def language_and_reading(question: str, backend) -> tuple[str, str]:
    """(the question's language, the question as read: corrected when it is English, and with a
    question word at its end put first)."""
    language, spelled = detect(question), corrected(question, backend)
    if language == DEFAULT or (spelled != question and detect(spelled) == DEFAULT):
        return DEFAULT, fronted(spelled, _title_test(backend))
    return language, question


def _title_test(backend):
    """Whether a phrase is one of the backend's titles, read as its words (None: it has no titles)."""
    titles = getattr(backend, "titles", None) if backend is not None else None
    if titles is None:
        return None
    linker = linker_for(backend)
    return (lambda phrase: bool(linker.exact_titles(_words.tokens(phrase)))) if linker is not None else None
