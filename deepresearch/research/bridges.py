"""Bridge entities: the thing a question reaches through another one.

"When was the writer of The Salt Orchard born?" names The Salt Orchard but asks about its writer.
Once The Salt Orchard's text is retrieved, the sentence closest in meaning to the question's words for
the relation ("The Salt Orchard is a novel by Mara Lindqvist ...") gives the name to research next. The name is taken from a
retrieved text, never from the model alone; it is linked to a backend title where the backend
has titles, and searched by name elsewhere.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.grounding import source_sentences
from deepresearch.research.coverage import sources_for
from deepresearch.research.persons import linked_title, not_a_person
from deepresearch.research.role_kinds import as_kind, of_kind, told_by_kind
from deepresearch.research.roles import qualified_role, role_of_another, role_with_modifiers, says_role
from deepresearch.research.sentences import names_in
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, fold, stems, tokens
from deepresearch.understanding.analysis import Analysis, Hop
from deepresearch.understanding.embedded.clauses import RELATIVE
from deepresearch.understanding.embedded.question import is_person_text
from deepresearch.understanding.embedded.role_forms import possessive_role
from deepresearch.understanding.linking import concept as new_concept
from deepresearch.understanding.linking import linker_for, mentions

MAX_HOPS = 2
MIN_SIMILARITY = 0.2  # a sentence less close than this to the relation's words does not state it (cosine)
MIN_SHARE = 0.3  # ... or, without an embedder, holds less than this share of those words
MODIFIED_KIND_FIT = 0.5  # cosine: a description this close to the role with its narrowing words is of its kind
CLAUSE_SAID = 0.55  # cosine: a sentence naming the subject this close to the role's clause says the role


def find_bridge(
    hop: Hop,
    subject: dict,
    text: str,
    asked: set[str],
    sim: Similarity,
    backend=None,
    known: AbstractSet[str] = frozenset(),
    modified: str = "",
) -> dict | None:
    """The bridge concept found in `subject`'s retrieved `text`: a name given by the sentence closest
    in meaning to the question's words for the relation (`hop.phrase`: "potter the brannock vase is
    named for"), among the sentences that give a name the question does not. A role that asks for
    a person (`hop.person`) takes no name linked to a place, a state or a thing ("the architect of
    Hagia Sophia" is no empire). `asked`: the question's words. `modified`: the role with the words the
    question narrows it by ("retail chain"), which a document's description may say in other words
    ("retail corporation"). None when no sentence is close enough.

    Read once per text and question: the gap check asks again at every iteration, of the same
    subject's same best sources (a new copy of the concept each time)."""
    args = (
        hop,
        subject.get("title"),
        subject["name"],
        text,
        frozenset(asked),
        sim,
        backend,
        frozenset(known),
        modified,
    )
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
    hop: Hop,
    title: str | None,
    subject_name: str,
    text: str,
    asked: frozenset,
    sim: Similarity,
    backend,
    known: frozenset,
    modified: str,
) -> dict | None:
    subject_words = set(tokens(title or subject_name))
    linker = linker_for(backend) if backend is not None else None
    sents = source_sentences(text, 800) or [text]
    scores = sim.scores(hop.phrase, sents)
    # a sentence that says the relation in the question's words ("writer"), or its verb ("directed" for
    # "director"), is read first,
    # closest to the relation said of the subject ("person who directed La Dolce Vita") first: it
    # names the subject where a sentence merely near the role ("the film stars ...") does not
    role_words = set(stems([w for w in tokens(hop.phrase) if w not in STOP])) - set(stems(sorted(subject_words)))
    says = [
        bool(role_words & set(stems(tokens(x)))) or any(says_role(w, hop.relation) for w in tokens(x)) for x in sents
    ]
    if any(says):
        of_subject = sim.scores(f"{hop.phrase} {title or subject_name}", sents)
        scores = [of_subject[i] if says[i] else scores[i] for i in range(len(sents))]
    floor = MIN_SIMILARITY if sim.embedder is not None else MIN_SHARE
    lead = [i == 0 and sents[0].rstrip().endswith(").") for i in range(len(sents))]  # "Title (description)."
    # the closest sentences first; the text's description line only when no sentence gives a name
    for idx in sorted(range(len(sents)), key=lambda i: (lead[i], not says[i], -scores[i], i)):
        if scores[idx] < floor and not lead[idx]:
            continue
        sent = sents[idx]
        said = [m for m in re.finditer(r"[^\W_]+", fold(sent)) if says_role(m.group(0), hop.relation)]
        role = [m.start() for m in said]
        best = None
        for pos, name in names_in(sent, skip_first=False):
            words = [w for w in tokens(name) if w not in STOP]
            if not words or set(words) <= asked | subject_words:
                continue  # a name of the question, or the subject itself
            found, exact = linked_title(name, words, linker)
            if pos == 0 and " " not in name and not (exact or linker is None):
                continue  # a sentence's capitalized first word ("Described as ...") is a name only as a title
            if (found or name).lower() in known or (hop.person and not_a_person(name, found, backend, linker)):
                continue
            linked = (2 if exact else 1 if found else 0) if linker is not None else 2
            near = -min((abs(pos - r) for r in role), default=0)  # nearest the role word, when the sentence says it
            kind = of_kind(found, hop, backend)  # "the country where ..." lands on a country, when known
            if not kind and found and modified and sim.embedder is not None and getattr(backend, "description", None):
                # "the retail chain": a "retail corporation" by meaning, the question's narrowing words with it
                kind = sim.scores(modified, [backend.description(found) or found])[0] >= MODIFIED_KIND_FIT
            # the role said right before the name ("The film stars Ada Brannock", "directed by ...") names
            # its filler, whatever else the role's word names
            right_after = any(re.fullmatch(r"\s(?:by\s)?", fold(sent)[m.end() : pos]) for m in said)
            if not kind and not right_after and told_by_kind(hop, backend):
                continue  # "the capital of Tanzania" is no region, whatever the sentence near the role names
            if best is None or (kind, linked, near) > best[0]:
                best = ((kind, linked, near), name, found)
        if best is not None and not (linker is not None and best[2] is None and best[0][1] == 0 and not role):
            _, name, found = best
            concept = new_concept(found or name, " ".join(tokens(name)), found, origin="bridge")
            concept["sentence"] = " ".join(sent.split())[:400]
            concept["via"] = subject_name
            return concept
    return None


