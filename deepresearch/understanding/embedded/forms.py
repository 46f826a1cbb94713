"""The forms a question takes that retrieval cannot read: a question word at its end ("... was born
in which city?"), and a choice offered between two things ("which is older, X or Y?"). Grammar,
each rule with a test in tests/test_meaning.py."""

from __future__ import annotations

import re
from collections.abc import Callable

from deepresearch.text.sentences import STOP
from deepresearch.text.words import fold, singular
from deepresearch.understanding.embedded.nouns import ASPECTS, DESCRIPTORS, MEASURE_NOUNS, NAMING_NOUNS, TIME_NOUNS

# fmt: off
VERBS = {"is", "are", "was", "were", "did", "does", "do", "has", "have", "had", "can", "could", "will",
         "would"}
# a choice between two things by when or by how much ("which is older, X or Y?", "which is
# longer, ..."): the comparatives of time and of the measures "how ..." asks
EARLIER = {"older", "younger", "earlier", "later", "first", "newer"}
MORE = {"taller", "higher", "longer", "bigger", "larger", "deeper", "farther", "faster", "heavier", "wider",
        "more", "fewer", "less", "smaller", "shorter"}
# past participles that do not end in "-ed": "which poet born in 84" asks for a poet
PARTICIPLES = {"born", "made", "built", "written", "known", "found", "given", "taken", "seen", "held", "won",
               "led", "sung", "drawn", "grown", "shown", "sold", "told", "brought", "bought", "taught", "begun",
               "sent", "kept", "lost", "left", "become", "chosen", "spoken", "worn", "driven", "ridden", "flown"}
_CLAUSE = {"where", "that", "which", "who", "whom", "whose", "when"}  # words that open a relative clause
# fmt: on

