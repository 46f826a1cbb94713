"""The roles through which a question reaches a thing it names: "the director of X", "X's director",
"the country X is in", "the dynasty into which X was born", "the person X is named after", "who
designed X" (deepresearch.understanding.embedded.hops reads the words that say each)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, singular
from deepresearch.understanding.embedded import forms
from deepresearch.understanding.embedded.forms import VERBS
from deepresearch.understanding.embedded.nouns import is_person_noun, is_role
from deepresearch.understanding.linking import named_by_its_kind

_CLAUSE_WORDS = {"which", "what", "who", "whom", "whose", "where", "when", "that"}
_LINKS = {"of", "who", "that", "which", "whose", "with", "after", "by", "for", "behind", "the", "whom", "where"}
_DETERMINERS = {"the", "a", "an", "its", "his", "her", "their"}


def relations_of(
    question: str,
    concept_phrases: list[str],
    kinds: AbstractSet[str] | None = None,
    own_kinds: Mapping[str, AbstractSet[str]] | None = None,
) -> list[str]:
    """Every such role word, outermost first ("wife", "author" in "the wife of the author of X").
    `own_kinds`: the kinds each named thing's own description says it is (by its phrase): "the city
    of X", where X is itself a city, names X; it reaches nothing through a role."""
    # "Moby-Dick" is "moby dick" and "Hilbert's problems" "hilbert problems", as titles are keyed
    words = re.findall(r"[a-z]+", re.sub(r"['’]s\b", "", fold(" ".join(question.split()))))
    phrases = [fold(p) for p in concept_phrases if p]
    # the words as written, where they align: a role word capitalized inside the question is part of a
    # name ("the Player of the Century award"), no role
    written = re.findall(r"[^\W\d_]+", re.sub(r"['’]s\b", "", " ".join(question.split())))
    named = {k for k, w in enumerate(written) if k and w[:1].isupper()} if len(written) == len(words) else set()
    out = []
    by_clause: set[str] = set()  # roles read from a clause after the noun ("the dynasty into which ...")
    for i, w in enumerate(words):
        if w not in _DETERMINERS:
            continue
        for j in (i + 1, i + 2):  # "the painter of", "the fifth emperor who", "the person X is named after"
            if j + 1 >= len(words):
                continue
            # a person's role right before a thing the backend says is no person ("the person X is named
            # after"); not a modifier ("the east X") nor a person's title ("the painter Ada Brannock")
            before = is_person_noun(singular(words[j])) and _thing_next(words[j + 1 :], own_kinds or {})
            # a clause without its relative word: a named thing and its verb ("the country X is in")
            before = before or _named_then_verb(words[j + 1 :], phrases)
            clause = words[j + 1] not in _LINKS and not before
            if clause and not _clause_after(words[j + 1 : j + 3]):
                continue
            noun = singular(words[j])
            if j in named or not is_role(noun, kinds) or named_by_its_kind(noun, words[j + 1 :], own_kinds or {}):
                continue
            if any(len(p) > 1 and words[j - len(p) + 1 : j + 1] == p for p in map(str.split, phrases)):
                continue  # the last word of a name ("the North Island of X"), no role
            rest = " ".join(words[j + 1 :])
            # the relation must lead to a named concept of the question, not to the answer's own noun
            if any(" ".join(re.findall(r"[a-z]+", p)) in rest for p in phrases):
                out.append(noun)
                if clause:
                    by_clause.add(noun)
                break
    out += _possessive_roles(question, phrases, kinds, {fold(p): k for p, k in (own_kinds or {}).items()})
    out += [r for p in phrases if (said := predicate_role(question, p, kinds)) for r in said[-1:] if r not in out]
    # "who designed X": the one who did it is a thing of its own, researched through X
    m = re.match(
        r"^(?:who|which person|what person)\s+(?:had\s+|has\s+|first\s+)?([a-z]+ed|wrote|built|"
        r"founded|made|drew|led|ruled|sang|won)\b",
        " ".join(words),
    )
    if m and any(p in " ".join(words) for p in (" ".join(re.findall(r"[a-z]+", p)) for p in phrases)):
        # the act asked ("who directed the film in which X played Y"): its filler is the answer, and the
        # thing a clause describes ("the film in which ...") is found as its subject, not as a role
        out = [r for r in out if r not in by_clause] + [m.group(1)]
    return list(dict.fromkeys(out))


def _possessive_roles(
    question: str, phrases: list[str], kinds: AbstractSet[str] | None, own_kinds: Mapping[str, AbstractSet[str]]
) -> list[str]:
    """A role said with the named thing's possessive ("X's director", "X's home city"), as "the
    director of X" says it: the innermost role. A person's role typed after a person's name ("ada
    brannock painter") says what that person is, no role."""
    return [
        role
        for p in phrases
        if (said := possessive_role(question, p, kinds, bare=not any(map(is_person_noun, own_kinds.get(p, ())))))
        for role in said[-1:]
    ]


