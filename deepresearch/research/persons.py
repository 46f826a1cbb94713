"""Is a name a person's? "Who built X" is answered by a sentence that names a person, not one that
names only a dynasty, a place or a thing ("... joined together in the Qin dynasty"): what the backend's
documents say of the name (spoken of as he or she, described by a role noun) tells."""

from __future__ import annotations

import re

from deepresearch.research.asked_kind import COMMON_NAME
from deepresearch.research.sentences import names_in
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, fold, tokens
from deepresearch.understanding.embedded.question import is_person_text
from deepresearch.understanding.linking import linker_for


def not_a_person(name: str, title: str | None, backend, linker) -> bool:
    """A name that is no person's: linked to a document that speaks of no person, or, unlinked,
    ending in the name of a thing that is no person ("Eastern Roman Empire" ends in "Roman
    Empire"; "Isidore of Miletus" is an Isidore)."""
    describe = getattr(backend, "describe", None) if backend is not None else None
    if describe is None:
        return False
    if title:
        return not is_person_text(describe(title))
    head = tokens(re.split(r"\s+(?:of|from|de|von|van)\s+", name)[0])
    if linker is not None and len(head) == 1:  # one word: the titles it begins ("Byzantine Empire", ...)
        starting = [t for t in linker.partial_titles(head) if tokens(t)[:1] == head]
        if starting and not any(is_person_text(describe(t)) for t in starting):
            return True
    for i in range(1, len(head)):
        titles = linker.exact_titles(head[i:]) if linker is not None else []
        if titles and not any(is_person_text(describe(t)) for t in titles):
            return True
    return False


def linked_title(name: str, words: list[str], linker) -> tuple[str | None, bool]:
    """The backend title a name is linked to (None: none), and whether it is the title exactly. A
    name of single letters ("penicillin G") is a mark, linked only to a title that is exactly it: a
    title that merely holds the letter ("G. H. Hardy") is not its."""
    if linker is None:
        return None, False
    exact = linker.exact_titles(tokens(name))
    if exact:
        return exact[0], True
    if all(len(w) == 1 for w in words):
        return None, False
    partial = [t for t in linker.partial_titles(words) if fold(t).startswith(fold(words[0]))]
    return (partial[0] if len(partial) == 1 else None), False


def names_a_person(sentence: str, skip: set[str] | frozenset[str], backend, subject: str = "") -> bool:
    """Does the sentence name someone who may be a person: a name (its words not all in `skip`: the
    question's and the subject's) that is not the name of a document about no person, nor the
    `subject` itself under a longer name? True when the backend cannot tell (no descriptions)."""
    own = set(tokens(bare_title(subject))) - STOP
    linker = linker_for(backend) if backend is not None else None
    if linker is None or getattr(backend, "describe", None) is None:
        return True
    for pos, name in names_in(sentence, skip_first=False):
        words = [w for w in tokens(name) if w not in STOP]
        if not words or set(words) <= skip or (len(words) == 1 and linker.generic(words[0], COMMON_NAME)):
            continue  # ... or a word most documents use ("BC", "Italian"): a mark or a modifier, no one
        # with the common noun after it, when the two are a title ("the Qin dynasty")
        after = re.match(r"\s+([a-z]+)", sentence[pos + len(name) :])
        with_noun = linker.exact_titles([*tokens(name), after.group(1)]) if after else ()
        found, _exact = (with_noun[0], True) if with_noun else linked_title(name, words, linker)
        if own and (own <= set(words) or (found and set(tokens(bare_title(found))) <= own)):
            continue  # the subject under a longer name ("Sir Pell Varo" for Pell Varo): no one else
        if found is None and len(words) == 1 and linker.written_as_name(words[0]) is not None:
            continue  # a word the documents use, no title's: a people's or a language's ("Ostrian physician")
        if not not_a_person(name, found, backend, linker):
            return True
    return False
