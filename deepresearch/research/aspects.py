"""A broad question's sections as aspects of it, found in the material: what a reader wants to know.

The sentences of the subject's and its related articles are grouped by meaning, and each group is a
section named by the words its sentences share with the question or with each other ("Immune system
and antigens"), not by an article's title: STORM draws its outline from the perspectives several
sources take on a topic, and here the sources' own sentences are those perspectives.

- Each sentence is compared as what it says, not whose it is: the names of its article and of the
  subject are left out before it is read by meaning, and part of its article's mean vector is taken
  away ("de-sourced"), so that two articles' sentences on the same thing fall together and one
  article's sentences on different things fall apart.
- Groups are made by average-linkage agglomerative clustering of the sentences' cosine similarity;
  the groups that gather most sources become the aspects (at most `k`), every sentence then goes
  to the aspect it is closest to, and an aspect of one source takes the closest sentence of another
  (at least two sources a section where the material has them).
- A name is the aspect's most distinctive words (c-TF-IDF over the groups: said by several of its
  sentences, few of the other groups'), those the question says counting more, and none another
  aspect's name has (a group whose shared words all name other aspects is named by its own); a name
  that is only an article's title (of the material or of the corpus) gets one more word, unless the
  question names that article.

Without an embedder the sentences are compared by their stemmed words (TF-IDF vectors), the same way.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.grounding import source_sentences
from deepresearch.research.terms import names_title, shown, terms, title_alone, written
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, stems, tokens, without_words
from deepresearch.understanding.linking import SCAFFOLD

DESOURCE = 0.6  # the share of a sentence's article mean taken from it before grouping
OVERSPLIT = 2  # groups made per aspect wanted, before the best are chosen
NAME_TERMS = 2  # words or word pairs in an aspect's name
RARITY_CAP = 6.0  # a stem rarer than this (its inverse document frequency) names no better
QUESTION_WEIGHT = 2.0
CANDIDATES = 8  # a group's best-scored words that are compared with its meaning
MEANING_WEIGHT = 2.0  # how much closeness in meaning counts beside the words' score (0 to 1)  # a word the question says counts this much more in a name
MIN_WORDS = 6  # a sentence shorter than this says too little to group
ROUNDS = 3  # rounds of assigning sentences to aspects and moving the aspects
BALANCE = 1.6  # an aspect holds at most this many times its even share of the sentences


@dataclass
class Sentence:
    text: str
    source: str  # the title of the article it is from
    pos: int  # its place among its article's sentences


@dataclass
class Aspect:
    name: str
    terms: list[str]
    members: list[int] = field(default_factory=list)  # indices into the sentences
    sources: list[str] = field(default_factory=list)  # titles, most sentences first


def is_lead(sentence: str, title: str) -> bool:
    """An encyclopedia text's "Title (description)." line: no sentence of its own. A sentence that
    opens with the title and only ends on a bracket ("X has an area of 14,000 km2 (5,400 sq mi).") is one."""
    return bool(_LEAD.fullmatch(sentence[len(title) :])) and sentence.startswith(title)


_LEAD = re.compile(r" \((?:[^()]|\([^()]*\))*\)\.")  # " (description)." (a bracket inside it: life dates)


def sentences_of(articles: list[tuple[str, str]]) -> list[Sentence]:
    """The sentences of `articles` ((title, text) pairs), leads and fragments aside."""
    out = []
    for title, text in articles:
        kept = [s for s in source_sentences(text) if not is_lead(s, title) and len(s.split()) >= MIN_WORDS]
        out += [Sentence(s, title, i) for i, s in enumerate(kept)]
    return out


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


def _content(text: str) -> list[str]:
    return [w for w in tokens(text) if w not in STOP and w not in SCAFFOLD and not w.isdigit() and len(w) > 2]


def word_vectors(texts: list[str]) -> np.ndarray:
    """TF-IDF vectors of stemmed content words (without an embedder)."""
    docs = [stems(_content(t)) for t in texts]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    m = np.zeros((len(texts), max(1, len(vocab))), np.float32)
    df = Counter(w for d in docs for w in set(d))
    for r, d in enumerate(docs):
        for w, n in Counter(d).items():
            m[r, vocab[w]] = n * math.log(1 + len(docs) / df[w])
    return _unit(m)


def meaning(sentences: list[Sentence], sim: Similarity, subject: str, desource: float = DESOURCE) -> np.ndarray:
    """Unit vectors of what each sentence says (names of its article and the subject left out), with
    `desource` of its article's mean vector taken away."""
    masked = [
        without_words(s.text, frozenset(tokens(bare_title(s.source))) | frozenset(tokens(subject))) for s in sentences
    ]
    v = sim.vectors(masked) if sim.embedder is not None else word_vectors(masked)
    v = _unit(np.asarray(v, np.float32))
    if desource:
        by_source: dict[str, list[int]] = {}
        for i, s in enumerate(sentences):
            by_source.setdefault(s.source, []).append(i)
        for rows in by_source.values():
            if len(rows) > 1:
                v[rows] = v[rows] - desource * v[rows].mean(axis=0)
    return _unit(v)