def possessive_role(question: str, phrase: str, kinds: AbstractSet[str] | None = None, bare: bool = True) -> list[str]:
    """The words of a role the question says with `phrase`'s possessive: the role word itself or one
    word that narrows it before it ("X's home city": ["home", "city"]), or a person's role typed
    right after the name ("X director"; not with `bare` off: "ada brannock painter" of a person says
    what she is); [] when it says none."""
    text = " ".join(re.findall(r"[a-z]+(?:['’]s\b)?", fold(" ".join(question.split()))))
    name = " ".join(re.findall(r"[a-z]+", fold(phrase)))
    m = re.search(rf"\b{re.escape(name)}['’]s ([a-z]+)(?: ([a-z]+))?", text) if name else None
    if m is None:
        # typed without its "'s": a person's role right after the name ("citizen kane director")
        after = re.search(rf"\b{re.escape(name)} ([a-z]+)\b", text) if name and bare else None
        return [singular(after.group(1))] if after and is_person_noun(singular(after.group(1))) else []
    if is_role(singular(m.group(1)), kinds):
        return [singular(m.group(1))]
    if m.group(2) and is_role(singular(m.group(2)), kinds):
        return [m.group(1), singular(m.group(2))]
    return []


def predicate_role(question: str, phrase: str, kinds: AbstractSet[str] | None = None) -> list[str]:
    """The words of a role the question says of `phrase` with a verb and its preposition, before "a"
    or "an" and the role's noun ("X is headquartered in a city that ...", "X was formed in a town
    known as ..."): the words from the verb to the noun (["headquartered", "in", "city"]), the
    verb's auxiliary left out; [] when it says none. Not a copula ("X is a city") nor a bare
    preposition ("the hall of X in a city ...")."""
    words = re.findall(r"[a-z]+", re.sub(r"['’]s\b", "", fold(" ".join(question.split()))))
    name = re.findall(r"[a-z]+", fold(phrase))
    ends = [i + len(name) for i in range(len(words) - len(name) + 1) if name and words[i : i + len(name)] == name]
    for end in ends:
        for i in range(end + 2, min(end + 8, len(words) - 1)):
            between = words[end:i]
            # the verb's preposition, or a present participle with its object ("a film starring an actor ...")
            linked = between[-1] in _STRANDED or (between[-1].endswith("ing") and len(between[-1]) > 5)
            if words[i] not in ("a", "an") or not linked or between[0] in _STRANDED:
                continue
            if set(between) & (_CLAUSE_WORDS | {"and", "or"}):
                break
            # the role's noun, or one word narrowing it before it ("a hotel company")
            for noun in (singular(w) for w in words[i + 1 : i + 3]):
                if is_role(noun, kinds):
                    return [w for w in between if w not in VERBS] + [noun]
            break
    return []


_STRANDED = {"in", "at", "on", "after", "for", "from", "by", "with", "of", "to", "into", "near"}


def _named_then_verb(after: list[str], phrases: list[str]) -> bool:
    """Do `after`'s words open with a named thing of the question, then a clause that ends in its
    preposition ("... tern vale is in", "... ada brannock was born in"): an auxiliary verb, at most two
    words, the preposition, then the question's end, a question word or another verb?"""
    for p in phrases:
        name = re.findall(r"[a-z]+", p)
        if not name or after[: len(name)] != name:
            continue
        rest = after[len(name) :]
        if not rest or rest[0] not in VERBS:
            continue
        for k in range(1, 4):
            if k < len(rest) and rest[k] in _STRANDED:
                nxt = rest[k + 1 : k + 2]
                return not nxt or nxt[0] in VERBS | _CLAUSE_WORDS | forms.PARTICIPLES or nxt[0].endswith("ed")
    return False


def _clause_after(two: list[str]) -> bool:
    """Do the two words after a noun open a clause about it: a preposition before a relative word
    ("the dynasty into which X was born"), a present participle with its object ("the country
    containing X") or a passive participle with its agent ("the state ruled by X")?"""
    if len(two) < 2:
        return False
    first, second = two
    if second in ("which", "whom"):
        return first in STOP
    if first.endswith("ing") and len(first) > 5 and second not in STOP:
        return True  # a present participle with its object: "the country containing X"
    return second == "by" and (first.endswith("ed") or first in forms.PARTICIPLES)


def _thing_next(after: list[str], own_kinds: Mapping[str, AbstractSet[str]]) -> bool:
    """Do `after`'s words open with a named thing whose own description says it is no person?"""
    return any(
        after[: len(n)] == n and kinds and not any(map(is_person_noun, kinds))
        for n, kinds in ((re.findall(r"[a-z]+", fold(p)), k) for p, k in own_kinds.items())
    )
