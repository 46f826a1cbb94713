"""A question about how one thing bears on another (two subjects, not compared: how one changed,
sustains or affects the other), planned as aspects of the relation: the first thing's side, the
other's side, and the sentences that link them.

- The material: both things' documents and the documents closest in meaning to the whole question,
  among those each thing's text names, those nearest each thing, and the question's own search (the
  backend's hybrid search); then the documents the linking sentences name (what the relation goes
  through: the movements a machine's spread shaped), as a reader follows a text's names.
- The linking sentences are those that name both things (a thing's own document names it), then
  those closest in meaning to what the question asks of them, its words without the things' names
  ("How did ... change ...?"), each closer to it than the sentences are on average.
- Every other sentence is on the side of the thing whose own document it is closest to in meaning.
- The linking sentences make the first sections, each side's the rest (as many as its share of the
  sentences, at least one a side that has two sentences), every part grouped by meaning and named by
  the words its sentences share (deepresearch.research.aspects), never by an article's title alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.asked_aspects import plain
from deepresearch.research.aspects import (
    Aspect,
    Sentence,
    _two_sources,
    _unit,
    group,
    meaning,
    name_groups,
    sentences_of,
)
from deepresearch.research.explore import (
    MIN_SHARE,
    MIN_SIMILARITY,
    SEARCHED,
    article_text,
    aspect_sections,
    related_titles,
    subject_text,
)
from deepresearch.research.nouns import word_use_for
from deepresearch.text.words import bare_title, stems, tokens, without_words
from deepresearch.understanding.linking import linker_for, mentions

POOL = 14  # the documents the outline is drawn from, both things' own among them
FOLLOWED = 4  # the documents the linking sentences name that join the pool
LINK_SECTIONS = 2  # the sections of linking sentences at most
LINK = "link"  # the part of the sections that link the things (the others are each thing's side)


def relation_outline(
    question: str, sides: list[dict], backend, known: set[str], sections: int, sim: Similarity, pool: int = POOL
) -> list[dict]:
    """The sections of a question on how `sides` (its subjects, the first acting on the others) bear
    on each other: the linking sentences' aspects, then each side's. Empty when the first thing's own
    document is not found or the material gives fewer than two aspects."""
    if backend is None or len(sides) < 2:
        return []
    own = [(c.get("title") or c["name"], subject_text(c, backend)) for c in sides]
    if not own[0][1]:
        return []
    titles = [t for t, _ in own]
    names = [c["name"] for c in sides]
    linker = linker_for(backend)
    floor = MIN_SIMILARITY if sim.embedder is not None else MIN_SHARE
    articles = [(t, x) for t, x in own if x] + _closest(question, own, backend, known, sim, pool - len(own), floor)
    sentences = sentences_of(articles)
    links = _linking(question, sentences, titles, names, sim)
    if linker is not None:  # what the linking sentences name: what the relation goes through
        have = {t.lower() for t, _ in articles} | {k.lower() for k in known}
        named = [t for i in links for t in mentions(sentences[i].text, linker, have)]
        for t in list(dict.fromkeys(named))[:FOLLOWED]:
            if body := article_text(t, backend):
                articles.append((t, body))
        sentences = sentences_of(articles)
        links = _linking(question, sentences, titles, names, sim)
    parted = relation_aspects(question, sentences, titles, names, links, sim, sections, linker)
    if len(parted) < 2:
        return []
    found = [a for a, _part in parted]
    subjects = {t: c for t, c in zip(titles, sides)}
    both = " and ".join(names)

    def key_question(a: Aspect) -> str:
        return f"What is there to know about {' and '.join(a.terms)} for {both}?"

    out = aspect_sections(
        found, sentences, [t for t, _ in articles], subjects, sides[0], key_question, {"subject": " ".join(names)}
    )
    for section, (_a, part) in zip(out, parted):
        section["aspect"]["part"] = part
    return out


def _closest(
    question: str, own: list[tuple[str, str]], backend, known: set[str], sim: Similarity, n: int, floor: float
) -> list[tuple[str, str]]:
    """The `n` documents closest in meaning to the question (at least `floor` close; fewer, the
    closest anyway, when too few are) among those near each thing and the question's own search."""
    skip = {t for t, _ in own} | known
    found: list[str] = []
    for title, text in own:
        if text:
            found += related_titles(question, title, text, backend, skip, sim, limit=n)
    try:
        found += [r.title for r in backend.search(question, SEARCHED)]
    except Exception:  # noqa: BLE001 - the documents near each thing remain
        pass
    lowered = {t.lower() for t in skip}
    candidates = [t for t in dict.fromkeys(found) if t.lower() not in lowered]
    linker = linker_for(backend)
    # each read by its opening, as the linker holds it (the document looked up only when it does not)
    known_text = linker.text_of if linker is not None else {}
    openings = [known_text.get(t) or article_text(t, backend) for t in candidates]
    scores = sim.scores(question, [f"{t}. {x[:400]}" for t, x in zip(candidates, openings)])
    ranked = sorted(zip(scores, range(len(candidates))), key=lambda p: (-p[0], p[1]))
    close = [i for s, i in ranked if s >= floor]
    out: list[tuple[str, str]] = []
    for i in close if len(close) >= min(n, 2) else [i for _s, i in ranked]:
        if len(out) < n and (body := article_text(candidates[i], backend)):
            out.append((candidates[i], body))
    return out