def bridges(
    analysis: Analysis,
    concepts: list[dict],
    evidence: list[dict],
    text_of,
    sim: Similarity,
    backend=None,
    by_description: bool = True,
) -> list[dict]:
    """The next bridge concept, if any: for a question that reaches its subject through a
    relation (`analysis.hops`), the name the subject's retrieved text gives for it. One hop per
    relation of the question ("the wife of the author of X" has two), at most MAX_HOPS; the second
    is looked for in the first bridge's text once that is retrieved. `by_description`: when no
    sentence says the role, follow it to the named thing whose description fits it (`follow_role`)."""
    found_bridges = [c for c in concepts if c.get("origin") == "bridge"]
    hops = hops_followed(concepts)
    if hops >= min(len(analysis.hops), MAX_HOPS):
        return []
    hop = analysis.hops[-(hops + 1)]
    subjects = (
        [found_bridges[-1]]
        if found_bridges
        else nearest_the_role(hop, [c for c in concepts if c.get("origin") != "described"], analysis.question)
    )
    appositive = not set(tokens(hop.phrase)) & RELATIVE  # "the city of Rome", not "the country that borders X"
    if not found_bridges and appositive and any(of_kind(c.get("title"), hop, backend) for c in subjects):
        return []  # "the city of Rome" is Rome, which its description says is a city: no hop
    asked = set(analysis.words)
    known = {(c.get("title") or c["name"]).lower() for c in concepts}
    outer = analysis.hops[0]
    texts = [
        (c, s, f"{s.get('title', '')}. {text_of(s)}")
        for c in subjects
        for s in sources_for(c, evidence, text_of, limit=2)  # no text past the second is read
    ]
    if not appositive and (shared := _named_by_each(hop, subjects, texts, backend, known)) is not None:
        return [shared]
    for c, s, text in texts:
        if hop != outer and appositive:
            # the outermost role named by this text already, by a thing its description says is of
            # that kind: the roles between were the same thing said more closely ("the conductor of
            # the first recording of X" is X's conductor), and the hops are all followed at once; not
            # past a relative clause ("the country that borders X" is another country than X)
            found = find_bridge(outer, c, text, asked, sim, backend, known)
            if found and of_kind(found.get("title"), outer, backend):
                found["source"], found["hops"] = s.get("key"), len(analysis.hops) - hops
                return [found]
        found = find_bridge(
            hop, c, text, asked, sim, backend, known, role_with_modifiers(analysis.question, hop.relation)
        )
        if found:
            found["source"] = s.get("key")
            return [found]
    # no text of the subject's names the role's filler: a document retrieved since whose own text says
    # it fills the role for the subject ("... co-founded the Vellmark Glass Works" for its founder)
    for c in subjects:
        found = filler_by_its_own_text(hop, c, evidence, text_of, sim, backend, known)
        if found:
            return [found]
    # no sentence says the role: the named thing whose description fits it, once the searches for
    # the role have had a round (an earlier search may bring the sentence that says it)
    for c, s, text in texts if by_description else []:
        found = follow_role(hop, c, text, asked, sim, backend, known)
        if found:
            found["source"] = s.get("key")
            return [found]
    return []


