"""Subjects, not vocabulary: which of a question's key phrases are what it is about.

A word of the question is a concept when the question is about it, not because an article has
its name. Dropped: the noun naming the kind of answer ("planet" in "which planet ..."), role
words that reach a subject through another thing ("author" in "the author of X": a bridge),
aspect words ("origins", "beliefs": they shape what a section answers), a generic noun that
qualifies a named thing ("Chemistry" in "the Nobel Prize in Chemistry"), and the words of a
description ("the largest moon in the Solar System"), whose subject is found instead: the
source whose text matches the description best.
"""

from __future__ import annotations

import re

from deepresearch.report.text import STOP
from deepresearch.research.linking import concept, fold, linker_for, stems, tokens
from deepresearch.research.question import (ASPECTS, DESCRIPTORS, PERSON_NOUNS, RELATION_NOUNS, answer_kind,
                                            description_of, singular)

PREPOSITIONS = set("""against without within toward towards upon among amongst despite via per onto unto
across along amid beside besides beyond inside outside throughout underneath unlike""".split())
DESCRIBED_MATCH = 0.6  # share of the description's words the subject's best sentence must hold


def _single_lower(c: dict) -> bool:
    return " " not in (c.get("phrase") or "").strip()


def refine(question: str, found: list[dict], backend=None) -> list[dict]:
    """`found` (key phrases with their token spans `at`) without the question's vocabulary, and
    with the subject the question describes, if any."""
    words = tokens(question)
    _kind, noun = answer_kind(question)
    desc = description_of(question, [c.get("phrase") or "" for c in found]) if _kind != "other" else None
    desc_span = _span_of(words, desc) if desc else None
    if desc_span and any(_capitalized(question, c["at"]) and not (desc_span[0] <= c["at"][0] < desc_span[1])
                         for c in found if c.get("at")):
        desc = desc_span = None  # it names its subject elsewhere ("the Wright brothers ... the first airplane")
    found = _compounds(question, [c for c in found if fold(c.get("phrase") or "") not in PREPOSITIONS], backend)
    kept: list[dict] = []
    described_words: list[dict] = []
    for c in found:
        at = c.get("at") or [0, 0]
        phrase = fold(c.get("phrase") or c["name"])
        single = _single_lower(c)
        head = singular(phrase.split()[-1]) if phrase else ""
        if head == noun and not _capitalized(question, at):
            continue  # the kind of answer asked for ("which musical instrument ...")
        if single and (head in ASPECTS or phrase in ASPECTS
                       or (head in RELATION_NOUNS and not _capitalized(question, at))):
            continue  # the answer's kind, an aspect, or a role word: no subject of its own
        if single and not _capitalized(question, at) and at[0] >= 2 and words[at[0] - 1] in ("in", "of") and \
                any(k.get("at") and k["at"][1] == at[0] - 1 for k in kept):
            continue  # qualifies the named thing before it ("Nobel Prize in Chemistry")
        if desc_span and desc_span[0] <= at[0] and at[1] <= desc_span[1]:
            described_words.append(c)  # a word of the description: its subject is looked up instead
            continue
        kept.append(c)
    if desc and backend is not None:
        subject = described_subject(desc, backend, {(c.get("title") or c["name"]).lower() for c in kept})
        if subject:
            named = [c for c in described_words if (c.get("title") or c["name"]) == subject["name"]]
            kept.append(named[0] if named else subject)  # the description names it after all
    return kept


def _compounds(question: str, found: list[dict], backend) -> list[dict]:
    """Two lower-case words in a row that each linked on their own are one compound noun ("honey
    bees" is not "Honey" and "Bee"): linked to a title holding both ("Western honey bee") when
    there is one, else one unlinked concept."""
    linker = linker_for(backend) if backend is not None else None
    out: list[dict] = []
    for c in found:
        prev = out[-1] if out else None
        if prev and prev.get("at") and c.get("at") and prev["at"][1] == c["at"][0] and _single_lower(prev) \
                and _single_lower(c) and not _capitalized(question, prev["at"]) and not _capitalized(question, c["at"]):
            phrase = f"{prev['phrase']} {c['phrase']}"
            titles = linker.partial_titles(phrase.split()) if linker else []
            title = min(titles, key=len) if titles else None
            out[-1] = concept(title or phrase, phrase, title) | {"at": [prev["at"][0], c["at"][1]]}
            continue
        out.append(c)
    return out


