"""What a question asks for, worked out from its words (no model):

- its **focus**: the wh-word and the kind of answer it wants (a year, a place, a person, a number,
  a thing), and the words the answer sentence should use ("born", "commissioned", "reign");
- its **relation**: the role word through which it reaches its subject ("the *architect* of X",
  "the *emperor* who commissioned X"), which makes the subject a bridge to another thing;
- its **aspects**: words that shape what a section answers ("origins", "uses", "beliefs");
- a **description** of a subject it does not name ("the coldest moon of the ringed planet",
  "the instrument with 88 keys");
- the things it **compares**.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, singular, stems, tokens
from deepresearch.understanding.analysis import Focus
from deepresearch.understanding.embedded import forms
from deepresearch.understanding.embedded.clauses import hop_clause
from deepresearch.understanding.embedded.forms import EARLIER, MORE, VERBS, choice, choices_of
from deepresearch.understanding.embedded.nouns import (
    ASPECTS,
    DESCRIPTORS,
    MEASURE_NOUNS,
    PERSON_NOUNS,
    PLACE_NOUNS,
    TIME_NOUNS,
    is_person_noun,
)
from deepresearch.understanding.embedded.role_forms import relations_of
from deepresearch.understanding.linking import SCAFFOLD

# fmt: off
# The kind of answer a question wants, from its opening words.
_YEAR = re.compile(r"^(?:when|in what year|in which year|what year|which year|in which decade|in what decade)\b")
_PLACE = re.compile(r"^(?:where|in which|in what|from which|from what|at which|on which)\s+"
                    r"(?:city|country|town|state|region|republic|continent|place|province|island|kingdom|empire|"
                    r"museum|building|river|sea|ocean|mountain)s?\b|^where\b")
_PERSON = re.compile(r"^(?:who|whom|whose)\b")
_NUMBER = re.compile(r"^how (?:many|much|long|tall|high|old|big|large|deep|far|fast|heavy|wide)\b")
# fmt: on
# fmt: off
_WH = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "in", "from", "at", "on", "name"}
# fmt: on


_AS_WHICH = (
    # "name the river that ..." and the longer ways of asking a name: "which river ..."
    (re.compile(r"^(?:name|identify|give the name of|what (?:is|was) the name of)\s+(?:the|a|an|one)\s+"), "which "),
    # "what is the spice from X called?", "which is a grass grown ...", "who was the physicist who ..."
    (re.compile(r"^(?:what|which) (?:is|was|are|were) (?:the|a|an) (.+?)(?: called| known as)?$"), r"which \1"),
    (re.compile(r"^which (?:is|was|are|were) (?:the|a|an) "), "which "),
    (re.compile(r"^who (?:is|was|were) (?:the|a|an) "), "which "),
)


def as_which(question: str) -> str:
    """A question that asks for a thing of a kind, in the one form "which KIND ..." (folded)."""
    for pattern, repl in _AS_WHICH:
        new = pattern.sub(repl, question, count=1)
        if new != question:
            return new
    return question


_INNER_PREPOSITION = r"(?:in|from|at|on|by|of|for|to|during|into|with|under|near|after|before|since)"
_POLAR_START = re.compile(r"^(?:is|are|was|were|do|does|did|has|have|had|can|could)\b")


def answer_kind(question: str) -> tuple[str, str | None]:
    """(kind of answer, the noun after which/what)."""
    q = fold(" ".join(question.split())).strip(" ?")
    q = re.sub(r"^(?:and|so|tell me|please|do you know)\s+", "", q)
    said = q.split()  # as typed: "what are the X" reads as "which X" below, without its verb
    q = as_which(q)
    # a preposition may come first ("into which sea", "through what city"): any one word before it
    m = re.match(r"^(?:(?!which |what )[a-z]+ )?(?:which|what)\s+(.*)$", q)
    noun = None
    if m:
        head = []
        for w in m.group(1).split()[:3]:
            w = w.strip(",;:")
            if w in STOP or w in SCAFFOLD or w in VERBS or w.endswith("ed") or w in forms.PARTICIPLES:
                break
            head.append(w)
        head = forms.subject_phrase(head, m.group(1).split(), said)
        noun = singular(head[-1]) if head else None
    if (offered := choice(q)) and noun not in TIME_NOUNS | MEASURE_NOUNS:
        asks = set(re.findall(r"\w+", q[: offered.start()]))
        if asks & EARLIER:
            return "year", noun
        if asks & MORE:
            return "number", noun
    if _YEAR.match(q) or (noun in TIME_NOUNS):
        return "year", noun
    if _NUMBER.match(q) or noun in MEASURE_NOUNS:
        return "number", noun
    if _PLACE.match(q) or noun in PLACE_NOUNS:
        return "place", noun
    if _PERSON.match(q) or noun in PERSON_NOUNS:
        return "person", noun
    if re.match(r"^(?:(?!which |what )[a-z]+ )?(?:which|what)\b", q):
        return "thing", noun
    # a question word inside a clause ("X was painted by an artist who held which title?"): its phrase
    # says what is asked
    inner = re.search(rf"\b(?:{_INNER_PREPOSITION} )?(?:which|what) [a-z]|\bhow (?:many|much)\b", q)
    if inner is not None and inner.start() > 0 and not _POLAR_START.match(q) and not _BROAD.match(q):
        return answer_kind(q[inner.start() :])
    # a statement that ends in its question word ("... whose capital is what?", "... ruled by whom?")
    if (end := re.search(r"\b(what|who|whom|where|when)$", q)) is not None and not _POLAR_START.match(q):
        return {"what": "thing", "where": "place", "when": "year"}.get(end.group(1), "person"), noun
    return "other", noun


_BROAD = re.compile(
    r"^(?:how|why|explain|describe|tell me|give me|give an|an overview|overview|summari[sz]e|"
    r"what do we know|what is known|introduce|discuss)\b"
)
_BROAD_ASPECT = re.compile(
    r"\b(?:history|overview|story|significance|importance|background|introduction|"
    r"evolution|development|origins?)\b"
)


def is_broad(question: str) -> bool:
    """A question without a short answer: how or why something is, an explanation, an overview,
    a history ("How does X work?", "Tell me about X.", "What is the history of X?", "Explain X",
    "What is X?"). "How many", "how long" and the like ask for a number: not broad."""
    q = fold(" ".join(question.split())).strip(" ?.!")
    q = re.sub(r"^(?:and|so|please|can you|could you|i want to know|i'd like to know)\s+", "", q)
    kind, noun = answer_kind(q)
    if kind in ("year", "number", "place", "person"):
        return False
    if _BROAD.match(q):
        return True
    m = re.match(r"^what (?:is|are|was|were)\s+(.*)$", q)
    if m:  # "what is X": a definition, unless it asks for one property of X ("what is the X's capital")
        rest = m.group(1).split()
        head = [w for w in rest[:3] if w not in ("the", "a", "an")]
        if any(w in DESCRIPTORS for w in rest):
            return False  # "what is the tallest mountain": a described thing, named in one word
        named = re.match(
            r"^(?:what|What) (?:is|are|was|were) (?:the |The )?((?:[A-Z][\w'-]*\s*(?:of |the )*)+)[?.!]*$",
            " ".join(question.split()),
        )
        if named is not None or bool(head and _BROAD_ASPECT.match(head[0])):
            return True
        return noun is None and not any(w == "of" for w in rest)  # "what is the spice ... called": a thing
    return kind == "other" and not re.match(r"^(?:is|are|was|were|do|does|did|can|could|has|have|had)\b", q)


def relation_of(
    question: str,
    concept_phrases: list[str],
    kinds: AbstractSet[str] | None = None,
    own_kinds: Mapping[str, AbstractSet[str]] | None = None,
) -> str | None:
    """The role word through which the question reaches one of its concepts: "author" in
    "the author of The Salt Orchard", "queen" in "the queen who ordered the Amber Gate built",
    "potter" in "the potter the Brannock Vase is named for"."""
    found = relations_of(question, concept_phrases, kinds, own_kinds)
    return found[-1] if found else None


def is_person_text(text: str) -> bool:
    """Does a document's description and opening say it is about a person? People are spoken of
    as he or she, things as it; a description that ends in a role noun ("American writer") says
    so too."""
    head = fold(text[:600])
    gendered = len(re.findall(r"\b(?:he|she|his|her|him)\b", head))
    neuter = len(re.findall(r"\b(?:it|its)\b", head))
    described = re.sub(r"\([^)]*\)", " ", head.split(".")[0]).split()
    role = next((singular(w) for w in described[:6] if singular(w) in PERSON_NOUNS), None)
    # a short description before its parentheses that ends in a noun for a person, by the list
    # or by its ending ("Austrian statesman (1773–1859)"; "German river" ends in no role)
    lead = head.split("(")[0].split() if "(" in head[:80] else []
    if role is None and 0 < len(lead) <= 6 and is_person_noun(singular(lead[-1].strip(",;:"))):
        role = lead[-1]
    return (gendered > 0 and gendered >= neuter) or role is not None


def aspects_of(question: str) -> list[str]:
    return list(
        dict.fromkeys(
            singular(w) if singular(w) in ASPECTS else w
            for w in tokens(question)
            if w in ASPECTS or singular(w) in ASPECTS
        )
    )


# a question that asks for the name of what it describes
_NAMING = re.compile(
    r"^(?:what|which)\s+(?:is|are|was|were)\s+(?:the\s+|an?\s+)?(.+?)\s+(?:called|named|known\s+as)$"
    r"|^what\s+(?:do|does|did)\s+(?:we|you|people|one)\s+call\s+(?:the\s+|an?\s+)?(.+)$"
    r"|^what\s+(?:is|was)\s+the\s+(?:name|term|word)\s+(?:for|of)\s+(?:the\s+|an?\s+)?(.+)$"
)


def description_of(question: str, concept_phrases: list[str]) -> str | None:
    """A subject the question describes instead of naming: "the coldest moon of the ringed
    planet", "stringed instrument is played with a curved bow of horsehair". None when it names its
    subject."""
    q = " ".join(question.split()).strip(" ?")
    low = fold(q)
    if choices_of(q, concept_phrases):
        return None  # "who was born first, X or Y?": it names the things it asks about
    lower_words = [w.strip(",;:.!?'\"") for w in q.split()]
    lower_words = [w for w in lower_words if w[:1].islower()]
    if any(w in DESCRIPTORS for w in lower_words):
        m = re.search(r"\b(?:the|a|an)\s+((?:[a-z-]+\s+){0,2}?(?:" + "|".join(sorted(DESCRIPTORS)) + r")\b.*)$", low)
        after = re.search(r"\b(?:" + "|".join(sorted(DESCRIPTORS)) + r")\s+([a-z]+)", m.group(1)) if m else None
        verb = after is not None and (
            after.group(1) in VERBS or after.group(1).endswith("ed") or after.group(1) in forms.PARTICIPLES
        )
        if m and not verb:  # "the largest moon of ...": a thing described; "X first released": when, not which
            return _described_words(m.group(1))
    named = _NAMING.match(low)  # "what is the study of living organisms called?", not "what is Paris called?"
    if named:
        g = named.lastindex or 0  # the one alternative that matched
        if any(w[:1].islower() for w in q[named.start(g) : named.end(g)].split()):
            return _described_words(named.group(g))
    kind, noun = answer_kind(q)
    if noun and kind in ("thing", "person", "place"):  # "which metal is liquid at room temperature"
        low = as_which(low)
        return _described_words(re.sub(r"^(?:in |from |at |on )?(?:which|what)\s+", "", low))
    return None


def _named_in(question: str, phrase: str) -> bool:
    """Is the phrase written as a name (capitalized) in the question?"""
    first = phrase.split()[0]
    m = re.search(r"\b" + re.escape(first) + r"\b", fold(question))
    return m is not None and question[m.start() : m.start() + 1].isupper()


def _described_words(text: str) -> str:
    out = [w for w in tokens(text) if w not in _WH and (w not in STOP or w.isdigit())]
    return " ".join(out)


def analyse(
    question: str,
    concepts: list[dict],
    kinds: AbstractSet[str] | None = None,
    own_kinds: Mapping[str, AbstractSet[str]] | None = None,
) -> Focus:
    phrases = [c.get("phrase") or c["name"] for c in concepts]
    kind, noun = answer_kind(question)
    relation = relation_of(question, phrases, kinds, own_kinds)
    concept_words = set(stems([w for p in phrases for w in tokens(p)]))
    # the relation belongs to the hop, not to what is asked about the thing it leads to
    hop_words = {relation} | hop_clause(question, relation, phrases) if relation else set()
    words = []
    for w in tokens(question):
        if w in STOP or w in _WH or w in ASPECTS:
            continue
        if stems([w])[0] in concept_words or w == noun or w in hop_words:
            continue
        words.append(w)
    return Focus(
        kind=kind,
        words=tuple(dict.fromkeys(words)),
        noun=noun,
        relation=relation,
        aspects=tuple(aspects_of(question)),
        description=description_of(question, phrases),
    )