def nearest_the_role(hop: Hop, concepts: list[dict], question: str) -> list[dict]:
    """The concepts, the one the question names right after the role word first ("the inventor of
    dynamite" starts from Dynamite, not from the "patents" asked of him): those after it before those
    before it, nearer first; the question's order otherwise."""
    words = tokens(question)
    at = next((i for i, w in enumerate(words) if says_role(w, hop.relation)), None)
    if at is None:
        return concepts

    def key(c: dict) -> tuple[int, int]:
        if possessive_role(question, c.get("phrase") or c["name"])[-1:] == [hop.relation]:
            return (-1, 0)  # "X's director": X's own
        phrase = tokens(c.get("phrase") or c["name"])
        starts = [i for i in range(len(words) - len(phrase) + 1) if phrase and words[i : i + len(phrase)] == phrase]
        if not starts:
            return (2, 0)
        after = [i - at for i in starts if i > at]
        return (0, min(after)) if after else (1, min(at - i for i in starts))

    return sorted(concepts, key=key)


def _named_by_each(hop: Hop, subjects: list[dict], texts: list[tuple], backend, known: AbstractSet[str]) -> dict | None:
    """A role whose clause names several things ("the country that shares Lake X with Y"): the one
    thing of the role's kind that each of their texts names, when
    exactly one is; None otherwise. Not for a person's role: a text's "teacher" or "student" names a
    kind of person as often as a person."""
    linker = linker_for(backend) if backend is not None else None
    if len(subjects) < 2 or linker is None or not told_by_kind(hop, backend):
        return None
    named: list[set[str]] = []
    for c in subjects:
        found: set[str] = set()
        for t in (t for d, _, text in texts if d is c for t in mentions(text, linker, skip=set(known))):
            found |= set(as_kind(t, hop, backend, linker, known))
        named.append(found)
    common = set.intersection(*named) if named else set()
    if len(common) != 1:
        return None
    title = common.pop()
    sentence = next((x for _, _, text in texts for x in source_sentences(text, 800) if bare_title(title) in x), "")
    concept = new_concept(title, " ".join(tokens(bare_title(title))), title, origin="bridge")
    concept["sentence"] = " ".join(sentence.split())[:400]
    concept["via"] = subjects[0]["name"]
    return concept


