"""Words as the research compares them: folded (lower case, no accents), possessives dropped,
singular, stemmed; and titles without their disambiguation ("Mercury (planet)" -> "Mercury")."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Set as AbstractSet

from deepresearch.text.sentences import stem_words


def stem(word: str) -> str:
    """One word's stem (as `stems` gives it)."""
    return stem_words([word])[0]


TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_ASCII_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")  # the same tokens in an ASCII text, found faster


class _Combining(dict):
    """str.translate's table for `fold`: a code point with a combining class maps to None
    (deleted), any other to itself. Filled as texts are folded, one entry per code point met:
    a table of all of Unicode took 40-120 ms to build on the first text that was not ASCII, and
    a code point missing from it cost translate a KeyError at every lookup."""

    def __missing__(self, cp: int) -> int | None:
        value = None if unicodedata.combining(chr(cp)) else cp
        if len(self) < _COMBINING_HELD:  # a text of every code point holds no process's memory
            self[cp] = value  # the same value whichever thread stores it first
        return value


_COMBINING_HELD = 1 << 16  # code points kept: a few MB at most
_COMBINING = _Combining()


def fold(text: str) -> str:
    """Lower case without accents: 'Hernán Cortés' -> 'hernan cortes'."""
    if text.isascii():  # nothing to decompose or drop
        return text.lower()
    return unicodedata.normalize("NFKD", text).translate(_COMBINING).lower()


POSSESSIVE = ("'s", "’s")


def _apostrophe(t: str) -> str:
    if t.endswith(POSSESSIVE):  # a token starts with a letter or digit: never empty after this
        t = t[:-2]
    return t.replace("’", "'") if "’" in t else t


def tokens(text: str) -> list[str]:
    """Words of `text`, folded, possessives dropped ("Galileo's" -> "galileo")."""
    low = fold(text)
    found = (_ASCII_TOKEN if low.isascii() else TOKEN).findall(low)
    if "'" not in low and "’" not in low:  # no token holds an apostrophe: nothing to drop
        return found
    return [_apostrophe(t) if "'" in t or "’" in t else t for t in found]


def stems(words: list[str]) -> tuple[str, ...]:
    return tuple(stem_words(words if isinstance(words, list) else list(words)))


@functools.lru_cache(maxsize=1024)  # whole articles at worst
def text_stems(text: str) -> frozenset:
    """The stems of a text's words, worked out once per text (an encyclopedia article is compared
    with the subject's text in every run that names it; coverage checks every concept against
    every source in every iteration)."""
    return frozenset(stems(tokens(text)))


def singular(word: str) -> str:
    """A plural noun's singular, roughly: 'volcanoes' -> 'volcano', 'brothers' -> 'brother'."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("oes", "ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def keyed(words: list[str]) -> tuple[str, ...]:
    """The form titles are matched in: folded, singular."""
    return tuple(singular(w) for w in words)


def bare_title(title: str) -> str:
    """A title without its disambiguation: 'Mercury (planet)' -> 'Mercury'."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip() or title


def qualifier(title: str) -> str:
    """A title's disambiguation, the kind its parentheses give: 'Tit (bird)' -> 'bird'."""
    m = re.search(r"\(([^()]+)\)\s*$", title)
    return m.group(1).strip().lower() if m else ""


def without_words(text: str, mask: AbstractSet[str]) -> str:
    """The text without the words whose tokens are all in `mask` (folded), else the text itself:
    a subject's name, said by every sentence about it, left out before texts are compared by meaning
    (and a rare name's word pieces make look-alike names seem close: "Diogenes" and "Diode")."""
    if not mask:
        return text
    kept = [w for w in text.split() if not (set(tokens(w)) and set(tokens(w)) <= mask)]
    return " ".join(kept) or text
