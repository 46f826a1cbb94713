"""The aspects a question names itself ("the origins and legacy of X", "How do X grow and spread?"),
each a section researched as its own question, beside the aspects the material holds.

- The named aspects are the words the question joins by "and" or "or" (a coordination), none of
  them a word of a subject's name nor a function word: each becomes a question of its own, the
  question with the coordination cut to that one word ("the origins of X", "How do X grow?").
- Each named aspect's section holds the sentences of the material closest in meaning to its own
  question and closer to it than to any other named aspect's (so "origins" and "legacy" do not
  share a sentence), at most its even share of them; the sentences left are grouped by meaning into
  the other sections (deepresearch.research.aspects), so a question naming two aspects still gets
  as many sections as the material holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.aspects import (
    Aspect,
    Sentence,
    _sources,
    _two_sources,
    _unit,
    group,
    meaning,
    name_groups,
    sentences_of,
    word_vectors,
)
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens

WORD = r"[^\W\d_][\w'’-]*"
_COORDINATED = re.compile(rf"\b({WORD})((?:\s*,\s*{WORD})*)\s*,?\s+(?:and|or)\s+(?:the\s+)?({WORD})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Asked:
    word: str  # the aspect as the question says it ("origins")
    question: str  # the question asked of it alone ("What were the origins of X?")


def named_aspects(question: str, names: Iterable[str]) -> list[Asked]:
    """The aspects the question names by coordinating words ("A and B", "A, B and C"), each with its
    own question; none when it coordinates fewer than two words that are neither function words nor
    words of a subject's `names`."""
    skip = set(stems([w for n in names for w in tokens(n)]))
    for m in _COORDINATED.finditer(question):
        words = [m.group(1), *re.findall(WORD, m.group(2)), m.group(3)]
        folded = [tokens(w) for w in words]
        if any(len(t) != 1 or t[0] in STOP or stems(t)[0] in skip for t in folded):
            continue
        head, tail = question[: m.start()], question[m.end() :]
        return [Asked(w, " ".join(f"{head}{w}{tail}".split())) for w in dict.fromkeys(words)]
    return []


def with_asked(
    question: str,
    subject: str,
    articles: list[tuple[str, str]],
    sim: Similarity,
    k: int,
    asked: list[Asked],
    rarity: Callable[[str], float] | None = None,
    phrase: Callable[[list[str]], bool] | None = None,
    titled: Callable[[list[str]], Iterable[str]] | None = None,
) -> tuple[list[Aspect], list[Sentence]]:
    """Aspects of `articles` as deepresearch.research.aspects.aspects gives them, the first of them
    one for each of `asked` (in the question's order, each named by its own question); the rest the
    material's, closest to the question first."""
    sentences = sentences_of(articles)
    if not sentences or not asked:
        return [], sentences
    raw = meaning(sentences, sim, subject, desource=0.0)
    share = max(2, math.ceil(len(sentences) / max(k, len(asked) + 1)))
    # each named aspect's question is read whole, its subject's name in it, as the sentences are: a
    # sentence on another thing's causes is not on this subject's
    v = plain([x.text for x in sentences] + [a.question for a in asked], sim)
    own = asked_groups(v[: len(sentences)], list(v[len(sentences) :]), share)
    taken = {i for g in own for i in g}
    rest = [i for i in range(len(sentences)) if i not in taken]
    more = max(0, k - len(asked))
    material: list[list[int]] = []
    if more and len(rest) >= 2:
        v = meaning([sentences[i] for i in rest], sim, subject)
        material = [[rest[i] for i in g] for g in group([sentences[i] for i in rest], v, more)]
    groups = _two_sources([g for g in own] + material, sentences, raw)
    embedded = sim.embedder is not None

    def centroid_of(members: list[int]) -> np.ndarray:
        return _unit(raw[members].mean(axis=0, keepdims=True))[0]

    named = name_groups(  # no other aspect is named by a named aspect's word
        groups,
        sentences,
        question,
        " ".join([subject, *(a.word for a in asked)]),
        [t for t, _ in articles],
        rarity,
        centroid_of if embedded else None,
        (lambda forms: np.asarray(sim.vectors(forms))) if embedded else None,
        phrase,
        titled,
    )
    out = [
        Aspect(name=a.question, terms=[a.word], members=g, sources=_sources(g, sentences))
        for a, g in zip(asked, groups)
        if g
    ]
    found = [x for x in named[len(asked) :] if x.members]
    if embedded and found:
        qv = np.asarray(sim.vectors([question]))[0]
        found.sort(key=lambda x: -float(centroid_of(x.members) @ qv))
    return out + found, sentences


def plain(texts: list[str], sim: Similarity) -> np.ndarray:
    """Unit vectors of the texts as they are written (by the embedder, else by their words)."""
    return _unit(np.asarray(sim.vectors(texts), np.float32)) if sim.embedder is not None else word_vectors(texts)


def asked_groups(v: np.ndarray, questions: list[np.ndarray], share: int) -> list[list[int]]:
    """For each named aspect's question (its vector), the sentences (rows of `v`) closest to it and
    closer to it than to any other named aspect's: at most `share`, each closer to it than the
    sentences are on average."""
    scores = v @ np.stack(questions).T  # sentences x named aspects
    best = scores.argmax(axis=1)
    mean = scores.mean(axis=0)
    out: list[list[int]] = []
    for a in range(len(questions)):
        mine = [i for i in np.argsort(-scores[:, a], kind="stable") if best[i] == a and scores[i, a] > mean[a]]
        out.append(sorted(int(i) for i in mine[:share]))
    return out