def filler_by_its_own_text(
    hop: Hop, subject: dict, evidence: list[dict], text_of, sim: Similarity, backend, known: AbstractSet[str]
) -> dict | None:
    """A retrieved document about one thing (a backend that describes its documents) whose own text
    names the subject and says the role in a sentence ("Pell Varo ... co-founded the Vellmark Glass
    Works" for "the founder of the Vellmark Glass Works"), the closest such sentence to the role as the
    subject's; a role that asks for a person takes only people. None when no text says so."""
    describe = getattr(backend, "describe", None) if backend is not None else None
    if describe is None:
        return None
    said = subject.get("title") or subject["name"]
    name = set(tokens(bare_title(said))) - STOP
    own = {s.get("key") for s in sources_for(subject, evidence, text_of, limit=len(evidence))}
    clause_said = bool(set(tokens(hop.phrase)) & RELATIVE)
    found: list[tuple[str, str, dict]] = []
    for s in evidence:
        title = s.get("title") or ""
        if not title or s.get("key") in own or title.lower() in known or set(tokens(bare_title(title))) <= name:
            continue
        if hop.person and not is_person_text(describe(title)):
            continue
        if told_by_kind(hop, backend) and not of_kind(title, hop, backend):
            continue  # "the city where X ...": a period's text that says "cities" is no city
        sents = [x for x in source_sentences(text_of(s), 800) if name and name <= set(tokens(x))]
        # a role said with a clause ("the scientist who found X") is said by a sentence as close to that
        # clause as the role's own words ("... the Ossian Prize for the finding of X"), without the role word
        clause = (
            sim.scores(f"{hop.phrase} {bare_title(said)}", sents)
            if sents and clause_said and sim.embedder is not None
            else []
        )
        for i, sent in enumerate(sents):
            if not any(says_role(w, hop.relation) for w in tokens(sent)):
                if clause and clause[i] >= CLAUSE_SAID:
                    found.append((title, sent, s))
                continue
            # the role itself, of the subject: not another role ("the cultural capital") nor the
            # role of another thing ("Capital of Vell province, Ostria")
            if not qualified_role(sent, hop.relation, set(tokens(hop.phrase))) and not role_of_another(
                sent, hop.relation, bare_title(said)
            ):
                found.append((title, sent, s))
    if not found:
        return None
    scores = sim.scores(f"{hop.relation} of {bare_title(said)}", [sent for _, sent, _ in found])
    # a sentence that says the role of the subject in so many words ("the capital of Ostria") before
    # one that says it of another thing too ("the capital of Vell province, Ostria")
    direct = [_role_of(sent, hop.relation, bare_title(said)) for _, sent, _ in found]
    best = max(range(len(found)), key=lambda i: (direct[i], scores[i], -i))
    if sim.embedder is not None and scores[best] < MIN_SIMILARITY:
        return None
    title, sent, _ = found[best]
    concept = new_concept(title, " ".join(tokens(bare_title(title))), title, origin="bridge")
    concept["sentence"] = " ".join(sent.split())[:400]
    concept["via"] = subject["name"]  # named by its own text: that text covers it (no `source`)
    return concept


def _role_of(sentence: str, relation: str, name: str) -> bool:
    """Does the sentence say the role of the thing by name ("capital of Ostria", "Ostria's capital")?"""
    words, named = tokens(sentence), tokens(name)
    n = len(named)
    for i, w in enumerate(words):
        if not says_role(w, relation):
            continue
        after = words[i + 1 : i + 3 + n]
        if after[:1] == ["of"] and (after[1 : 1 + n] == named or after[1:2] == ["the"] and after[2 : 2 + n] == named):
            return True
        if i >= n and words[i - n : i] == named:  # "Ostria capital", the possessive's mark dropped
            return True
    return False


ROLE_FIT = 0.1  # cosine: a thing whose description is less close to the role does not fill it


def follow_role(
    hop: Hop, subject: dict, text: str, asked: set[str], sim: Similarity, backend, known: AbstractSet[str]
) -> dict | None:
    """The role's filler among the things the subject's text names, when no sentence says the role in
    so many words ("a play by Oscar Wilde" for "the creator of" the play): the named thing whose own
    description is closest in meaning to the role (a role that asks for a person takes only people),
    never chosen by a table of roles. None without a backend that describes its documents."""
    linker = linker_for(backend) if backend is not None else None
    description = getattr(backend, "description", None) if backend is not None else None
    if linker is None or description is None:
        return None
    own = set(tokens(subject.get("title") or subject["name"]))
    candidates = [
        t
        for t in mentions(text, linker, skip={k.lower() for k in known})
        if not set(tokens(bare_title(t))) <= asked | own
    ]
    if hop.person:
        candidates = [t for t in candidates if is_person_text(backend.describe(t))]
    elif told_by_kind(hop, backend):  # a kind of thing ("the capital of X"): only what says it is one
        candidates = [k for t in candidates for k in as_kind(t, hop, backend, linker, known)]
    if not candidates:
        return None
    # the role as the subject's: "creator of The Importance of Being Earnest, play" is a playwright
    said = subject.get("title") or subject["name"]
    role = f"{hop.relation} of {bare_title(said)}, {description(said) if subject.get('title') else ''}".strip(", ")
    scores = sim.scores(role, [f"{bare_title(t)}: {description(t)}" for t in candidates])
    best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
    if scores[best] < ROLE_FIT:
        return None
    title = candidates[best]
    words = tokens(bare_title(title))
    sentence = next((x for x in source_sentences(text, 800) if set(words) <= set(tokens(x))), "")
    concept = new_concept(title, " ".join(words), title, origin="bridge")
    concept["sentence"] = " ".join(sentence.split())[:400]
    concept["via"] = subject["name"]
    return concept


def hops_followed(concepts: list[dict]) -> int:
    """How many of the question's roles the bridges found so far have followed."""
    return sum(int(c.get("hops") or 1) for c in concepts if c.get("origin") == "bridge")
