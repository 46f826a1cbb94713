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
from deepresearch.understanding.linking import SCAFFOLD, named_by_its_kind

# fmt: off
# The kind of answer a question wants, from its opening words.
_YEAR = re.compile(r"^(?:when|in what year|in which year|what year|which year|in which decade|in what decade)\b")
_PLACE = re.compile(r"^(?:where|in which|in what|from which|from what|at which|on which)\s+"
                    r"(?:city|country|town|state|region|republic|continent|place|province|island|kingdom|empire|"
                    r"museum|building|river|sea|ocean|mountain)s?\b|^where\b")
_PERSON = re.compile(r"^(?:who|whom|whose)\b")
_NUMBER = re.compile(r"^how (?:many|much|long|tall|high|old|big|large|deep|far|fast|heavy|wide)\b")
PLACE_NOUNS = {"city", "country", "town", "state", "region", "republic", "continent", "place", "province",
               "island", "kingdom", "empire", "museum", "capital", "location", "nation"}
# What a number answers: "how large is the population of X" wants a number.
MEASURE_NOUNS = {"population", "area", "height", "length", "depth", "width", "weight", "mass", "size", "diameter",
                 "distance", "speed", "temperature", "elevation", "altitude", "volume", "capacity", "number",
                 "count", "radius", "density", "circumference", "duration"}
NAMING_NOUNS = {"name", "term", "word", "title"}  # "the name of X" asks what X is called, not for a thing
TIME_NOUNS = {"year", "decade", "century", "date", "day", "month", "era", "period"}
# a part or a point of a thing, not a thing of its own ("near the end of a war", "the rest of X")
PART_NOUNS = {"end", "beginning", "start", "middle", "rest", "part", "side", "top", "bottom", "half"}
PERSON_NOUNS = {
    "person", "man", "woman", "people", "architect", "sculptor", "painter", "artist", "author", "writer",
    "poet", "playwright", "novelist", "composer", "engineer", "inventor", "discoverer", "designer", "founder",
    "creator", "director", "builder", "scientist", "physicist", "chemist", "astronomer", "mathematician",
    "naturalist", "biologist", "philosopher", "explorer", "emperor", "empress", "king", "queen", "pharaoh",
    "president", "ruler", "leader", "general", "pope", "saint", "husband", "wife", "father", "mother", "son",
    "daughter", "brother", "sister", "teacher", "student", "pupil", "successor", "predecessor", "owner",
    "musician", "singer", "actor", "prophet", "sultan", "tsar", "czar", "monarch", "prince", "princess",
    "dictator", "governor", "commander", "admiral", "astronaut", "botanist", "physician", "economist",
    "historian", "theologian", "geologist", "navigator", "conqueror",
}
# Role words that reach a subject through another thing: "the company that built Y" too.
RELATION_NOUNS = PERSON_NOUNS | {"company", "firm", "organization", "organisation", "band", "team", "country",
                                 "nation", "state", "city", "dynasty", "empire", "element", "planet", "star",
                                 "language", "religion", "university", "school", "party", "ship", "book",
                                 "novel", "work", "painting", "opera", "symphony", "capital", "studio",
                                 "institution", "group", "family", "army", "house", "club"}
_PERSON_SUFFIX = re.compile(r"^[a-z]{3,}(?:ist|ian|man|woman|tor|sor|ess)$")
# fmt: on


def is_person_noun(noun: str) -> bool:
    """A noun for a person: a role of the list, or one by its ending ("statesman", "physicist",
    "director", "musician")."""
    return noun in PERSON_NOUNS or bool(_PERSON_SUFFIX.match(noun))


# fmt: off
# Words that shape what a section answers; never concepts of their own.
ASPECTS = set("""
origin origins cause causes belief beliefs use uses usage construction effect effects history histories
influence influences legacy purpose purposes role roles impact impacts development developments feature
features function functions benefit benefits advantage advantages disadvantage disadvantages structure
structures teaching teachings practice practices tradition traditions meaning significance design designs
culture cultures economy geography climate habitat diet behaviour behavior characteristic characteristics
type types application applications principle principles idea ideas theory theories method methods
achievement achievements contribution contributions life lives career works work reception criticism
""".split())
DESCRIPTORS = set("""
largest smallest biggest highest lowest tallest shortest longest deepest fastest slowest oldest youngest
earliest latest first last only hottest coldest brightest heaviest lightest nearest closest farthest furthest
greatest most least best worst richest poorest widest densest loudest
""".split())
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


_CLAUSE_WORDS = {"which", "what", "who", "whom", "whose", "where", "when", "that"}
_LINKS = {"of", "who", "that", "which", "whose", "with", "after", "by", "for", "behind", "the", "whom", "where"}
_DETERMINERS = {"the", "a", "an", "its", "his", "her", "their"}


def is_role(noun: str, kinds: AbstractSet[str] | None) -> bool:
    """Can the noun name a thing of its own that the question reaches through a role? A kind of thing
    the search backend's documents are (`kinds`: deepresearch.understanding.linking.kinds_for), or,
    without them, one of the common roles; never a time or a measure, which are asked of a thing."""
    if noun in TIME_NOUNS or noun in MEASURE_NOUNS or noun in NAMING_NOUNS or noun in PART_NOUNS:
        return False
    return noun in RELATION_NOUNS or is_person_noun(noun) or (kinds is not None and noun in kinds)


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
    out += _possessive_roles(question, phrases, kinds)
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


def _possessive_roles(question: str, phrases: list[str], kinds: AbstractSet[str] | None) -> list[str]:
    """A role said with the named thing's possessive ("X's director", "X's home city"), as "the
    director of X" says it: the innermost role."""
    return [role for p in phrases if (said := possessive_role(question, p, kinds)) for role in said[-1:]]


def possessive_role(question: str, phrase: str, kinds: AbstractSet[str] | None = None) -> list[str]:
    """The words of a role the question says with `phrase`'s possessive: the role word itself or one
    word that narrows it before it ("X's home city": ["home", "city"]); [] when it says none."""
    text = " ".join(re.findall(r"[a-z]+(?:['’]s\b)?", fold(" ".join(question.split()))))
    name = " ".join(re.findall(r"[a-z]+", fold(phrase)))
    m = re.search(rf"\b{re.escape(name)}['’]s ([a-z]+)(?: ([a-z]+))?", text) if name else None
    if m is None:
        return []
    if is_role(singular(m.group(1)), kinds):
        return [singular(m.group(1))]
    if m.group(2) and is_role(singular(m.group(2)), kinds):
        return [m.group(1), singular(m.group(2))]
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
