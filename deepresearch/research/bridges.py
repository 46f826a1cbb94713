"""Bridge entities: the thing a question reaches through another one.

"In which year was the author of Don Quixote born?" names Don Quixote but asks about its author.
Once Don Quixote's text is retrieved, the sentence stating the relation ("Don Quixote is a novel
by Miguel de Cervantes ...") gives the name to research next. The name is taken from a
retrieved text, never from the model alone; it is linked to a backend title where the backend
has titles, and searched by name elsewhere.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet

from deepresearch.report.grounding import source_sentences
from deepresearch.research.coverage import sources_for
from deepresearch.research.sentences import names_in
from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, tokens
from deepresearch.understanding.analysis import Analysis, Hop
from deepresearch.understanding.embedded.question import is_person_text
from deepresearch.understanding.linking import concept as new_concept
from deepresearch.understanding.linking import linker_for

MAX_HOPS = 2


def _relation_terms(hop: Hop, subject_words: AbstractSet[str] = frozenset()) -> set[str]:
    """Words a sentence stating the hop's relation may use: its terms, and the question's own verbs
    but those of the subject it starts from ("directed", "proposed", "commissioned")."""
    return set(hop.terms) | {w for w in hop.verbs if w not in subject_words}


def _positions(sentence: str, terms: set[str]) -> list[int]:
    """Character positions of the relation's words in the sentence (prefix matches: "painter" and
    "painted" share "paint")."""
    out = []
    low = fold(sentence)
    prefixes = {t[:5] if len(t) > 5 else t for t in terms}
    for m in re.finditer(r"[^\W_]+", low):
        w = m.group(0)
        if w in terms or (len(w) > 4 and w[:5] in prefixes):
            out.append(m.start())
    return out


def _not_a_person(name: str, title: str | None, backend, linker) -> bool:
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


def find_bridge(
    hop: Hop, subject: dict, text: str, asked: set[str], backend=None, known: AbstractSet[str] = frozenset()
) -> dict | None:
    """The bridge concept found in `subject`'s retrieved `text`: the name the sentence that
    states the relation gives, nearest its relation word. None when no sentence states it.
    A role that asks for a person (`hop.person`) takes no name linked to a place, a state or a
    thing ("the architect of Hagia Sophia" is no empire). `asked`: the question's words.

    Read once per text and question: the gap check asks again at every iteration, of the same
    subject's same best sources (a new copy of the concept each time)."""
    args = (hop, subject.get("title"), subject["name"], text, frozenset(asked), backend, frozenset(known))
    found = (_find_bridge if _hashable(backend) else _find_bridge.__wrapped__)(*args)
    return dict(found) if found else None


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:  # a backend that cannot be a key: read again each time
        return False
    return True


@functools.lru_cache(maxsize=256)
def _find_bridge(
    hop: Hop, title: str | None, subject_name: str, text: str, asked: frozenset, backend, known: frozenset
) -> dict | None:
    subject_words = set(tokens(title or subject_name))
    terms = _relation_terms(hop, subject_words)
    relation, person = hop.relation, hop.person
    linker = linker_for(backend) if backend is not None else None
    best = None
    own = {relation} | ({w for w in terms if w in asked} - {"by"})
    for idx, sent in enumerate(source_sentences(text, 800) or [text]):
        where = _positions(sent, terms)
        if not where:
            continue
        named_role = _positions(sent, own)
        where = named_role or where  # nearest the role itself when the sentence names it
        for pos, name in names_in(sent):
            words = [w for w in tokens(name) if w not in STOP]
            if not words or set(words) <= asked | subject_words:
                continue  # a name of the question, or the subject itself
            title, exact = None, []
            if linker is not None:
                exact = linker.exact_titles(tokens(name))
                title = exact[0] if exact else None
                if title is None:
                    partial = [t for t in linker.partial_titles(words) if fold(t).startswith(fold(words[0]))]
                    title = partial[0] if len(partial) == 1 else None
            if (title or name).lower() in known or (person and _not_a_person(name, title, backend, linker)):
                continue
            distance = min(abs(pos - w) for w in where)
            after = any(w < pos for w in where)
            linked = (2 if exact else 1 if title else 0) if linker is not None else 2
            lead = idx == 0 and sent.rstrip().endswith(").")  # "Title (description)." reads worse than a sentence
            # a sentence that names the role ("the composer Igor Stravinsky") before one that only
            # says "by" ("choreography by Vaslav Nijinsky")
            score = (linked, bool(named_role), not lead, -distance + (5 if after else 0), -idx)
            if best is None or score > best[0]:
                best = (score, name, title, sent)
    if best is None or (linker is not None and best[2] is None and best[0][3] < -40):
        return None
    _, name, title, sent = best
    concept = new_concept(title or name, " ".join(tokens(name)), title, origin="bridge")
    concept["sentence"] = " ".join(sent.split())[:400]
    concept["via"] = subject_name
    return concept


def bridges(analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, backend=None) -> list[dict]:
    """The next bridge concept, if any: for a question that reaches its subject through a
    relation (`analysis.hops`), the name the subject's retrieved text gives for it. One hop per
    relation of the question ("the wife of the author of X" has two), at most MAX_HOPS; the second
    is looked for in the first bridge's text once that is retrieved."""
    found_bridges = [c for c in concepts if c.get("origin") == "bridge"]
    hops = len(found_bridges)
    if hops >= min(len(analysis.hops), MAX_HOPS):
        return []
    hop = analysis.hops[-(hops + 1)]
    subjects = [found_bridges[-1]] if found_bridges else [c for c in concepts if c.get("origin") != "described"]
    asked = set(analysis.words)
    known = {(c.get("title") or c["name"]).lower() for c in concepts}
    for c in subjects:
        for s in sources_for(c, evidence, text_of, limit=2):  # no text past the second is read
            found = find_bridge(hop, c, f"{s.get('title', '')}. {text_of(s)}", asked, backend, known)
            if found:
                found["source"] = s.get("key")
                return [found]
    return []
