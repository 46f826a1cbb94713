"""Words that say a role: "the painter of X" is said by "painter" or "painted", and not by "the former
painter" or "the cultural capital", which name another role than the one asked, nor by "the capital of
Vell province, Ostria", which says the role of another thing."""

from __future__ import annotations

import re

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, stem, tokens

_AGENT = ("er", "or", "r", "ist", "ian", "ant", "ent")  # English endings that make a verb's doer


def says_role(word: str, relation: str) -> bool:
    """Does the word say the role: the role itself ("architects" for "architect") or the verb whose
    doer it is ("directed" for "director", "painted" for "painter") or its act ("discovery"), not a word that merely begins
    like it ("architecture" is no architect)?"""
    said, role = stem(word), stem(relation)
    if said == role or (len(said) >= 4 and role.startswith(said) and role[len(said) :] in _AGENT):
        return True
    return said.startswith(role) and said[len(role) :] in ("i", "y")  # the act: "discovery" for "discoverer"


def qualified_role(sentence: str, relation: str, asked: set[str] | frozenset[str]) -> bool:
    """Does the sentence say the role only with a qualifier the question does not give it ("the
    cultural capital of X", "the former capital", "its second capital" for "the capital of X")? A
    lower-case word right before the role word, other than a function word, narrows it to another
    role; a name before it ("X's capital", "the Ostrian capital") or a qualifier the question itself
    says ("the state capital" for "the capital of the state ...") does not. False when the
    sentence does not say the role, or says it once unqualified. `asked`: the question's words."""
    # a hyphenated word is one word ("co-founded" says "founder")
    words = [m.group(0).rsplit("-", 1)[-1] for m in re.finditer(r"[^\W_]+(?:-[^\W_]+)*", sentence)]
    said = [i for i, w in enumerate(words) if w[:1].islower() and says_role(w, relation)]
    if not said:
        return False
    for i in said:
        before = words[i - 1] if i > 0 else ""
        if len(before) < 2 or not before.islower() or before in STOP or before in asked or before.isdigit():
            return False  # said plainly once: the role asked
    return True


def _said_of(after: str) -> list[str] | None:
    """The words after the "of" that follows a role word within its phrase (up to a comma or a
    bracket, among its next four words): what the role is said of; None when no "of" follows."""
    phrase = tokens(re.split(r"[,;:()\[\]]", after, maxsplit=1)[0])
    return phrase[phrase.index("of") + 1 :] if "of" in phrase[:4] else None


def role_of_another(sentence: str, relation: str, name: str) -> bool:
    """Does the sentence say the role only of another thing than the one named ("Capital of Vell
    province, Ostria", "the capital and largest city of Vell, a province of Ostria" for the capital of
    Ostria)? Each time it says the role, an "of" follows in the same phrase (up to a comma or a
    bracket) and the name is not in what follows it."""
    named = tokens(name)
    said = 0
    for m in re.finditer(r"[^\W_]+", fold(sentence)):
        if not says_role(m.group(0), relation):
            continue
        said += 1
        rest = _said_of(sentence[m.end() :])
        if rest is None:
            return False  # "X's capital", "the capital city": not said of another thing
        if any(rest[i : i + len(named)] == named for i in range(len(rest))):
            return False
    return said > 0


def role_said_of(sentence: str, relation: str, name: str) -> bool:
    """Does the sentence say the role of the thing named, in so many words ("New Delhi, the capital of
    Ostria", "the capital city of Ostria")? The role word, lower case, then within its phrase (up
    to a comma or a bracket) an "of" among its next four words and the name right after it (after
    "the")."""
    named = tokens(name)
    if not named:
        return False
    for m in re.finditer(r"[^\W_]+", sentence):
        if not m.group(0)[:1].islower() or not says_role(m.group(0), relation):
            continue
        rest = _said_of(sentence[m.end() :])
        if rest is not None and (rest[1:] if rest[:1] == ["the"] else rest)[: len(named)] == named:
            return True
    return False


def role_with_modifiers(question: str, relation: str) -> str:
    """The role as the question says it with the lower-case words right before it ("retail chain" in
    "the retail chain that X co-founded"; "" when nothing but function words comes before it)."""
    words = re.findall(r"[^\W_]+(?:-[^\W_]+)*", question)
    for i, w in enumerate(words):
        if w[:1].islower() and says_role(w, relation):
            before: list[str] = []
            for x in reversed(words[max(0, i - 2) : i]):
                if not x.islower() or x in STOP:
                    break
                before.insert(0, x)
            return " ".join([*before, w]) if before else ""
    return ""


def role_of_its_own(sentence: str, relation: str) -> bool:
    """Does the sentence open by giving its subject's role with a possessive pronoun ("Its capital and
    largest city is Y", "His teacher was Y")? Read only of a sentence of the subject's own text."""
    m = re.match(r"\s*(?:Its|His|Her|Their)\s+((?:[a-z]+\s+){0,3}?)([a-z]+)\b", sentence)
    return m is not None and says_role(m.group(2), relation)
