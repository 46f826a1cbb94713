"""What a retrieved sentence holds, for choosing an answer: a year, a number, names (runs of
capitalized words) the question does not already say."""

from __future__ import annotations

import functools
import re

from deepresearch.report.subjects import opens_with_pronoun
from deepresearch.text.sentences import STOP, UPPER
from deepresearch.text.words import singular, tokens
from deepresearch.understanding.linking import head_nouns

YEAR = re.compile(r"\b(?:[12]\d{3}|\d{1,4}\s*(?:BC|BCE|AD|CE)|(?:AD|CE)\s*\d{1,4})\b")
# a number in figures or in words ("fourteen lines"; not "one", which is as often "one of")
NUMBER = re.compile(
    r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen|"
    r"(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundred|thousand|million|billion|dozen)s?\b",
    re.IGNORECASE,
)
NAME = re.compile(
    rf"\b(?:[{UPPER}]\.\s*)*[{UPPER}][\w'’-]*(?:\s+(?:(?:de|da|del|della|di|van|von|der|den|la|le|of|the|al|bin|"
    rf"ibn|y)\s+)?(?:[{UPPER}]\.\s*)*[{UPPER}][\w'’-]*)*"
)

QUOTED = re.compile(r'["“]([^"“”]{2,80})["”]')

# a place said with a common noun: a preposition of place, an article, the noun
LOCATIVE = re.compile(
    r"\b(?:in|into|inside|within|to|at|on|near|throughout|along|across|around|beneath|under)\s+"
    r"(?:the\s+|a\s+|an\s+|its\s+|their\s+)?(?:[a-z]+\s+)?([a-z]{3,})\b"
)


def names_in(sentence: str, skip_first: bool = True) -> list[tuple[int, str]]:
    """Runs of capitalized words (with name particles: "Miguel de Cervantes"), with their
    positions; the sentence's first word only when it is followed by another capitalized one."""
    out = []
    for m in NAME.finditer(sentence):
        name = m.group(0)
        if skip_first and m.start() == 0 and " " not in name:
            continue
        if name.lower() in STOP:
            continue
        out.append((m.start(), name))
    return out


@functools.lru_cache(maxsize=16384)
def type_match(kind: str, sentence: str, asked: frozenset[str]) -> bool:
    """Does the sentence hold the kind of thing the question asks for (a name: one that is not among
    the question's own words `asked`)?"""
    if kind == "year":
        return bool(YEAR.search(sentence))
    if kind == "number":
        return bool(NUMBER.search(sentence))
    if kind in ("person", "place", "thing"):
        if any(not set(tokens(n)) <= asked for _, n in names_in(sentence)):
            return True
        # a thing named in quotation marks need not be capitalized: an expression, a motto, a title
        if kind == "thing" and any(set(tokens(q)) - asked - STOP for q in QUOTED.findall(sentence)):
            return True
        # a place need not be a name: "in molecular clouds", "to the lungs"
        return kind == "place" and any(m.group(1) not in asked for m in LOCATIVE.finditer(sentence))
    return True


_SORT_OF = re.compile(r"\b(?:kind|type|sort|form|style|genre|variety)s? of (?:an? )?([a-z]+)\b", re.I)


def sort_said(question: str, sentence: str, asked: frozenset[str]) -> bool:
    """ "What kind of N ...": does the sentence say N narrowed by a word the question does not say
    ("strong contralto voice" for "what kind of voice"), the answer being that word?"""
    m = _SORT_OF.search(question)
    if m is None:
        return False
    noun = singular(m.group(1).lower())
    words = tokens(sentence)
    return any(
        singular(w) == noun
        and i
        and words[i - 1] not in asked
        and words[i - 1] not in STOP
        and not words[i - 1].isdigit()
        for i, w in enumerate(words)
    )


_DEFINITE = re.compile(r"^The\s+([a-z]+)\b")


def of_its_own_subject(sentence: str, title: str, text: str) -> bool:
    """Does the sentence open by pointing at its own source's subject: with a pronoun ("He was the
    eldest son of ..."), or with "the" and the kind of thing its source's description line calls that
    subject ("The city lies beside a river ..." in a text that calls it a city)? Quoted from
    another source, such a sentence speaks of that source's subject, whatever else it names."""
    if opens_with_pronoun(sentence):
        return True
    opening = _DEFINITE.match(sentence)
    if opening is None or not title:
        return False
    return singular(opening.group(1)) in _kinds_said(title, text[:600])


@functools.lru_cache(maxsize=1024)
def _kinds_said(title: str, text: str) -> set[str]:
    """The kinds of thing a text calls its subject: by its "Title (description)." line, and by what its
    first sentence says it is ("Toulouse is a city in ...": a city)."""
    line = re.match(rf"{re.escape(title)} \((.+?)\)\.\s*", text)
    kinds = head_nouns(line.group(1)) if line else set()
    rest = text[line.end() :] if line else text
    first = _IS_A.search(rest.split(". ")[0])
    return kinds | (head_nouns(first.group(1)) if first else set())


_IS_A = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+(.+)")


def said_of_a_pronoun(sentence: str) -> bool:
    """Is the sentence's subject a pronoun ("It is ...", "To the south it is ...")? A pronoun among its
    first words with no name before it but the sentence's first word."""
    words = sentence.split()[:6]
    for i, w in enumerate(words):
        if w.strip(",;:").lower() in ("it", "he", "she", "they"):
            return True
        if i > 0 and w[:1].isupper():
            return False
    return False