def _capitalized(question: str, at: list[int]) -> bool:
    raw = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question)
    return 0 < at[0] < len(raw) and raw[at[0]][:1].isupper()


def _span_of(words: list[str], desc: str) -> tuple[int, int] | None:
    """The token span of the question the description covers."""
    want = desc.split()
    if not want:
        return None
    first = [i for i, w in enumerate(words) if w == want[0]]
    last = [i for i, w in enumerate(words) if w == want[-1]]
    if not first or not last:
        return None
    a = first[0]
    b = max((i for i in last if i >= a), default=None)
    return (a, b + 1) if b is not None else None


def described_subject(desc: str, backend, known: set[str]) -> dict | None:
    """The source whose text matches the description best (its sentence holding most of the
    description's words, the superlative among them), as a concept; None if none matches."""
    want = [w for w in desc.split() if w not in STOP or w.isdigit()]
    if not want:
        return None
    want_stems = set(stems(want))
    must = {s for s, w in zip(stems(want), want) if w in DESCRIPTORS or w.isdigit()}
    try:
        results = backend.search(desc, 8)
    except Exception:  # noqa: BLE001 - finding the subject is best effort; the search still runs
        return None
    best = None
    for rank, r in enumerate(results):
        text = f"{r.title}. {r.text}"
        for sent in re.split(r"(?<=[.!?;])\s+", " ".join(text.split())):
            have = set(stems(tokens(sent)))
            if must - have:
                continue
            share = len(want_stems & have) / len(want_stems)
            if share >= DESCRIBED_MATCH and (best is None or (share, -rank) > best[0]):
                best = ((share, -rank), r, sent)
    if best is None:
        found = _scan_titles(backend, want, want_stems, must)
        if found is None:
            return None
        title, sent = found
        if title.lower() in known:
            return None
        found_concept = concept(title, " ".join(tokens(title)), title, origin="described")
        found_concept["description"], found_concept["sentence"] = desc, sent[:400]
        return found_concept
    _, r, sent = best
    title = r.title if getattr(backend, "titles", None) else None
    if (title or r.title).lower() in known:
        return None
    found_concept = concept(r.title, " ".join(tokens(r.title)), title, origin="described")
    found_concept["description"] = desc
    found_concept["sentence"] = sent[:400]
    return found_concept


def _scan_titles(backend, want: list[str], want_stems: set[str], must: set[str]) -> tuple[str, str] | None:
    """A backend with titles: the document whose opening holds every word of the description, for
    what its ranking cannot find (BM25 drops one-character words such as "1")."""
    titles_fn, texts_fn = getattr(backend, "titles", None), getattr(backend, "link_texts", None)
    if titles_fn is None or texts_fn is None or not must:
        return None
    # a number with the word before it, as the description says it ("atomic number 1", not "group 1")
    pattern = [re.compile(r"\b" + (re.escape(want[i - 1]) + r"\s+" if i else "") + re.escape(w) + r"\b")
               for i, w in enumerate(want) if w.isdigit()]
    best = None
    for title, text in zip(titles_fn(), texts_fn()):
        head = fold(text[:300])
        if not all(p.search(head) for p in pattern):
            continue
        share = len(want_stems & set(stems(tokens(head)))) / len(want_stems)
        if share >= 1.0 and (best is None or len(title) < len(best[0])):
            best = (title, " ".join(text[:300].split()))
    return best


def plain(concepts: list[dict]) -> list[dict]:
    """The concepts without their token spans (state keeps what the report needs)."""
    return [{k: v for k, v in c.items() if k != "at"} for c in concepts]


__all__ = ["refine", "described_subject", "plain", "PERSON_NOUNS"]