_COMPARATIVE = re.compile(rf"\b(?:{'|'.join(sorted(EARLIER | MORE))})\b", re.IGNORECASE)
_CHOICE_AFTER = re.compile(r"\s+(?:either\s+)?(?:the\s+|an?\s+)?([^,]+?)\s+or\s+(?:the\s+|an?\s+)?([^,]+?)$")
_CHOICE = re.compile(r"[,:]\s+(?:either\s+)?(?:the\s+|an?\s+)?([^,]+?),?\s+or\s+(?:the\s+|an?\s+)?([^,]+?)$")
_IN_SITU = re.compile(
    r"^(?P<before>.+?),?\s+(?P<wh>(?:in|from|at|on|to|for|by|of|with|during|into|under|near|after|before)\s+"
    r"(?:which|what)(?:\s+[\w'-]+){0,3}|(?:by|to|with|for|from|of)\s+whom?|where|when)$",
    re.IGNORECASE,
)
_AUX = re.compile(r"^(?P<subj>.+?)\s+(?P<aux>is|are|was|were|has|have|had)\b\s*(?P<rest>.*)$")
_NAMING = re.compile(r"^(?P<subj>.+?)\s+(?P<aux>is|are|was|were)\s+(?P<verb>called|known as|named|termed)$", re.I)
ASKED_NOUNS = TIME_NOUNS | MEASURE_NOUNS | NAMING_NOUNS - {"title", "word"}  # what a typed phrase may end by asking
# a question typed as a noun phrase: a noun (one word narrowing it at most), "of", then what it is of,
# no verb before the "of" ("capital of japan", "the birthplace of the author of X")
_NOUN_OF = re.compile(r"^(?:the\s+)?(?P<noun>(?:[a-z]+\s+)?[a-z]+)\s+of\s+(?P<rest>[^?]+)$", re.IGNORECASE)
# a phrase of a few words before a comma, then the question proper ("In 1990, who ...")
_LEADING = re.compile(
    r"^(?P<lead>[^,?;]{3,40}),\s+(?P<asked>(?:which|what|who|whom|whose|when|where|why|how)\b[^,]*)$", re.IGNORECASE
)
_WH = re.compile(r"\b(?:which|what|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
_STARTS_WH = re.compile(r"^(?:\w+\s+)?(?:which|what|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


def choice(q: str) -> re.Match | None:
    """A choice, "..., X or Y", after the question's first comma or colon; not the end of a list
    ("found on, under, and above the surface of a planet, minor planet, or natural satellite"). Typed
    without a comma, the two things right after a comparative ("who was born first X or Y")."""
    m = _CHOICE.search(q)
    first = re.search(r"[,:]", q)
    if first is None and re.match(r"(?:who|which|what)\b", q, re.I) and (said := _COMPARATIVE.search(q)) is not None:
        # typed without its comma: the two things right after the comparative ("who was older X or Y")
        return _CHOICE_AFTER.match(q, said.end())
    return m if m and first and m.start() == first.start() else None


def choices_of(question: str, concept_phrases: list[str]) -> tuple[str, str] | None:
    """The two things a question offers to choose from after a comma or colon ("which is older,
    the Sphinx or Stonehenge?"), when both are named (a capital or one of its concepts)."""
    m = choice(" ".join(question.split()).strip(" ?"))
    if not m:
        return None
    phrases = {fold(p) for p in concept_phrases}
    named = [x[:1].isupper() or any(p and p in fold(x) for p in phrases) for x in m.groups()]
    return (m.group(1), m.group(2)) if all(named) else None


def fronted(question: str, is_title: Callable[[str], bool] | None = None) -> str:
    """A question whose question word stands at its end, asked the usual way round: "The composer
    of Carmen was born in which city?" is "In which city was the composer of Carmen born?", and
    "the tall trees of the coast are called" is "What are the tall trees of the coast called?". Any
    other question as it is. `is_title`: whether a phrase is a thing's own name (a question typed as a
    noun phrase that is one stays as it is)."""
    q = " ".join(question.split()).rstrip(" ?")
    np = _NOUN_OF.match(q)
    if np is not None and is_title is not None and is_title(q):
        np = None  # the phrase is a thing's own name ("speed of light"): a topic
    verb = np is not None and any(
        w in VERBS or w in _CLAUSE or w.endswith("ed") for w in fold(np.group("rest")).split()
    )
    if np is not None and not verb and singular(fold(np.group("noun"))) not in ASPECTS | {"list"}:
        # a thing typed as its noun phrase ("capital of japan", "the height of the tower"): what it is
        return f"What is the {np.group('noun')} of {np.group('rest')}?"
    first = fold(q).split()[1:2] if fold(q).startswith("the ") else fold(q).split()[:1]
    typed = not _STARTS_WH.match(q) and not any(w in VERBS or w in _CLAUSE for w in fold(q).split())
    if typed and first and first[0] in DESCRIPTORS and len(q.split()) > 1:
        # a thing typed as what singles it out ("tallest mountain in africa"): which one it is
        return f"What is the {re.sub(r'^(?:the|The) ', '', q)}?"
    last = fold(q).split()[-1:]
    if typed and last and last[0] in ASKED_NOUNS and len(q.split()) > 1 and not (is_title and is_title(q)):
        # typed as a thing and what is asked of it ("osterby population", "ada brannock birth year")
        return f"What is the {q.split()[-1]} of {' '.join(q.split()[:-1])}?"
    lead = _LEADING.match(q)
    if lead is not None and not _STARTS_WH.match(q) and not _WH.search(lead.group("asked"), 4):
        # "Besides painting, what ...": the question from its question word, the phrase before it after
        asked, rest = lead.group("asked"), lead.group("lead")
        # its first word capitalized as the question's first ("Apart from X"), not as a name ("Ada
        # Brannock, what did she found?", a topic before its question, stays as it is)
        second = rest.split()[1:2]
        if fold(rest.split()[0]) in STOP or (second and second[0].islower()):
            return f"{asked[0].upper()}{asked[1:]} {rest[0].lower()}{rest[1:]}?"
    if (n := _NAMING.match(q)) is not None and not _STARTS_WH.match(q):
        return f"What {n.group('aux')} {n.group('subj')} {n.group('verb')}?"  # "... are called" asks a name
    m = _IN_SITU.match(q)
    if not m or _STARTS_WH.match(q) or not question.rstrip().endswith("?"):
        return question
    before, wh = m.group("before"), m.group("wh")
    if any(w in VERBS for w in fold(wh).split()[1:]):
        return question  # a relative clause ("the city in which Mozart was born?")
    if (s := _AUX.match(before)) is not None:
        subj = s.group("subj")
        if fold(subj.split()[-1]) in _CLAUSE:
            return question  # the verb of a relative clause ("a dynasty that was followed by what?")
        if re.match(r"^(?:The|A|An) [a-z]", subj):  # "The composer of ...", not "The Beatles"
            subj = subj[0].lower() + subj[1:]
        before = f"{s.group('aux')} {subj} {s.group('rest')}".strip()
    return f"{wh[0].upper()}{wh[1:]} {before}?"


# a question answered yes or no opens with its verb; about two things, it asks whether they are
# "both" something ("Are X and Y both opera composers?") or share "the same" thing ("Were X and Y
# of the same nationality?")
_POLAR = re.compile(r"^(?:is|are|was|were|do|does|did|has|have|had)\s", re.IGNORECASE)
_BOTH = re.compile(r"\bboth\s+(?:an?\s+|the\s+)?(?P<what>[\w'-]+(?:\s+[\w'-]+){0,2})$", re.IGNORECASE)
_SAME = re.compile(r"\bthe\s+same\s+(?P<what>[\w'-]+)", re.IGNORECASE)


def polar(question: str) -> tuple[str, str] | None:
    """("both", what) or ("same", what) of a yes-or-no question about two things joined by "and" (what
    is "" when it follows the things: "Are both X and Y genera?");
    None for any other question, and for "both" followed by more than what the things are ("both
    born in Vienna": a fact of each, not a kind)."""
    q = " ".join(question.split()).rstrip(" ?")
    if not _POLAR.match(q) or " and " not in q:
        return None
    if re.match(r"^\w+\s+both\s", q, re.IGNORECASE):
        return ("both", "")  # "Are both X and Y genera?": what follows the last thing named
    if (m := _BOTH.search(q)) is not None:
        words = fold(m.group("what")).split()
        if not any(w in STOP or w in VERBS or w.endswith("ed") or w == "born" for w in words):
            return ("both", m.group("what"))
        return None
    if (m := _SAME.search(q)) is not None:
        return ("same", m.group("what"))
    return None


def subject_phrase(head: list[str], words: list[str], said: list[str]) -> list[str]:
    """The words after "which" that name the thing asked, without a verb read into them: in "which
    river flows through X" (no other verb in the question) "flows" says what the river does; in
    "which art movements influenced X" the verb comes after, and "movements" is the thing."""
    # the main clause only: a verb in a relative clause ("... the city where X was born") is not its verb
    opening = next((i for i, w in enumerate(said) if w in ("which", "what")), 0)
    end = next((i for i, w in enumerate(said) if i > opening and w in _CLAUSE), len(said))
    if any(w in VERBS for w in said[:end]):
        return head  # "which X did ...", "what are the X ...": the verb is elsewhere
    for i in range(1, len(head)):
        after = words[i + 1] if i + 1 < len(words) else ""
        verb_after = after.endswith("ed") or after in PARTICIPLES
        if _third_person(head[i]) and not _third_person(head[i - 1]) and not verb_after:
            return head[:i]
    return head


def _third_person(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "us", "is", "ics"))
