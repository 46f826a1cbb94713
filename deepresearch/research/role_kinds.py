"""Roles that are kinds of thing: "the capital of X" is filled only by a document the backend
describes as a capital ("Vellmark (Capital of Ostria)"), "the country where ..." by a country. The
backend's own descriptions say what each document is."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from deepresearch.report.grounding import source_sentences
from deepresearch.text.words import bare_title, stems, tokens
from deepresearch.understanding.analysis import Hop
from deepresearch.understanding.embedded.described import defined_as
from deepresearch.understanding.embedded.nouns import RELATION_NOUNS
from deepresearch.understanding.linking import kinds_for, linker_for, mentions


def of_kind(title: str | None, hop: Hop, backend) -> bool:
    """Does the linked document's description say it is of the role's kind ("Country in South Asia"
    for "the country where the Taj Mahal stands")? False when it cannot be told: a person's role
    (checked apart) or no description."""
    description = getattr(backend, "description", None) if backend is not None else None
    if hop.person or not title or description is None:
        return False
    role = stems([hop.relation])[0]
    if role in set(stems(tokens(description(title)))):
        return True
    # or what its text's opening sentence defines it as ("Baghdad is the capital and largest city in Iraq")
    describe = getattr(backend, "describe", None)
    opening = describe(title)[len(description(title)) :].strip() if describe is not None else ""
    first = source_sentences(opening)[:1]
    return bool(first) and role in set(stems(tokens(defined_as(first[0]))))


def fills_kind(sentence: str, hop: Hop, backend) -> bool:
    """Can the sentence fill the role: for a role that is a kind of thing (`told_by_kind`), it names
    a document whose description says it is of that kind ("Vellmark (Capital of Ostria)" for "the
    capital of Ostria"); any sentence for other roles."""
    if not told_by_kind(hop, backend):
        return True
    linker = linker_for(backend)
    return linker is not None and any(of_kind(t, hop, backend) for t in mentions(sentence, linker))


def told_by_kind(hop: Hop, backend) -> bool:
    """A role that is a kind of thing ("capital", "country", "band", or any kind the backend's own
    descriptions head: "museum", "system"), with a backend that says what each document is: only a
    thing of that kind fills it."""
    if hop.person or getattr(backend, "description", None) is None:
        return False
    return hop.relation in RELATION_NOUNS or hop.relation in (kinds_for(backend) or ())


def as_kind(title: str, hop: Hop, backend, linker, known: AbstractSet[str]) -> list[str]:
    """The title when its document is of the role's kind; else the longer titles that begin with its
    name and are ("Apple" the fruit named in a phone's text, for its company: *Apple Inc.*)."""
    if of_kind(title, hop, backend):
        return [title]
    name = tokens(bare_title(title))
    longer = [t for t in linker.partial_titles(name) if tokens(bare_title(t))[: len(name)] == name and t != title]
    return [t for t in longer if t.lower() not in known and of_kind(t, hop, backend)][:1]
