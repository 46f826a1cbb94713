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

import functools
import re
from collections.abc import Sequence

from deepresearch.text.sentences import STOP, UPPER
from deepresearch.text.words import fold, stems, tokens
from deepresearch.understanding.embedded.question import (
    ASPECTS,
    DESCRIPTORS,
    PERSON_NOUNS,
    RELATION_NOUNS,
    answer_kind,
    description_of,
    relations_of,
    singular,
)
from deepresearch.understanding.embedded.spans import is_name_at, name_runs, names_its_head, span_of
from deepresearch.understanding.linking import concept, kinds_for, linker_for

PREPOSITIONS = set(
    """against without within toward towards upon among amongst despite via per onto unto
across along amid beside besides beyond inside outside throughout underneath unlike""".split()
)
DESCRIBED_MATCH = 0.6  # share of the description's words the subject's best sentence must hold
DESCRIBED_CANDIDATES = 30  # documents a description is checked against


# a sentence ends before a capital (not at "c. 84", "circa"); a clause at a semicolon too
_BREAK = re.compile(rf"(?<=[.!?])\s+(?=[{UPPER}\"'(])")
_CLAUSE = re.compile(rf"{_BREAK.pattern}|(?<=;)\s+")


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
        if single and not is_name_at(question, at, linker) and at[0] >= 1 and words[at[0] - 1] in CLAUSE_OPENERS:
            continue  # a relative clause's verb ("the country that borders X"): what the role does, no subject
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
        single = " " not in word and not is_name_at(question, c.get("at") or [0, 0], linker)
        if single and any(word in ws for t, ws in kinds.items() if t != c.get("title")):
            continue
        out.append(c)
    return out


# Superlatives a text states in other words: "the tallest mountain" is "the highest mountain".
SAME_SUPERLATIVE = {"tallest": "highest", "biggest": "largest", "greatest": "largest", "tiniest": "smallest"}
ORDINALS = set("second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth next".split())
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$")


def kind_of_described(question: str, noun: str | None) -> str | None:
    """What the described thing is: the noun right after the question's superlative ("the
    coldest moon" is a moon, even in "around which planet does the coldest moon travel"), else the noun
    asked for ("which planet is the largest ...")."""
    words = tokens(question)
    for i, w in enumerate(words[:-1]):
        if w in DESCRIPTORS and words[i + 1] not in STOP and words[i + 1] not in DESCRIPTORS:
            return singular(words[i + 1])
    return noun


def _occurrences(text: str) -> list[tuple[str, str, list[str]]]:
    """Each superlative of a text: its order ("" or "second"), the word, and the content words
    it is said of: the rest of its clause, up to the next superlative with an order of its own
    ("the largest moon of Saturn and the second-largest in the Solar System": the Solar System
    belongs to the second)."""
    out = []
    for clause in re.split(r"[,;:()—–]", text):
        words = [SAME_SUPERLATIVE.get(w, w) for w in tokens(clause)]
        marks = [i for i, w in enumerate(words) if w in DESCRIPTORS]
        for i in marks:
            order = _order(words, i)
            end = next((j for j in marks if j > i + 1 and _order(words, j)), len(words))
            k = i + 1
            while k + 1 < end and words[k] == "and" and words[k + 1] in DESCRIPTORS:  # "largest and most massive"
                k += 3 if words[k + 1] in ("most", "least") else 2
            after = [
                prefix5(singular(x))
                for x in words[k:end]
                if x not in STOP and x not in DESCRIPTORS and x not in ORDINALS
            ]
            out.append((order, words[i], after))
    return out


def _is_ordinal(word: str) -> bool:
    return word in ORDINALS or bool(_ORDINAL.match(word))


def _order(words: list[str], i: int) -> str:
    """The order the superlative at `i` is said with: "second" in "the second largest", "third to"
    in "the third to last"; "" for none."""
    if i and _is_ordinal(words[i - 1]):
        return words[i - 1]
    if i > 1 and words[i - 1] == "to" and _is_ordinal(words[i - 2]):
        return f"{words[i - 2]} to"
    return ""


