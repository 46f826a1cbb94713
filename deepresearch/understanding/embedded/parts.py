"""What a question compares, and the parts it asks: "How many bridges did X inspect, and who leads
it?" asks a number and a name; "Compare X and Y" compares two named things."""

from __future__ import annotations

import re

from deepresearch.text.words import fold, tokens
from deepresearch.understanding.embedded.forms import polar
from deepresearch.understanding.embedded.question import answer_kind


def is_comparison(question: str) -> bool:
    q = fold(question)
    return bool(re.search(r"\b(compare|compared|comparing|comparison|contrast|versus|vs\.?|differ|differences?)\b", q))


def compared(question: str, concepts: list[dict]) -> list[dict]:
    """The things a question compares: two or more named things of the question joined by "and",
    "or", "versus" or a comparison word."""
    named = [
        c
        for c in concepts
        if c.get("origin", "question") in ("question", "model") and (c.get("title") or c["name"][:1].isupper())
    ]
    if len(named) < 2:
        return []
    if is_comparison(question):
        return named
    if answer_kind(question)[0] == "other" and polar(question) is None:  # "how are X related to Y and Z": parts
        return []
    q = " ".join(tokens(question))  # words alone: "and F. Scott Fitzgerald" joins "f scott fitzgerald"
    joined = [
        c
        for c in named
        if any(
            f" {w} {' '.join(tokens(c.get('phrase') or c['name']))} " in f" {q} "
            for w in ("and", "and the", "or", "or the", "versus", "vs")
        )
    ]
    return named if joined else []


_PART_BREAK = re.compile(
    r"(?:,\s*|\s+)(?:and|but)\s+(?=(?:who|whom|whose|what|which|when|where|why|how|in what|in which)\b)"
    r"|;\s*|\?\s+(?=\S)",
    re.IGNORECASE,
)


def parts_of(question: str) -> list[tuple[str, str]]:
    """What the question asks, one (text, kind of answer) per part: "How many bridges did Project Heron
    inspect, and who leads it?" asks a number and a name. Parts are cut where a question word starts
    a new clause after "and" (or a new question begins); a question of one part is one part."""
    pieces = [x.strip(" ,;?") for x in _PART_BREAK.split(" ".join(question.split()))]
    pieces = [x for x in pieces if len(tokens(x)) >= 2] or [question.strip()]
    return [(x, answer_kind(x)[0]) for x in pieces]
