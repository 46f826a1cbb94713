"""A deep report whose sections are aspects (deepresearch.research.aspects), written from every
retrieved source that speaks to each, extractively: each sentence a source's own, whole and cited.

- A comparison's sections (their aspects name the `things` compared) draw on the other sources
  the sections found only when they name a compared thing.
- Every sentence of the run's sources goes to one section at most: a sentence the planner grouped
  under an aspect stays there; any other goes to the aspect it is closest to in meaning (when it is
  close enough), each section taking at most its share, so no section swallows the report.
- A section of one source takes the closest sentence of another source that can spare one: at
  least two sources a section where the sources have them. A sentence the section could not write
  (a pronoun the report cannot name, without the sentence before it) is no source's there.
- Within a section the sources come by how close their sentences are to the aspect, each source's
  sentences in its own order: a passage reads as its source wrote it, the closest first.
- The introduction says what the report covers (a note: it states no fact); the conclusion says
  which sources agree on each aspect (two sources' sentences close in meaning) and which of the
  question's words no source used speaks to (notes, each naming the cited sources).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.grounding import cite
from deepresearch.report.subjects import dangling, with_subject
from deepresearch.research.asked_words import asked_words, closest_to_asked
from deepresearch.research.aspects import Sentence, _unit, balanced, meaning, sentences_of
from deepresearch.research.terms import names_title
from deepresearch.text.safe import md_text
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens
from deepresearch.understanding.linking import SCAFFOLD

FLOOR = 0.3  # a sentence less close than this (a cosine) to every aspect goes in none
RELATED = 0.3  # a source the sections found, not the aspects' own, is used when this close to the question
MAX_SENTENCES = 12  # a section's sentences at most
SHARE = 1.6  # a section takes at most this many times its even share of the sentences
AGREE = 0.6  # two sources' sentences this close in meaning say the same thing
PARAGRAPH = 4  # sentences a paragraph at most


@dataclass
class Written:
    text: str
    keys: list[str]  # the sources it cites, by key


def is_aspect_plan(plan: dict[str, Any]) -> bool:
    return any(s.get("aspect") for s in plan.get("sections", []))


def compose(
    plan: dict[str, Any],
    evidence: list[dict[str, Any]],
    text_of: Callable[[dict], str],
    sim: Similarity,
    avoid: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[list[Written | None], dict[str, Any]]:
    """Each section's text (None for a section that is no aspect), and what the introduction and
    the conclusion say (see `frame_notes`)."""
    sections = plan["sections"]
    subject = next((s["aspect"].get("subject", "") for s in sections if s.get("aspect")), "")
    aspects = [i for i, s in enumerate(sections) if s.get("aspect")]
    planned = {t for j in aspects for t, _pos in sections[j]["aspect"].get("members", [])}
    # the sources the aspects were drawn from, and any other the sections found that is about the question
    others = [s for s in evidence if s["title"] not in planned]
    lead = [f"{s['title']}. {text_of(s)[:400]}" for s in others]
    # a comparison's other sources speak of a thing it compares: near the question ("Milan" for two
    # islands of Italy) is not about them
    things = list(dict.fromkeys(t for j in aspects for t in sections[j]["aspect"].get("things", [])))
    near = {
        s["title"]
        for s, x in zip(others, sim.scores(question_of(plan), lead))
        if x >= RELATED and (not things or any(names_title(text_of(s), t) for t in things))
    }
    kept = [s for s in evidence if s["title"] in planned or s["title"] in near]
    by_title = {s["title"]: s for s in kept}
    sentences = [x for x in sentences_of([(s["title"], text_of(s)) for s in kept]) if x.text not in avoid]
    if not sentences or not aspects:
        return [None] * len(sections), {}
    v = meaning(sentences, sim, subject, desource=0.0)
    where = {(x.source, x.pos): i for i, x in enumerate(sentences)}
    fixed: dict[int, int] = {}  # sentence -> column (an aspect among `aspects`)
    for col, j in enumerate(aspects):
        for title, pos in sections[j]["aspect"].get("members", []):
            if (title, pos) in where:
                fixed.setdefault(where[(title, pos)], col)
    centroids = []
    for col, j in enumerate(aspects):
        rows = [i for i, c in fixed.items() if c == col]
        if rows:
            centroids.append(_unit(v[rows].mean(axis=0, keepdims=True))[0])
        else:  # its members were not retrieved: what its name says
            centroids.append(meaning([Sentence(sections[j]["title"], "", 0)], sim, subject, desource=0.0)[0])
    scores = v @ np.stack(centroids).T
    free = [i for i in range(len(sentences)) if i not in fixed]
    room = math.ceil(SHARE * len(sentences) / len(aspects))
    groups: list[list[int]] = [[i for i, col in fixed.items() if col == k] for k in range(len(aspects))]
    left = [max(0, room - len(g)) for g in groups]
    if free:
        placed = balanced(scores[free], max(left + [0]))
        for k, rows in enumerate(placed):
            for r in rows:
                i = free[r]
                if scores[i, k] >= FLOOR and left[k] > 0:
                    groups[k].append(i)
                    left[k] -= 1
    # a sentence whose pronoun the report cannot name reads only right after its source's sentence before
    lone = {
        i
        for g in groups
        for i in g
        if dangling(sentences[i].text, sentences[i].source, text_of(by_title[sentences[i].source]))
    }
    groups = _writable(groups, sentences, lone)
    if things:  # each section compares: a sentence of every compared thing's source where one can be spared
        groups = _each_thing(groups, sentences, scores, lone, things)
    groups = _two_sources(groups, sentences, scores, lone, empty=bool(things))
    keep: set[int] = set()
    if things:  # each compared thing's sentence on what the question asks of them is written, in some section
        keep = asked_sentences(question_of(plan), things, sentences, sim, lone)
        for i in keep - {i for g in groups for i in g}:
            groups[int(np.argmax(scores[i]))].append(i)
    out: list[Written | None] = [None] * len(sections)
    agree: list[tuple[str, list[str]]] = []
    for k, j in enumerate(aspects):
        ordered = _ordered(groups[k], sentences, scores[:, k], keep)
        rows = [i for n, i in enumerate(ordered) if n < MAX_SENTENCES or i in keep]
        if not rows:
            continue
        written = _write(rows, sentences, by_title, text_of)
        if not written.text:
            continue  # every sentence continued one left out: the section's own research stands
        out[j] = written
        pair = _agreeing(rows, sentences, v)
        if pair:
            agree.append((sections[j]["title"], pair))
    return out, {"agree": agree}


def question_of(plan: dict[str, Any]) -> str:
    return plan.get("question") or plan.get("title", "")


def _writable(groups: list[list[int]], sentences: list[Sentence], lone: set[int]) -> list[list[int]]:
    """Each group without the sentences `_write` would leave out: those of `lone` whose source's
    sentence before is not in the group (so a section whose other source said only "He has been
    called ..." takes another source's sentence instead of standing on one source)."""
    out = []
    for g in groups:
        kept: set[tuple[str, int]] = set()  # a chain ("He ... His ...") stands only on a sentence kept
        for i in sorted(g, key=lambda i: (sentences[i].source, sentences[i].pos)):
            if i not in lone or (sentences[i].source, sentences[i].pos - 1) in kept:
                kept.add((sentences[i].source, sentences[i].pos))
        out.append([i for i in g if (sentences[i].source, sentences[i].pos) in kept])
    return out


def _each_thing(
    groups: list[list[int]], sentences: list[Sentence], scores: np.ndarray, lone: set[int], things: list[str]
) -> list[list[int]]:
    """A comparison's section lacking a compared thing's source (its sentence was the answer's, or
    could not be written) takes that thing's sentence closest to it that reads by itself, from a
    section holding two or more of that thing's sentences, or one no section holds. A section left
    with no sentence (each was the answer's or could not be written) is filled so, on its aspect."""
    for k, g in enumerate(groups):
        for t in things:
            if any(sentences[i].source == t for i in g):
                continue
            placed = {i for h in groups for i in h}
            spare: list[tuple[int, int | None]] = [
                (i, None) for i, x in enumerate(sentences) if x.source == t and i not in placed
            ]
            for m, other in enumerate(groups):
                mine = [i for i in other if sentences[i].source == t]
                if m != k and len(mine) > 1:
                    spare += [(i, m) for i in mine]
            spare = [
                (i, m) for i, m in spare if i not in lone and (m is None or not _led(i, groups[m], sentences, lone))
            ]
            if spare:
                best, donor = max(spare, key=lambda x: float(scores[x[0], k]))
                if donor is not None:
                    groups[donor].remove(best)
                g.append(best)
    return groups


def _two_sources(
    groups: list[list[int]], sentences: list[Sentence], scores: np.ndarray, lone: set[int], empty: bool = False
) -> list[list[int]]:
    """A section of fewer than two sources takes the closest sentence of another source whose section
    can spare it (it keeps every source it has, or two or more), one that reads by itself (not of
    `lone`), until it has two sources or none can be spared; with `empty`, a section left with no
    sentence too (a comparison's: else the section's own research, one source, would stand)."""
    for k, g in enumerate(groups):
        while (g or empty) and len(have := {sentences[i].source for i in g}) < 2:
            best: tuple[float, int, int] | None = None
            for m, other in enumerate(groups):
                if m == k or len(other) <= 2:
                    continue
                counts: dict[str, int] = {}
                for i in other:
                    counts[sentences[i].source] = counts.get(sentences[i].source, 0) + 1
                many = len(counts) > 2  # it keeps two sources without any one of them
                for i in other:
                    if i not in lone and sentences[i].source not in have and (many or counts[sentences[i].source] > 1):
                        if best is None or scores[i, k] > best[0]:
                            best = (float(scores[i, k]), i, m)
            if best is None:
                break
            groups[best[2]].remove(best[1])
            g.append(best[1])
    return groups


def _led(i: int, group: list[int], sentences: list[Sentence], lone: set[int]) -> bool:
    """Does a sentence of `group` that reads only after `i` (of `lone`: "He ...") continue it?"""
    x = sentences[i]
    return any(j in lone and sentences[j].source == x.source and sentences[j].pos == x.pos + 1 for j in group)


def asked_sentences(
    question: str, things: list[str], sentences: list[Sentence], sim: Similarity, lone: set[int]
) -> set[int]:
    """Each compared thing's sentence closest to what the question asks of them (its words without
    the things' names: "the areas of"; deepresearch.research.asked_words), one that reads by itself."""
    words = asked_words(question, things)
    out: set[int] = set()
    for t in things:
        rows = [i for i, x in enumerate(sentences) if x.source == t and i not in lone]
        out.update(rows[r] for r in closest_to_asked(words, [sentences[i].text for i in rows], sim))
    return out


def _ordered(
    rows: list[int],
    sentences: list[Sentence],
    closeness: np.ndarray,
    keep: set[int] = frozenset(),  # type: ignore[assignment]
) -> list[int]:
    """The sources by how close their sentences are to the aspect, each source's sentences in its
    order; a source's closest sentences kept when the section is cut, those of `keep` first."""
    by_source: dict[str, list[int]] = {}
    for i in rows:
        by_source.setdefault(sentences[i].source, []).append(i)
    order = sorted(by_source, key=lambda t: -max(float(closeness[i]) for i in by_source[t]))
    out: list[int] = []
    per = max(2, MAX_SENTENCES // max(1, len(order)))  # each source gets its turn before one says more
    for t in order:
        best = sorted(by_source[t], key=lambda i: (i not in keep, -float(closeness[i])))[:per]
        out += sorted(best, key=lambda i: sentences[i].pos)
    return out


def _write(
    rows: list[int], sentences: list[Sentence], by_title: dict[str, dict], text_of: Callable[[dict], str]
) -> Written:
    paragraphs: list[list[str]] = [[]]
    keys: list[str] = []
    before: Sentence | None = None  # the sentence written last
    for i in rows:
        x = sentences[i]
        source = by_title[x.source]
        follows = before is not None and before.source == x.source and before.pos == x.pos - 1
        if not follows and dangling(x.text, x.source, text_of(source)):
            continue  # "They are ..." after another source's sentence would speak of that one's subject
        if before is not None and (
            len(paragraphs[-1]) >= PARAGRAPH or x.source != before.source and len(paragraphs[-1]) >= 2
        ):
            paragraphs.append([])
        paragraphs[-1].append(cite(with_subject(x.text, x.source, text_of(source)), source["id"]))
        if source["key"] not in keys:
            keys.append(source["key"])
        before = x
    return Written("\n\n".join(" ".join(p) for p in paragraphs if p), keys)


def _agreeing(rows: list[int], sentences: list[Sentence], v: np.ndarray) -> list[str]:
    """Two sources of the section whose sentences say nearly the same thing, if any."""
    best: tuple[float, str, str] | None = None
    for a in rows:
        for b in rows:
            if sentences[a].source < sentences[b].source:
                s = float(v[a] @ v[b])
                if s >= AGREE and (best is None or s > best[0]):
                    best = (s, sentences[a].source, sentences[b].source)
    return [best[1], best[2]] if best else []


def frame_notes(
    plan: dict[str, Any], question: str, written: list[Written | None], notes: dict[str, Any], evidence: list[dict]
) -> tuple[str, str]:
    """(the introduction's note on what the report covers, the conclusion's notes)."""
    titles = [md_text(s["title"], 100) for s, w in zip(plan["sections"], written) if w is not None]
    if not titles:
        return "", ""
    intro = f"> **What this report covers:** {'; '.join(titles)}."
    lines = []
    agree = [
        f"on {md_text(t, 100).lower()} ({' and '.join(md_text(a, 80) for a in pair)})"
        for t, pair in notes.get("agree", [])
    ]
    if agree:
        lines.append(f"> **Where the sources agree:** {'; '.join(agree)}.")
    said = set(stems(tokens(" ".join(w.text for w in written if w))))
    asked = [w for w in dict.fromkeys(tokens(question)) if w not in STOP | SCAFFOLD and len(w) > 3]
    unsaid = [w for w in asked if stems([w])[0] not in said]
    if unsaid:
        lines.append(
            f"> **What they do not say:** no sentence used speaks of {', '.join(md_text(w, 40) for w in unsaid)}."
        )
    return intro, "\n>\n".join(lines)
