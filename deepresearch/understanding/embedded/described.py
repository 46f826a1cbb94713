"""Described subjects: the source whose text matches what a question says of a thing it does not name
("the coldest moon of the ringed planet"), and what a defining sentence says its subject is."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from deepresearch.text.sentences import STOP, UPPER
from deepresearch.text.words import fold, stems, tokens
from deepresearch.understanding.embedded.question import DESCRIPTORS, singular
from deepresearch.understanding.linking import concept

PREPOSITIONS = set(
    """against without within toward towards upon among amongst despite via per onto unto
across along amid beside besides beyond inside outside throughout underneath unlike""".split()
)

# a sentence ends before a capital (not at "c. 84", "circa"); a clause at a semicolon too
_BREAK = re.compile(rf"(?<=[.!?])\s+(?=[{UPPER}\"'(])")
_CLAUSE = re.compile(rf"{_BREAK.pattern}|(?<=;)\s+")
DESCRIBED_MATCH = 0.6  # share of the description's words the subject's best sentence must hold
DESCRIBED_CANDIDATES = 30  # documents a description is checked against


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