def _said_of(desc: str, sentence: str, kind: str | None = None) -> bool:
    """Does the sentence state the description's superlatives, in the same order ("the
    second-largest" is no "largest"), of the same thing ("the largest population", not "the
    largest Lusophone population"), with no other superlative claiming its scope?"""
    have = _occurrences(sentence)
    for order, sup, after in _occurrences(desc):
        heads, scope = set(after[:1]), after[1:2]
        if kind and after[:1] == [prefix5(kind)]:
            heads |= set(scope)  # "the largest in the Solar System" of a planet: the kind stands elsewhere
        ok = False
        for o, w, a in have:
            if o != order or w != sup or (heads and not (set(a[:1]) & heads)):
                continue
            others = {x for o2, w2, a2 in have if (o2, w2, a2) != (o, w, a) for x in a2}
            if not scope or scope[0] in a or scope[0] not in others:
                ok = True
                break
        if not ok:
            return False
    return True


def _is_kind(result_title: str, sentence: str, lead: str, kind: str | None, backend) -> bool:
    """Is the document a thing of the kind asked for? Its description or its first sentence names
    the kind, or the matching sentence does when it states the superlative asked (`sentence` is ""
    otherwise): "It is the tallest living bird" says what the ostrich is, but "Lyon is located at
    the confluence of the rivers Rhône and Saône" does not make Lyon a river."""
    if not kind:
        return True
    describe = getattr(backend, "description", None)
    first = _BREAK.split(lead, maxsplit=2)[:2]  # "Title (description)." and the first sentence
    # its "Title (description)." line says it whole; a sentence, by what it defines its subject as
    said = " ".join(
        head_of(x[len(result_title) + 2 :]) if x.startswith(f"{result_title} (") else defined_as(x) for x in first
    )
    text = f"{head_of(describe(result_title)) if describe else ''} {said} {sentence}"
    # a compound says what its head is, not its parts: an "ocean-going fish" is no ocean
    return stems([kind])[0] in set(stems(tokens(re.sub(r"(?<=\w)-(?=\w)", "", text))))


_DEFINED = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:a|an|the|one of the)\s+)?(.*)$")
# where what a thing is defined as ends: a comma, a relative word, a preposition; "of" before an
# article or a name ("a marginal sea of the Pacific Ocean", "city of Italy"), not in a bare "species
# of bird", "form of government"
_QUALIFIER = re.compile(
    r"[,;(]|\sof\s(?=(?:the|a|an|its|his|her|their|this|these|those)\s|[^a-z])|"
    r"\s(?:by|in|on|at|from|with|for|to|that|which|who|whose|located|where|between|near|off|under|"
    r"over|around|into|during|since|through|best|known|widely|" + "|".join(sorted(PREPOSITIONS)) + r")\s"
)


def defined_as(sentence: str, whole: bool = False) -> str:
    """What a defining sentence says its subject is, up to the first qualifier: "an annual legume" of
    "The chickpea is an annual legume of the family Fabaceae", and "an epic novel" of "War and Peace is
    an epic novel by the Russian author Leo Tolstoy" (no author); nothing of a sentence that defines
    nothing ("The history of Peru spans ... the Andes mountains"). `whole`: up to the first clause
    ("the capital and largest city of France" of "Paris is the capital and largest city of France, with ...")."""
    m = _DEFINED.search(sentence)
    if m and whole:
        return _CLAUSE_END.split(m.group(1), maxsplit=1)[0]
    return head_of(m.group(1)) if m else ""


_CLAUSE_END = re.compile(r"[,;(]|\s(?:who|whom|which|that|whose|where|when|known|best|and\s+is|and\s+was)\s")


def head_of(phrase: str) -> str:
    """A defining phrase up to its first qualifier: "Island country" of "Island country in the
    Atlantic Ocean" (no ocean), "Species of bird" whole."""
    cut = _QUALIFIER.search(phrase)
    return phrase[: cut.start()] if cut else phrase


