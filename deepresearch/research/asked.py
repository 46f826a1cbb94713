"""What the question asks, and whether the retrieved sentences answer it.

An *asked thing* is one thing the question wants to know: its subject (a thing the question names, one
it describes, or one it reaches through a role: "the conductor of X"), the question's words for what
is asked of it, and the kind of answer wanted (a year, a place, a name, a number, ...). A question may
ask several ("What are the flags of X and Y?" asks one of each thing; "how many ..., and who ...?" two).

`knowledge_gap` checks each after every round (`open_asked`): an asked thing is answered when, of its
subject's retrieved sentences, one of the few closest in meaning to what is asked holds an answer of
the kind wanted that is not the subject's own name, and is at least `ANSWERED` close. One reached
through a role is unanswered until the role's filler is found (deepresearch.research.bridges) and its
own text answers. An unanswered asked thing is a gap: the loop goes on while budget remains.

Questions that want an explanation, an overview or a comparison (no short answer) ask no such
thing: coverage of their concepts decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.answer import lead_line, sentences_of
from deepresearch.research.asked_kind import KNOWN, NAMES, kind_check
from deepresearch.research.bridges import MAX_HOPS, hops_followed, nearest_the_role
from deepresearch.research.coverage import sources_for
from deepresearch.research.lifespan import lifespan_says
from deepresearch.research.persons import names_a_person
from deepresearch.research.role_kinds import fills_kind
from deepresearch.research.roles import (
    qualified_role,
    role_of_another,
    role_of_its_own,
    role_said_of,
    role_with_modifiers,
    says_role,
)
from deepresearch.research.sentences import of_its_own_subject, said_of_a_pronoun, sort_said, type_match
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, tokens, without_words
from deepresearch.understanding.analysis import Analysis, Part

SHORT = ("year", "place", "person", "number", "thing")  # kinds of answer a sentence can be checked for
CLEARLY = 0.25  # how much closer than the floor a sentence must be to answer a "thing" without a name
TOP = 3  # the closest sentences looked at: closeness in meaning does not tell near sentences apart
# cosine: a sentence less close to what is asked does not answer it. Set on the generated development
# seed 1002: every fact and bridge question whose report held the answer passed at this floor
ANSWERED = 0.15
ANSWERED_SHARE = 0.5
RESTATED = 0.6  # cosine, names masked: a sentence this close to the whole question says it again, with its answer  # ... or, without an embedder, the share of the asked words it holds
MAX_SOURCES = 4  # of the subject's sources, the first ones read
QUESTION_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "name"}


@dataclass(frozen=True)
class Asked:
    """One thing the question asks. `subject`: the concept's name it is asked of (None: the question as
    a whole); `role`: the role still to follow to reach the subject, from the thing named `via`."""

    text: str
    kind: str
    subject: str | None = None
    role: str | None = None
    via: str | None = None
    words: str = ""  # what is asked of the subject: the part's words less those that name or reach it

    @property
    def gap(self) -> str:
        """The gap as a phrase: what is still unknown ("conductor of X", "flag of Y")."""
        if self.role and self.via:
            return f"{self.role} of {self.via}"
        words = " ".join(w for w in tokens(self.words) if w not in STOP and w not in QUESTION_WORDS)
        if self.subject:
            return f"{words} of {self.subject}" if words else self.subject
        return self.text

    def data(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None} | {"gap": self.gap}


def asked_things(analysis: Analysis, concepts: list[dict]) -> list[Asked]:
    """What the question asks, from its analysis and the research's concepts so far (a role's filler
    becomes the subject once found)."""
    if (analysis.broad and not analysis.compared) or analysis.comparison:
        return []  # an overview or a comparison has no short answer: coverage of its concepts decides
    parts = [p for p in analysis.parts or (Part(analysis.read, analysis.focus.kind),) if p.kind in SHORT]
    if not parts:
        return []
    named = [c for c in concepts if c.get("origin") in ("question", "model")]
    compared = [c.name for c in analysis.compared]
    if len(compared) >= 2:  # one for each thing compared, asked without the others' names
        others = {w for name in compared for w in tokens(name)}
        return [Asked(p.text, p.kind, subject=name, words=_less(p.text, others)) for p in parts for name in compared]
    bridges = [c for c in concepts if c.get("origin") == "bridge"]
    described = [c for c in concepts if c.get("origin") == "described"]
    hops, followed = analysis.hops[:MAX_HOPS], hops_followed(concepts)
    if hops and followed < len(hops):  # a role still to follow (innermost first, as bridges does)
        hop = hops[-(followed + 1)]
        near = nearest_the_role(hop, named, analysis.question)
        via = bridges[-1]["name"] if bridges else (near[0]["name"] if near else None)
        if via is not None:
            # what is asked beyond the role: nothing when the role's filler is itself the answer ("who
            # wrote X": its name, which X's own text may give), else what is asked of the filler
            reach = _named_words(named) | _role_words(hops, analysis.question)
            reach |= set(tokens(via))
            # roles still beyond this one ("the teacher of the philosopher who ..."): asked of its filler
            beyond = [h.relation for h in hops[: len(hops) - followed - 1]]
            # the outermost role is the noun asked ("name the harbour of the country where ..."): its
            # filler is the answer, and every other word of the question only reaches it
            filler = hop == hops[0] and analysis.focus.noun == hop.relation
            return [
                Asked(
                    p.text,
                    p.kind,
                    role=hop.relation,
                    via=via,
                    words=""
                    if filler
                    else " ".join([*beyond, _beyond(p.text, reach | _filler_noun(analysis, p.text))]).strip(),
                )
                for p in parts
            ]
    subject = bridges[-1:] or described[-1:] or (named[:1] if len(named) == 1 else [])
    if not subject:
        return [Asked(p.text, p.kind, words=p.text) for p in parts]
    name = subject[0]["name"]
    # through a role, what is asked is asked of the thing it leads to: the words that reach it go
    # ("the year the X of Y died" asks the year its filler died), with the subject's own name
    reach = _named_words(named) | _role_words(hops, analysis.question)
    left = set(tokens(name)) | set(tokens(bare_title(subject[0].get("title") or ""))) | (reach if bridges else set())
    return [
        # "who designed X": the role's filler is itself the answer, once found (nothing more is asked)
        Asked(
            p.text,
            p.kind,
            subject=name,
            words="" if bridges and not _beyond(p.text, left | _filler_noun(analysis, p.text)) else _less(p.text, left),
        )
        for p in parts
    ]


def _named_words(named: list[dict]) -> set[str]:
    """The words of the things the question names, as named and as the question says them ("sagas")."""
    return {w for c in named for w in [*tokens(c["name"]), *tokens(c.get("phrase") or "")]}


def _role_words(hops, question: str) -> set[str]:
    """The words that say the roles, with those the question narrows a role by ("retail chain that
    ... co-founded"): they reach the subject, and are not asked of it."""
    return {w for h in hops for w in [*tokens(h.phrase), *tokens(role_with_modifiers(question, h.relation))]}


def _filler_noun(analysis: Analysis, text: str) -> set[str]:
    """The noun asked when it names the role's filler itself ("which company develops X" asks for
    the company), or when this part of the question says no role ("... and for which event?" is asked
    of the named thing); a noun of another kind asked beside the role ("the nationality of the
    explorer who ...") is asked of the filler."""
    noun = analysis.focus.noun or ""
    roles = {h.relation for h in analysis.hops}
    return {noun} if not roles or noun in roles or not roles & set(tokens(text)) else set()


def _beyond(text: str, words: set[str]) -> str:
    """The content words of the text not in `words` ("" when there are none)."""
    return " ".join(w for w in tokens(text) if w not in words and w not in STOP and w not in QUESTION_WORDS)


def _less(text: str, words: set[str]) -> str:
    """The text without the words of `words`; the text itself when nothing else is asked in it."""
    kept = " ".join(w for w in text.split() if not (set(tokens(w)) and set(tokens(w)) <= words))
    content = [w for w in tokens(kept) if w not in STOP and w not in QUESTION_WORDS]
    return kept if content else text


def answer_in(
    asked: Asked, analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity, backend=None
) -> str | None:
    """The retrieved sentence that answers the asked thing, or None. `backend`: the search backend whose
    descriptions say what kind of thing each document is (a sentence answers "which currency ..." only
    when it names a thing whose description is close in meaning to a currency)."""
    by_name = {c["name"]: c for c in concepts}
    if asked.role:  # its subject is not found yet: unanswered, unless its name is what is asked
        if asked.words or asked.kind not in NAMES or asked.via not in by_name:
            return _restated(asked, analysis, evidence, text_of, sim)
        subject = by_name[asked.via]
        hop = next((h for h in analysis.hops if h.relation == asked.role), None)
        # a kind of thing asked ("the capital of X"): only a sentence naming a thing that is one answers
        # the role said plainly, not another one ("the cultural capital of X" for "the capital of X")
        plain = set(tokens(analysis.question))
        # the subject's own text says the role of it with a pronoun ("Its capital and largest city is Y")
        own = {x for s in sources_for(subject, evidence, text_of, limit=MAX_SOURCES) for x in sentences_of(s, text_of)}
        fits = (
            (
                lambda sent: (
                    (
                        fills_kind(sent, hop, backend)
                        or role_said_of(sent, hop.relation, subject["name"])
                        or (sent in own and role_of_its_own(sent, hop.relation))
                    )
                    and not qualified_role(sent, hop.relation, plain)
                    and not role_of_another(sent, hop.relation, subject["name"])
                    # "who built X": a sentence naming only a dynasty, a place or a thing names no one
                    and (
                        not hop.person
                        or names_a_person(sent, plain | set(tokens(subject["name"])), backend, subject["name"])
                    )
                )
            )
            if hop is not None
            else None
        )
        said = _answer_in(asked, analysis, concepts, evidence, text_of, sim, backend, subject, fits)
        return said if said is None or fits is None or fits(said) else None
    return _answer_in(asked, analysis, concepts, evidence, text_of, sim, backend, by_name.get(asked.subject or ""))


def _answer_in(
    asked: Asked,
    analysis: Analysis,
    concepts: list[dict],
    evidence: list[dict],
    text_of,
    sim: Similarity,
    backend,
    subject: dict | None,
    fits: Callable[[str], bool] | None = None,
) -> str | None:
    own = sources_for(subject, evidence, text_of, limit=MAX_SOURCES) if subject else evidence[:MAX_SOURCES]
    if subject is not None and subject.get("origin") == "described" and not asked.role and not subject.get("asked_of"):
        # a thing found by what the question says of it is the answer itself ("which instrument has ..."):
        # answered once its own text is retrieved and holds the sentence that matched the description
        said = (subject.get("sentence") or "")[:80]
        return next((x for s in own[:1] for x in sentences_of(s, text_of) if said and said in x), None)
    name = set(tokens(bare_title(subject.get("title") or subject["name"]))) if subject else set()
    mask = (
        frozenset(tokens(subject["name"]) + tokens(bare_title(subject.get("title") or ""))) if subject else frozenset()
    )
    # a role asked of a filler found on the way ("the wife of the scientist who ..."): the question's
    # words for the way there describe the filler, not what is asked of it
    said = f"{asked.role} of {subject['name']}" if asked.role and subject and subject.get("origin") == "bridge" else ""
    query = without_words(said or (asked.text if asked.role else asked.words or asked.text), mask)
    # the subject's own sentences, and those of other sources that name it ("Tokyo is the capital of Y")
    found = [(sent, s) for s in own for sent in sentences_of(s, text_of)]
    if subject:
        found += [
            (sent, s)
            for s in evidence
            if s not in own
            for sent in sentences_of(s, text_of)
            if name <= set(tokens(sent))
            and not lead_line(sent, s)
            and not of_its_own_subject(sent, s["title"], text_of(s))
        ]
    if subject is not None and subject.get("origin") == "bridge" and not asked.words and not asked.role:
        # the role asked, its filler found: the sentence that named it answers, its own text retrieved or not
        return subject.get("sentence") or (found[0][0] if found else None)
    if not found:
        return None
    if subject is not None and own and not _content(query):
        return found[0][0]  # nothing is asked but the subject itself ("what did X do?"): its own text says
    if asked.kind == "year" and (said := lifespan_says(query, found, sim)):
        return said
    texts = [without_words(sent, mask) for sent, _ in found]
    scores = sim.scores(query, texts)
    floor = ANSWERED if sim.embedder is not None else ANSWERED_SHARE
    words = frozenset(analysis.words)
    ranked = sorted(range(len(found)), key=lambda i: -scores[i])
    # a number the question states ("which 1964 film ..."): a sentence that says it comes first, however
    # far its other words are from the question's
    stated = {w for w in tokens(query) if w.isdigit()}
    held = {i for i in ranked if stated and stated <= set(tokens(found[i][0]))}
    ranked = [i for i in ranked if i in held] + [i for i in ranked if i not in held]
    scores = [max(scores[i], floor) if i in held else scores[i] for i in range(len(scores))]
    of_kind = kind_check(analysis, asked.kind, asked.role, subject, backend, sim)
    if of_kind is not None:
        # "which currency ...": the closest sentence that names a thing of that kind, when close
        # enough, before one naming a thing whose kind nothing tells; a sentence naming only things
        # of other kinds answers nothing
        # (a "Title (description)." line read as a sentence: its description's capital is no name)
        close = [
            (i, _as_sentence(*found[i]) if lead_line(*found[i]) else found[i][0]) for i in ranked if scores[i] >= floor
        ]
        named = next((i for i, x in close if of_kind(x) == KNOWN), None)
        named = named if named is not None else next((i for i, x in close if of_kind(x)), None)
        return found[named][0] if named is not None else None
    # a role's filler asked: beyond the closest sentences (closer to what reaches the role: "the
    # country where X is"), one that says the role of its subject in so many words ("Y, the capital of X")
    for n, i in enumerate(ranked if fits is not None and asked.role and asked.via else ranked[:TOP]):
        sent, source = found[i]
        said = _as_sentence(sent, source) if lead_line(sent, source) else sent
        if fits is not None and not fits(sent):
            continue
        if n >= TOP and not role_said_of(sent, asked.role or "", asked.via or ""):
            continue
        if n == 0 and asked.kind == "thing" and scores[i] >= floor + CLEARLY:
            return sent  # clearly the closest: a thing asked for need not be a name ("... of modern philosophy")
        if type_match(asked.kind, without_words(said, mask) if asked.kind != "year" else said, words) or sort_said(
            asked.text, said, words
        ):
            return sent if scores[i] >= floor else None
    if asked.kind == "thing" and scores[ranked[0]] >= floor + CLEARLY:
        return found[ranked[0]][0]  # a thing asked for need not be a name ("what method ...": salt-curing)
    return None


def _content(text: str) -> list[str]:
    return [w for w in tokens(text) if w not in STOP and w not in QUESTION_WORDS]


def _restated(asked: Asked, analysis: Analysis, evidence: list[dict], text_of, sim: Similarity) -> str | None:
    """A retrieved sentence that says what the question asks nearly as the question does, with the
    answer in it ("X was the ruler of Y from 1740 until her death" for "name the ruler of Y from 1740
    until her death"): it answers whatever the role leads to."""
    # a sentence that says the question again says what it is about: a pronoun for its subject ("to
    # the south it is bounded by ...", of some other sea) restates nothing unless it names the thing
    # the role is of or says the role
    via, role = set(tokens(asked.via or "")), asked.role or ""
    found = [
        (sent, s)
        for s in evidence
        for sent in sentences_of(s, text_of)
        if not lead_line(sent, s)
        and (
            not said_of_a_pronoun(sent)
            or not via
            or via <= set(tokens(sent))
            or any(says_role(w, role) for w in tokens(sent))
        )
    ]
    if not found or sim.embedder is None:
        return None
    # without the named thing's words, which any sentence of its own text shares: the rest must match
    # ("the Vellmark Bridge is in Osterby" does not say where the bridge's builder was born)
    mask = frozenset(w for c in analysis.subjects for w in tokens(c.name)) | frozenset(tokens(asked.via or ""))
    scores = sim.scores(without_words(asked.text, mask), [without_words(sent, mask) for sent, _ in found])
    best = max(range(len(found)), key=scores.__getitem__)
    if scores[best] >= RESTATED and type_match(asked.kind, found[best][0], frozenset(analysis.words)):
        return found[best][0]
    return None


def open_asked(
    analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity, backend=None
) -> tuple[list[Asked], list[Asked]]:
    """(every asked thing, those no retrieved sentence answers yet)."""
    asked = asked_things(analysis, concepts)
    return asked, [a for a in asked if answer_in(a, analysis, concepts, evidence, text_of, sim, backend) is None]


def _as_sentence(lead: str, source: dict) -> str:
    """A "Title (description)." line as a sentence would say it (its description in lower case)."""
    at = len(source.get("title", "")) + 2
    return lead[:at] + lead[at : at + 1].lower() + lead[at + 1 :] if lead[at - 1 : at] == "(" else lead


def answering(
    analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity, backend=None
) -> list[tuple[str, dict]]:
    """The sentence that answers each asked thing, with the source it is quoted from: what the loop
    took for the answer, which the report's answer paragraph must then show."""
    out: list[tuple[str, dict]] = []
    for a in asked_things(analysis, concepts):
        said = answer_in(a, analysis, concepts, evidence, text_of, sim, backend)
        source = next((s for s in evidence if said and said in sentences_of(s, text_of)), None)
        if said and source is not None and all(said != x for x, _ in out):
            out.append((said, source))
    return out