def agglomerate(v: np.ndarray, groups: int) -> list[list[int]]:
    """Average-linkage clustering of unit vectors by cosine, down to `groups` groups (in order of
    their first member)."""
    clusters = [[i] for i in range(len(v))]
    if len(v) <= groups:
        return clusters
    s = v @ v.T
    link = s.copy()  # average similarity between clusters
    np.fill_diagonal(link, -np.inf)
    alive = list(range(len(v)))
    while len(alive) > groups:
        sub = link[np.ix_(alive, alive)]
        a, b = np.unravel_index(int(np.argmax(sub)), sub.shape)
        i, j = alive[min(a, b)], alive[max(a, b)]
        ni, nj = len(clusters[i]), len(clusters[j])
        link[i, :] = (link[i, :] * ni + link[j, :] * nj) / (ni + nj)
        link[:, i] = link[i, :]
        link[i, i] = -np.inf
        clusters[i] = clusters[i] + clusters[j]
        alive.remove(j)
    return [sorted(clusters[i]) for i in alive]


def _sources(members: list[int], sentences: list[Sentence]) -> list[str]:
    counts = Counter(sentences[i].source for i in members)
    return [t for t, _ in counts.most_common()]


def group(sentences: list[Sentence], v: np.ndarray, k: int, least: int = 1) -> list[list[int]]:
    """At most `k` groups of sentence indices, each (where the material allows) of two sources or more;
    at least `least` where there are that many sentences: when clustering gathers fewer groups of two
    (the rest chained into one), the sentences left alone, the most apart first, start the others."""
    if not sentences:
        return []
    made = agglomerate(v, min(len(sentences), k * OVERSPLIT))
    # the groups that gather most sources (then most sentences) are the aspects
    made.sort(key=lambda g: (-len(_sources(g, sentences)), -len(g), g[0]))
    kept = [g for g in made if len(g) > 1][:k] or made[:1]
    if len(kept) < least:
        alone = [g for g in made if len(g) == 1 and g not in kept]
        apart = v[[g[0] for g in alone]] @ _unit(v[[i for g in kept for i in g]].mean(axis=0, keepdims=True))[0]
        kept += [alone[int(r)] for r in np.argsort(apart, kind="stable")[: min(k, least) - len(kept)]]
    out = kept
    for _round in range(ROUNDS):  # every sentence to the closest aspect with room, then the aspects anew
        centroids = _unit(np.stack([v[g].mean(axis=0) for g in out]))
        out = balanced(v @ centroids.T, math.ceil(BALANCE * len(sentences) / len(out)))
        out = [g for g in out if g]
    out = [g for g in out if g]
    return _two_sources(out, sentences, v)


def balanced(scores: np.ndarray, room: int) -> list[list[int]]:
    """Each row (sentence) to a column (aspect): the closest pairs first, an aspect taking at most
    `room` sentences (so one aspect of every article's definitions does not swallow the report)."""
    n, k = scores.shape
    taken = [0] * k
    where = [-1] * n
    for flat in np.argsort(-scores, axis=None, kind="stable"):
        i, c = divmod(int(flat), k)
        if where[i] < 0 and taken[c] < room:
            where[i], taken[c] = c, taken[c] + 1
    return [[i for i in range(n) if where[i] == c] for c in range(k)]


