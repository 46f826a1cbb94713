"""A comparison's sections as aspects the compared things share: each section compares them on one.

A deep comparison ("How do X and Y differ?") written one section per thing cites one article a
section: nothing in it compares. Here the sentences of every compared thing's article, and of the
few articles closest in meaning to the question about each (`explore.related_titles`), are grouped
by meaning as a broad question's are (deepresearch.research.aspects, its subject every compared
thing's name), so that what the articles say of the same thing falls together; each group is a
section named by the words its sentences share.

- Every section holds a sentence of each compared thing's article where that article can spare one:
  an aspect lacking a thing takes that thing's sentence closest in meaning to it from the aspect that
  holds most of the thing's sentences (which keeps at least one). So each section compares the
  things on its aspect, from at least two sources, and every compared thing is cited.
- An aspect that holds none of the compared things' sentences (a related article's own topic) is no
  part of the comparison and is left out.
- Each section searches for the compared things and the related articles its sentences come from;
  deepresearch.research.aspect_report writes it, no sentence in two sections.
"""

from __future__ import annotations

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.aspects import Aspect, Sentence, _unit, aspects, meaning
from deepresearch.research.explore import article_text, related_titles, subject_text
from deepresearch.research.nouns import word_use_for
from deepresearch.text.words import tokens
from deepresearch.understanding.linking import concept, linker_for

RELATED_EACH = 2  # the related articles drawn on for each compared thing (closest to the question first)


def comparison_outline(
    question: str,
    things: list[dict],
    backend,
    known: set[str],
    sections: int,
    sim: Similarity,
    related: int = RELATED_EACH,
) -> list[dict]:
    """The sections of a comparison of `things` (the question's compared concepts), each an aspect
    they share; empty when a thing's own document is not found or the material gives fewer than two
    aspects (the caller then writes a section per thing)."""
    if len(things) < 2 or backend is None:
        return []
    own: list[tuple[str, str]] = []
    for c in things:
        text = subject_text(c, backend)
        if not text:
            return []
        own.append((c.get("title") or c["name"], text))
    titles = [t for t, _ in own]
    articles = list(own)
    seen = set(titles) | known
    for title, text in own:
        for t in related_titles(question, title, text, backend, seen, sim, limit=related, by_meaning=True):
            if t not in seen and (body := article_text(t, backend)):
                articles.append((t, body))
                seen.add(t)
    linker = linker_for(backend)
    use = word_use_for(linker)
    subject = " ".join(c["name"] for c in things)
    found, sentences = aspects(
        question,
        subject,
        articles,
        sim,
        sections,
        linker.weight if linker else None,
        use.noun_phrase if use else None,
        linker.exact_titles if linker else None,
        least=2,  # a comparison of one aspect would fall back to a section per thing, each of one source
    )
    if len(found) < 2:
        return []
    found = each_thing(found, sentences, titles, meaning(sentences, sim, subject))
    found = of_things(found, sentences, titles)
    if len(found) < 2:
        return []
    by_title = {c.get("title") or c["name"]: c for c in things}
    names = " and ".join(c["name"] for c in things)
    out = []
    for a in found:
        members = sorted(a.members, key=lambda i: (sentences[i].source not in titles, i))
        sources = list(dict.fromkeys(sentences[i].source for i in members))
        concepts = list(things) + [_related(t, things[0]) for t in sources if t not in by_title]
        out.append(
            {
                "title": a.name,
                "key_question": f"How do {names} compare in {' and '.join(a.terms)}?"[:300],
                "concepts": concepts,
                "aspect": {
                    "terms": a.terms,
                    "subject": subject,
                    "things": titles,
                    "members": [[sentences[i].source, sentences[i].pos] for i in a.members],
                },
            }
        )
    return out


def each_thing(found: list[Aspect], sentences: list[Sentence], titles: list[str], v: np.ndarray) -> list[Aspect]:
    """Every aspect with a sentence of each of `titles` (the compared things' articles): an aspect
    lacking one takes that article's sentence closest in meaning to the aspect, from the aspect that
    holds most of that article's sentences, when that one keeps at least one of them."""
    for a in found:
        for t in titles:
            if not a.members or any(sentences[i].source == t for i in a.members):
                continue
            centroid = _unit(v[a.members].mean(axis=0, keepdims=True))[0]
            counts = [sum(sentences[i].source == t for i in b.members) for b in found]
            donor = found[int(np.argmax(counts))]
            if donor is a or max(counts) < 2:
                continue
            mine = [i for i in donor.members if sentences[i].source == t]
            best = max(mine, key=lambda i: float(v[i] @ centroid))
            donor.members.remove(best)
            a.members.append(best)
    for a in found:
        a.members.sort()
        a.sources = list(dict.fromkeys(sentences[i].source for i in a.members))
    return found


def of_things(found: list[Aspect], sentences: list[Sentence], titles: list[str]) -> list[Aspect]:
    """The aspects holding a sentence of a compared thing's article: one of related articles only
    (their own topic) compares nothing."""
    return [a for a in found if any(sentences[i].source in titles for i in a.members)]


def _related(title: str, via: dict) -> dict:
    c = concept(title, " ".join(tokens(title)), title, origin="related")
    c["via"] = via["name"]
    return c