def prefix5(word: str) -> str:
    return word[:5]


_NAME_RUN = re.compile(rf"[{UPPER}][\w-]*(?:\s+(?:of\s+|the\s+)?[{UPPER}][\w-]*)*")


def _names_whole(names: Sequence[str], sentence: str, required: bool = True) -> bool:
    """Every name of the description stands in the sentence, as a whole name ("Africa" is not
    the "Africa" of "South Africa"): "which river flows through Baghdad" is answered by a
    sentence about Baghdad."""
    runs = [re.sub(r"^the\s+", "", fold(r)) for r in _NAME_RUN.findall(sentence)]
    low = fold(sentence)
    for name in names:
        f = fold(name)
        if (required and f not in low) or (f in low and f not in runs and any(f in r for r in runs)):
            return False  # absent, or only inside a longer name
    return True


@functools.lru_cache(maxsize=8192)
def _sentence_stems(sent: str) -> frozenset:
    """A candidate sentence's stems, superlatives in one form: once per sentence (the same
    articles come back for many descriptions and runs)."""
    return frozenset(stems(tokens(" ".join(SAME_SUPERLATIVE.get(w, w) for w in tokens(sent)))))


def described_subject(
    desc: str, backend, known: set[str], noun: str | None = None, names: Sequence[str] = ()
) -> dict | None:
    """The source whose text matches the description best (its sentence holding most of the
    description's words, the superlative itself and not an order such as "second largest",
    about a thing of the kind asked for), as a concept; None if none matches. `noun`: what the
    described thing is (see `kind_of_described`)."""
    kind = noun
    if kind and kind not in desc.split():
        desc = f"{kind} {desc}"  # the kind is part of the description: "which planet" is a planet
    want = [w for w in desc.split() if w not in STOP or w.isdigit()]
    if not want:
        return None
    want_stems = set(stems([SAME_SUPERLATIVE.get(w, w) for w in want]))
    digits = {s for s, w in zip(stems(want), want) if w.isdigit()}
    must = set(stems(sorted(w for w in want if w in DESCRIPTORS))) | digits
    try:
        results = backend.search(desc, DESCRIBED_CANDIDATES)
    except Exception:  # noqa: BLE001 - finding the subject is best effort; the search still runs
        return None
    best = None
    for rank, r in enumerate(results):
        text = f"{r.title}. {r.text}"
        sents = _CLAUSE.split(" ".join(text.split()))
        lead = " ".join(_CLAUSE.split(" ".join(r.text.split()))[:2])  # its description line and first sentence
        for sent in sents:
            have = _sentence_stems(sent)
            if digits - have:
                continue
            share = len(want_stems & have) / len(want_stems)
            if (
                share >= DESCRIBED_MATCH
                and (best is None or (share, -rank) > best[0])
                and _is_kind(r.title, sent if must - digits else "", lead, kind, backend)
                and _said_of(desc, sent, kind)
                and _names_whole(names, sent, required=not must - digits)
            ):
                best = ((share, -rank), r, sent)
    if best is None and digits:  # BM25 drops one-character words such as "1": scan the openings
        found = _scan_titles(backend, want, want_stems, must)
        if found is None:
            return None
        title, sent = found
        if title.lower() in known:
            return None
        found_concept = concept(title, " ".join(tokens(title)), title, origin="described")
        found_concept["description"], found_concept["sentence"] = desc, sent[:400]
        return found_concept
    if best is None:
        return None
    _, r, sent = best
    linked: str | None = r.title if getattr(backend, "titles", None) else None
    if (linked or r.title).lower() in known:
        return None
    found_concept = concept(r.title, " ".join(tokens(r.title)), linked, origin="described")
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
    pattern = [
        re.compile(r"\b" + (re.escape(want[i - 1]) + r"\s+" if i else "") + re.escape(w) + r"\b")
        for i, w in enumerate(want)
        if w.isdigit()
    ]
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