def _two_sources(groups: list[list[int]], sentences: list[Sentence], v: np.ndarray) -> list[list[int]]:
    """An aspect of one source takes the closest sentence of another source that its own group
    can spare (a group keeps at least two sentences and every source it has)."""
    for g in groups:
        if len(_sources(g, sentences)) > 1:
            continue
        centroid = _unit(v[g].mean(axis=0, keepdims=True))[0]
        best: tuple[float, int, list[int]] | None = None
        for other in groups:
            if other is g or len(other) <= 2:
                continue
            counts = Counter(sentences[i].source for i in other)
            for i in other:
                if sentences[i].source != sentences[g[0]].source and counts[sentences[i].source] > 1:
                    score = float(v[i] @ centroid)
                    if best is None or score > best[0]:
                        best = (score, i, other)
        if best is not None:
            best[2].remove(best[1])
            g.append(best[1])
            g.sort()
    return groups


def name_groups(
    groups: list[list[int]],
    sentences: list[Sentence],
    question: str,
    subject: str,
    titles: list[str],
    rarity: Callable[[str], float] | None = None,
    centroid_of: Callable[[list[int]], np.ndarray] | None = None,
    term_vectors: Callable[[list[str]], np.ndarray] | None = None,
    phrase: Callable[[list[str]], bool] | None = None,
    titled: Callable[[list[str]], Iterable[str]] | None = None,
) -> list[Aspect]:
    """Each group's name: its most distinctive words (c-TF-IDF: in several of its sentences, from
    several sources, in few other groups; rarer in the whole corpus by `rarity`, a stem's inverse
    document frequency), those the question says counting more; words no other aspect's name has
    (a group whose shared words all name others is named by its own rarest words, as a group of one
    sentence is); never an article's title alone unless the question names it (`terms.title_alone`, among
    `titles` and the title index `titled`): such a name takes one more of the group's words.
    `phrase` says whether words (as written) read as a noun phrase (deepresearch.research.nouns): a
    term that does not ("refers", "largest") names nothing."""
    skip = frozenset(stems(tokens(subject)))
    asked = set(stems(_content(question)))
    said: list[Counter[str]] = []
    spread: list[dict[str, set[str]]] = []
    surface: dict[str, Counter[str]] = {}
    for g in groups:
        c: Counter[str] = Counter()
        where: dict[str, set[str]] = {}
        for i in g:
            seen = set()
            for key, w in terms(sentences[i].text, skip):
                surface.setdefault(key, Counter())[w] += 1
                where.setdefault(key, set()).add(sentences[i].source)
                if key not in seen:  # a term counts once a sentence: it is shared by sentences
                    seen.add(key)
                    c[key] += 1
        said.append(c)
        spread.append(where)
    df = Counter(key for c in said for key in c)
    title_keys = {" ".join(stems(_content(bare_title(t)))) for t in titles if not names_title(question, t)}
    used: set[str] = set()
    out: list[Aspect] = []
    for g, c, where in zip(groups, said, spread):
        ranked = []  # every term of the group, best first
        for key, n in c.items():
            parts = key.split()
            weight = n * math.log(1 + len(groups) / df[key]) * (1.3 if len(parts) > 1 else 1.0)
            weight *= 1.0 + 0.5 * min(len(where[key]) - 1, 2)  # shared by sources, not one article's
            if rarity is not None:
                weight *= min(RARITY_CAP, max(0.1, min(rarity(p) for p in parts))) / RARITY_CAP
            if asked & set(parts):
                weight *= QUESTION_WEIGHT
            ranked.append((weight, key))
        ranked.sort(key=lambda x: (-x[0], x[1]))
        if phrase is not None:
            ranked = [(w, k) for w, k in ranked if phrase(written(surface[k]))]
        # a word of one sentence is no shared word (unless the question says it)
        split = [(w, k) for w, k in ranked if c[k] > 1 or len(k.split()) == 1 and asked & {k}]
        shared = _closest(split, g, surface, centroid_of, term_vectors)
        own = _closest([x for x in ranked if x not in split], g, surface, centroid_of, term_vectors)
        chosen: list[str] = []
        for key in shared:
            words = set(key.split())
            if key in used or any(words & set(k.split()) for k in chosen):
                continue
            chosen.append(key)
            # a name that is an article's title alone names the article, not an aspect: one more word
            if len(chosen) >= NAME_TERMS and not any(k in title_keys for k in chosen[:1]) or len(chosen) > NAME_TERMS:
                break
        if not chosen:  # no shared word is free: the group's own rarest words, before one naming another aspect
            rarest = [k for k in _rarest(c, used, rarity) if phrase is None or phrase(written(surface[k]))]
            # with meaning, the closest of the rarest few to what the group says: the rarest word of one
            # sentence (a star's name, a crater's) does not say what the group is about
            rarest = _closest([(1.0, k) for k in rarest], g, surface, centroid_of, term_vectors)
            chosen = rarest[:NAME_TERMS] or shared[:1]
        texts = [sentences[i].text for i in g]
        if chosen and title_alone(_joined([shown(surface[k], texts) for k in chosen]), question, titles, titled):
            chosen += (_fresh(shared + own, used, chosen) or _fresh(shared + own, set(), chosen))[:1]
        chosen = chosen or [f"part {len(out) + 1}"]
        used.update(chosen)
        named = [shown(surface[k], texts) if k in surface else k for k in chosen]
        name = _joined(named)
        out.append(
            Aspect(name=name[:1].upper() + name[1:], terms=named, members=list(g), sources=_sources(g, sentences))
        )
    return out


