"""Subjects, not vocabulary: which of a question's key phrases are what it is about.

A word of the question is a concept when the question is about it, not because an article has
its name. Dropped: the noun naming the kind of answer ("planet" in "which planet ..."), role
words that reach a subject through another thing ("author" in "the author of X": a bridge),
aspect words ("origins", "beliefs": they shape what a section answers), a generic noun that
qualifies a named thing ("Glazing" in "the Kestrel Medal in Glazing"), and the words of a
description ("the coldest moon of the ringed planet"), whose subject is found instead: the
source whose text matches the description best.
"""

from __future__ import annotations

import re

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, tokens
from deepresearch.understanding.embedded.described import PREPOSITIONS, described_subject, kind_of_described
from deepresearch.understanding.embedded.nouns import RELATION_NOUNS
from deepresearch.understanding.embedded.question import ASPECTS, DESCRIPTORS, answer_kind, description_of, singular
from deepresearch.understanding.embedded.role_forms import relations_of
from deepresearch.understanding.embedded.spans import is_name_at, name_runs, names_its_head, span_of
from deepresearch.understanding.linking import concept, kinds_for, linker_for

CLAUSE_OPENERS = frozenset({"that", "which", "who"})  # a lower-case word right after one is the clause's verb


def _single_lower(c: dict) -> bool:
    return " " not in (c.get("phrase") or "").strip()


def refine(question: str, found: list[dict], backend=None, described: bool = True) -> list[dict]:
    """`found` (key phrases with their token spans `at`) without the question's vocabulary, and
    with the subject the question describes, if any (none when not `described`)."""
    linker = linker_for(backend) if backend is not None else None
    given = found
    words = tokens(question)
    _kind, noun = answer_kind(question)
    phrases = [c.get("phrase") or "" for c in found]
    desc = description_of(question, phrases) if _kind != "other" and described else None
    # "the architect of Hagia Sophia": a role of a named thing is a bridge unless a description
    # finds the subject ("the process that separates solids from fluids" is filtration's own line)
    roles = relations_of(question, phrases, kinds_for(backend))
    bridge = bool(desc and not any(w in DESCRIPTORS for w in desc.split()) and roles)
    if bridge and any(is_name_at(question, c["at"], linker) for c in found if c.get("at")):
        desc = None  # a name ("Hagia Sophia") is researched, and the relation followed from it
    desc_span = span_of(words, desc) if desc else None
    superlative = bool(desc and any(w in DESCRIPTORS for w in desc.split()))
    if (
        desc_span
        and superlative
        and any(
            is_name_at(question, c["at"], linker) and not (desc_span[0] <= c["at"][0] < desc_span[1])
            for c in found
            if c.get("at")
        )
    ):
        desc = desc_span = None  # it names its subject elsewhere ("the Wright brothers ... the first airplane")
    if (
        desc_span
        and superlative
        and linker is not None
        and names_its_head(words, desc_span, found, linker, kinds_for(backend))
    ):
        desc = desc_span = None  # "the first iPhone" is the iPhone: a named thing, not a described one
    found = _compounds(question, [c for c in found if fold(c.get("phrase") or "") not in PREPOSITIONS], backend)
    kept: list[dict] = []
    described_words: list[dict] = []
    for c in found:
        at = c.get("at") or [0, 0]
        phrase = fold(c.get("phrase") or c["name"])
        single = _single_lower(c)
        head = singular(phrase.split()[-1]) if phrase else ""
        if head == noun and not any(is_name_at(question, [k], linker) for k in range(at[0], at[1])):
            continue  # the kind of answer asked for ("which musical instrument ...", not "citizen Kane")
        if single and (
            head in ASPECTS or phrase in ASPECTS or (head in RELATION_NOUNS and not is_name_at(question, at, linker))
        ):
            continue  # the answer's kind, an aspect, or a role word: no subject of its own
        if (
            single
            and not is_name_at(question, at, linker)
            and at[0] >= 2
            and words[at[0] - 1] in CLAUSE_OPENERS
            and words[at[0] - 2] not in STOP
        ):
            continue  # a relative clause's verb ("the country that borders X"), not the noun in "for which event"
        if (
            single
            and not is_name_at(question, at, linker)
            and at[0] == 2
            and words[:2] in (["which", noun], ["what", noun])
        ):
            continue  # the verb after the noun asked ("which country borders X"), no subject
        if single and not is_name_at(question, at, linker) and at[1] < len(words) and singular(words[at[1]]) in roles:
            continue  # a word qualifying the role after it ("the jazz musician who ..."): the role says it
        if (
            single
            and not is_name_at(question, at, linker)
            and at[0] >= 2
            and words[at[0] - 1] in ("in", "of")
            and any(k.get("at") and k["at"][1] == at[0] - 1 for k in kept)
        ):
            continue  # qualifies the named thing before it ("Nobel Prize in Chemistry")
        if (
            desc_span
            and desc_span[0] <= at[0]
            and at[1] <= desc_span[1]
            and (superlative or (single and not is_name_at(question, at, linker)))
        ):
            # a word of the description: its subject is looked up instead (a name in "which river
            # flows through Baghdad" stays a subject: the answer may be in its text too)
            described_words.append(c)
            continue
        kept.append(c)
    kept = _without_categories(question, kept, backend)
    if desc and backend is not None:
        raw = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question)
        names = [" ".join(raw[a:b]) for a, b in name_runs(question, linker)]
        # a thing named as typed in lower case ("which river is delhi on") is named all the same
        names += [c["name"] for c in kept if c.get("title") and c["name"] not in names]
        described_kind = kind_of_described(question, noun)
        subject = described_subject(
            desc, backend, {(c.get("title") or c["name"]).lower() for c in kept}, described_kind, names
        )
        if subject:
            if described_kind and noun and described_kind != noun:
                subject["asked_of"] = True  # "which sea does the longest river ... flow into": asked of it
            named = [c for c in described_words if (c.get("title") or c["name"]) == subject["name"]]
            kept.append(named[0] if named else subject)  # the description names it after all
        elif bridge:
            return refine(question, given, backend, described=False)  # "the writer of the salt orchard"
        else:
            # no document matches the description: what it names is researched, and the loop
            # looks for the described thing from there
            kept.extend(
                c
                for c in described_words
                if c.get("title") and (not _single_lower(c) or is_name_at(question, c.get("at") or [0, 0], linker))
            )
    return kept


