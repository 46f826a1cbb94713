"""What a question asks of the things it names, by its own words, and the sentence closest to it.

A comparison asks each compared thing the same thing ("the areas of" two deserts): its words
without the things' names, the stop words and the words every question is built of. A single asked
word is little for a sentence encoder to go on, so a sentence sharing the asked words' stems ("an
area of ...") gains `LEXICAL` beside its closeness in meaning; one sharing none is what is asked only
when at least `ASKED_FLOOR` close. Used by the answer paragraph (deepresearch.research.answer) and by
a deep comparison's sections (deepresearch.research.aspect_report)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.aspects import _unit
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens
from deepresearch.understanding.linking import SCAFFOLD

LEXICAL = 0.3  # what a sentence sharing the asked words' stems gains beside its closeness in meaning
ASKED_FLOOR = 0.5  # a sentence sharing none of them is what is asked of a thing only when this close


def asked_words(question: str, names: Iterable[str]) -> list[str]:
    """The question's words that say what it asks of the things `names` ("areas"); none for a
    question that asks only how they differ."""
    named = {w for n in names for w in tokens(n)}
    return [w for w in tokens(question) if w not in STOP | SCAFFOLD | named and len(w) > 2]


def closest_to_asked(words: Sequence[str], texts: Sequence[str], sim: Similarity) -> int | None:
    """The index of the text closest to what `words` ask: the highest cosine plus `LEXICAL` times the
    share of the asked stems it holds (the first among equals; without an embedder, the shared stems
    alone). None when there are no words, or when that text is not what is asked: it shares no stem
    and is less than `ASKED_FLOOR` close."""
    if not words or not texts:
        return None
    asked = set(stems(list(words)))
    if sim.embedder is not None:
        v = _unit(np.asarray(sim.vectors([" ".join(words), *texts]), np.float32))
        close = v[1:] @ v[0]
    else:
        close = np.zeros(len(texts))
    shared = [len(asked & set(stems(tokens(t)))) / len(asked) for t in texts]
    best = max(range(len(texts)), key=lambda r: float(close[r]) + LEXICAL * shared[r])
    return best if shared[best] or close[best] >= ASKED_FLOOR else None
