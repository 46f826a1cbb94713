"""The words of a question that say a role's clause: from the role word to the thing it leads to
("the chain that X co-founded"), read by deepresearch.understanding.embedded.hops and .question."""

from __future__ import annotations

import re

from deepresearch.text.sentences import STOP
from deepresearch.text.words import singular, tokens

RELATIVE = {"where", "that", "which", "who", "whom", "whose"}


def hop_clause(question: str, relation: str, phrases: list[str]) -> set[str]:
    """The words that say which thing the relation leads to: from the role word to the end of
    the last named thing after it ("sister with whom Ida Brannock shared the 1911 Kestrel Medal in
    Glazing"), with a trailing "in X" or "of X"."""
    words = tokens(question)
    if singular(relation) not in [singular(w) for w in words]:
        return set()
    said = [i for i, w in enumerate(words) if singular(w) == singular(relation)]
    # the role word nearest before a named thing ("which country borders the country where X lies":
    # the second "country" is the role, the first the thing asked)
    named_at = [
        i for p in phrases for i in range(len(words)) if tokens(p) and words[i : i + len(tokens(p))] == tokens(p)
    ]
    start = max((i for i in said if any(n > i for n in named_at)), default=said[0])
    end = start
    for p in phrases:
        pw = tokens(p)
        for i in range(start, len(words) - len(pw) + 1):
            if pw and words[i : i + len(pw)] == pw:
                end = max(end, i + len(pw))
    if end + 1 < len(words) and words[end] in ("in", "of"):
        end += 2
    elif start + 1 < end and words[start + 1] in RELATIVE and 0 < len(words) - end <= 2:
        end = len(words)  # a relative clause's last words: "the country where X stands" ends with "stands"
    elif start + 1 < end and words[start + 1] in RELATIVE and end < len(words):
        # more follows: the clause's verb is its first word of content ("the chain that X co-founded
        # is based where?"), the question's own verb after it left out
        verb = next((i for i in range(end, len(words)) if words[i] not in STOP), None)
        if verb is not None:
            return set(words[start:end]) | set(words[end : verb + 1]) | _hyphened(question, words[verb])
    return set(words[start:end])


def _hyphened(question: str, word: str) -> set[str]:
    """The words of the hyphenated word of the question that holds `word` ("co-founded" for "founded")."""
    for raw in re.findall(r"[^\W_]+(?:-[^\W_]+)+", question):
        parts = tokens(raw)
        if word in parts:
            return set(parts)
    return set()