def _closest(
    scored: list[tuple[float, str]],
    members: list[int],
    surface: dict[str, Counter[str]],
    centroid_of: Callable[[list[int]], np.ndarray] | None,
    term_vectors: Callable[[list[str]], np.ndarray] | None,
) -> list[str]:
    """The keys, best scored first; with meaning, the best few closest in meaning to what the group
    says lead (as KeyBERT names a text)."""
    if centroid_of is None or term_vectors is None or not scored:
        return [k for _w, k in scored]
    top = scored[:CANDIDATES]
    close = term_vectors([surface[k].most_common(1)[0][0] for _w, k in top]) @ centroid_of(members)
    best = max(w for w, _k in top)
    lead = sorted(
        ((w / best + MEANING_WEIGHT * float(x), k) for (w, k), x in zip(top, close)), key=lambda x: (-x[0], x[1])
    )
    return [k for _w, k in lead + scored[CANDIDATES:]]


def _rarest(said: Counter[str], used: set[str], rarity: Callable[[str], float] | None) -> list[str]:
    """A group's own words that no aspect's name has (none shared by its sentences, or every one
    shared naming another aspect): the rarest first."""
    keys = [k for k in said if k not in used and len(k.split()) == 1]
    if rarity is None:
        return sorted(keys)
    return sorted(keys, key=lambda k: (-rarity(k), k))


def _fresh(keys: list[str], used: set[str], chosen: list[str]) -> list[str]:
    """The keys no aspect's name has yet and sharing no word with `chosen`, each word once, in order."""
    out: list[str] = []
    for k in keys:
        if k not in used and not any(set(k.split()) & set(x.split()) for x in chosen + out):
            out.append(k)
    return out


def _joined(named: list[str]) -> str:
    return " and ".join(named) if len(named) < 3 else f"{', '.join(named[:-1])} and {named[-1]}"


def aspects(
    question: str,
    subject: str,
    articles: list[tuple[str, str]],
    sim: Similarity,
    k: int,
    rarity: Callable[[str], float] | None = None,
    phrase: Callable[[list[str]], bool] | None = None,
    titled: Callable[[list[str]], Iterable[str]] | None = None,
    least: int = 1,
) -> tuple[list[Aspect], list[Sentence]]:
    """The aspects of the question in `articles` ((title, text), the subject's first), best first:
    closest in meaning to the question; `rarity`, `phrase` and `titled` as `name_groups` takes them;
    at least `least` aspects where the sentences allow (see `group`)."""
    sentences = sentences_of(articles)
    if len(sentences) < 2 * k:
        k = max(1, len(sentences) // 2)
    if not sentences:
        return [], []
    v = meaning(sentences, sim, subject)
    groups = group(sentences, v, k, least)
    raw = meaning(sentences, sim, subject, desource=0.0)
    embedded = sim.embedder is not None

    def centroid_of(members: list[int]) -> np.ndarray:
        return _unit(raw[members].mean(axis=0, keepdims=True))[0]

    named = name_groups(
        groups,
        sentences,
        question,
        subject,
        [t for t, _ in articles],
        rarity,
        centroid_of if embedded else None,
        (lambda forms: np.asarray(sim.vectors(forms))) if embedded else None,
        phrase,
        titled,
    )
    if embedded:
        qv = np.asarray(sim.vectors([question]))[0]
        closeness = [float(centroid_of(a.members) @ qv) for a in named]
        named = [a for _c, a in sorted(zip(closeness, named), key=lambda x: -x[0])]
    return named, sentences
