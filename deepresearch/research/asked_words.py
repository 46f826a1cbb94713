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


def closest_to_asked(words: Sequence[str], texts: Sequence[str], sim: Similarity, within: float = -1.0) -> list[int]:
    """The indices of the texts closest to what `words` ask: the one of the highest cosine plus `LEXICAL`
    times the share of the asked stems it holds (the first among equals; without an embedder, the
    shared stems alone); with `within`, then those as close less `within` that are what is asked too,
    closest first. Empty when there are no words, or when the closest text is not what is asked: it shares no
    stem and is less than `ASKED_FLOOR` close."""
    if not words or not texts:
        return []
    asked = set(stems(list(words)))
    if sim.embedder is not None:
        v = _unit(np.asarray(sim.vectors([" ".join(words), *texts]), np.float32))
        close = [float(x) for x in v[1:] @ v[0]]
    else:
        close = [0.0] * len(texts)
    shared = [len(asked & set(stems(tokens(t)))) / len(asked) for t in texts]
    score = [c + LEXICAL * x for c, x in zip(close, shared)]
    ranked = sorted(range(len(texts)), key=lambda r: -score[r])  # stable: the first among equals
    kept = [r for r in ranked if shared[r] or close[r] >= ASKED_FLOOR]
    if not kept or kept[0] != ranked[0]:
        return []
    return kept[:1] + [r for r in kept[1:] if score[kept[0]] - score[r] <= within]