def _names(title: str, name: str) -> frozenset[str]:
    return frozenset(stems(tokens(bare_title(title)))) | frozenset(stems(tokens(name)))


def _linking(
    question: str, sentences: list[Sentence], titles: list[str], names: list[str], sim: Similarity
) -> list[int]:
    """The sentences that link the things: those that name every one (a thing's own document names
    it), then those closest in meaning to what the question asks of them (its words without their
    names), closer than the sentences are on average; at most an even share of the sections' worth."""
    keys = [_names(t, n) for t, n in zip(titles, names)]
    both = [
        i
        for i, x in enumerate(sentences)
        if all(x.source == t or bool(k) and k <= set(stems(tokens(x.text))) for t, k in zip(titles, keys))
    ]
    mask = frozenset(w for t, n in zip(titles, names) for w in tokens(bare_title(t)) + tokens(n))
    asked = without_words(question, mask)
    v = plain([without_words(x.text, mask) for x in sentences] + [asked], sim)
    scores = v[:-1] @ v[-1]
    mean = float(scores.mean()) if len(scores) else 0.0
    room = max(2, math.ceil(LINK_SECTIONS * len(sentences) / (len(titles) + LINK_SECTIONS + 1)))
    rest = [int(i) for i in np.argsort(-scores, kind="stable") if int(i) not in both and scores[i] > mean]
    return (both + rest)[: max(room, len(both))]


def relation_aspects(
    question: str,
    sentences: list[Sentence],
    titles: list[str],
    names: list[str],
    links: list[int],
    sim: Similarity,
    k: int,
    linker,
) -> list[tuple[Aspect, str]]:
    """The linking sentences' aspects, then each side's (its sentences closest to that thing's own
    document), grouped by meaning and named together; each with its part ("link", or the title of the
    thing whose side it is)."""
    if not sentences:
        return []
    subject = " ".join(names)
    v = meaning(sentences, sim, subject)
    raw = plain([x.text for x in sentences], sim)
    centroids = []
    for t in titles:
        rows = [i for i, x in enumerate(sentences) if x.source == t]
        centroids.append(raw[rows].mean(axis=0) if rows else plain([t], sim)[0])
    side = (raw @ _unit(np.stack(centroids)).T).argmax(axis=1)
    linked = set(links)
    parts = [sorted(linked)] + [
        [i for i in range(len(sentences)) if i not in linked and side[i] == s] for s in range(len(titles))
    ]
    counts = _allotted([len(p) for p in parts], k)
    groups: list[list[int]] = []
    of: list[str] = []  # each group's part: "link", or the title of the thing whose side it is
    for label, part, n in zip([LINK, *titles], parts, counts):
        if n and len(part) >= 2:
            made = [[part[i] for i in g] for g in group([sentences[i] for i in part], v[part], n) if g]
            groups += made
            of += [label] * len(made)
    groups = _two_sources(groups, sentences, v)
    use = word_use_for(linker)
    embedded = sim.embedder is not None

    def centroid_of(members: list[int]) -> np.ndarray:
        return _unit(raw[members].mean(axis=0, keepdims=True))[0]

    term_vectors: Callable[[list[str]], np.ndarray] | None = (
        (lambda forms: np.asarray(sim.vectors(forms))) if embedded else None
    )
    named = name_groups(
        groups,
        sentences,
        question,
        subject,
        list(dict.fromkeys(x.source for x in sentences)),
        linker.weight if linker else None,
        centroid_of if embedded else None,
        term_vectors,
        use.noun_phrase if use else None,
        linker.exact_titles if linker else None,
    )
    return [(a, part) for a, part in zip(named, of) if a.members]


def _allotted(sizes: list[int], k: int) -> list[int]:
    """The sections each part gets: the linking part (the first) up to LINK_SECTIONS by its share of
    the sentences, at least one where it has two sentences; each side likewise by its share, at least
    one where it has two."""
    out = [1 if n >= 2 else 0 for n in sizes]
    while sum(out) < k:
        # one more section to the part with the most sentences a section, among those that can take it
        can = [j for j in range(len(sizes)) if sizes[j] >= 2 * (out[j] + 1) and (j or out[j] < LINK_SECTIONS)]
        if not can:
            break
        best = max(can, key=lambda j: (sizes[j] / (out[j] + 1), -j))
        out[best] += 1
    while sum(out) > k:  # more parts than sections: the smallest sides go
        j = min((j for j in range(1, len(out)) if out[j]), key=lambda j: sizes[j], default=0)
        out[j] -= 1
    return out