def _compounds(question: str, found: list[dict], backend) -> list[dict]:
    """Two lower-case words in a row that each linked on their own are one compound noun ("honey
    bees" is not "Honey" and "Bee"): linked to a title holding both ("Western honey bee") when
    there is one, else one unlinked concept."""
    linker = linker_for(backend) if backend is not None else None
    out: list[dict] = []
    for c in found:
        prev = out[-1] if out else None
        if (
            prev
            and prev.get("at")
            and c.get("at")
            and prev["at"][1] == c["at"][0]
            and _single_lower(prev)
            and _single_lower(c)
            and not is_name_at(question, prev["at"], linker)
            and not is_name_at(question, c["at"], linker)
        ):
            phrase = f"{prev['phrase']} {c['phrase']}"
            titles = linker.partial_titles(phrase.split()) if linker else []
            title = min(titles, key=len) if titles else None
            if title or not (prev.get("title") and c.get("title")):
                out[-1] = concept(title or phrase, phrase, title) | {"at": [prev["at"][0], c["at"][1]]}
                continue
            # no title holds both: two things ("the sports cricket and ..."): the categories rule decides
        out.append(c)
    return out


def _without_categories(question: str, found: list[dict], backend) -> list[dict]:
    """Without a lower-case word that names the kind of another linked concept ("sports" in
    "the sports cricket and baseball", "planets" in "the planets Mars and Venus"): the other's
    own description calls it that ("Bat-and-ball sport")."""
    linker = linker_for(backend) if backend is not None else None
    describe = getattr(backend, "description", None)
    if describe is None:
        return found
    kinds = {}
    for c in found:
        if c.get("title"):
            kinds[c["title"]] = {singular(w) for w in tokens(describe(c["title"]))}
    out = []
    for c in found:
        word = singular(fold(c.get("phrase") or ""))
        at = c.get("at") or [0, 0]
        single = " " not in word and not is_name_at(question, at, linker)
        # a kind word written as part of the name beside it ("Lake Vänern": Vänern is a lake) is no thing
        beside = " " not in word and any(
            o is not c and o.get("title") and (o.get("at") or [0, 0])[0] == at[1] for o in found
        )
        if (single or beside) and any(
            word in ws
            for t, ws in kinds.items()
            if t != c.get("title") and (single or any(o.get("title") == t and o["at"][0] == at[1] for o in found))
        ):
            continue
        out.append(c)
    return out


def plain(concepts: list[dict]) -> list[dict]:
    """The concepts without their token spans (state keeps what the report needs)."""
    return [{k: v for k, v in c.items() if k != "at"} for c in concepts]


__all__ = ["refine", "plain"]
