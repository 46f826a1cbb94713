"""Titles: a question's phrases linked to one backend's document titles (`Linker`, built once per
backend), its words read as deepresearch.text.words reads them (folded, singular, stemmed). Also
the concept record itself (`concept`). The bottom of the research package: it imports none of the
modules that read questions."""

from __future__ import annotations

import math
import re
import sys
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from deepresearch.text import sentences as _sentences
from deepresearch.text import words as _words
from deepresearch.text.words import (
    POSSESSIVE,
    TOKEN,
    bare_title,
    fold,
    keyed,
    singular,
    stem,
    stems,
    text_stems,
    tokens,
)
from deepresearch.understanding.tables import kept_table

MAX_NGRAM = 6


GENERIC_DF = 0.06  # a word in more than this share of the backend's documents is no concept alone
NAME_SHARE = 0.9  # a word the documents write capitalized inside sentences this often is a name
NAME_EVIDENCE = 3  # occurrences inside sentences the documents need before they say how a word is written
_SENTENCE_START = re.compile(r"(?:^|[.!?:;][\"')\]]*\s+)([^\W_]+(?:['’][^\W_]+)*)", re.MULTILINE)


# Words that shape a research question rather than name what it is about.
SCAFFOLD = set(
    """
how what why when where who whom which whose did does do done compare compared comparing comparison contrast
difference differences differ differed between versus vs history historical role roles impact impacts effect
effects affect affected influence influenced influences change changed changes changing develop developed
development developments relationship relationships relation relate related connection connections connect
connected cause caused causes consequence consequences contribution contributions contribute contributed work
worked works use used uses using way ways lead led leading explain explained describe described discover
discovered invent invented play played start started spread shape shaped regulate protect protected end ended
rise rose power help helped make made become became main key major important importance significance overview
science sciences tell told give gave get got find found new old early later modern today between among
about through across during like such much many more most some any each every other others own same one two
three first second kind kinds type types part parts aspect aspects factor factors reason reasons result
results led bring brought take took known called mean means meaning role
build built designed wrote write written painted grow grew conquer conquered reveal revealed explained
design construction purpose function functions feature features legacy
show shows showed say says said happen happened go went come came
""".split()
)


class Linker:
    """Links phrases of a question to the titles of one backend's documents."""

    def __init__(self, titles: list[str], texts: list[str] | None = None, tables: dict | None = None):
        """`tables`: what `link_tables(titles, texts)` derives, when it was derived before."""
        if tables is None:
            tables = link_tables(titles, texts)
        self.exact: dict[tuple[str, ...], tuple[str, ...]] = tables["exact"]
        self.by_word: dict[str, tuple[str, ...]] = tables["by_word"]
        self.qualified: dict[tuple[str, ...], tuple[str, ...]] = tables["qualified"]
        self.text_of = dict(zip(titles, texts)) if texts else {}
        self.named: frozenset[str] = tables["named"]
        self.common: frozenset[str] = tables["common"]
        self.df: dict[str, int] = tables["df"]
        self.docs: int = tables["docs"]

    def written_as_name(self, word: str) -> bool | None:
        """Whether the documents write `word` (folded) as a name: capitalized inside sentences at
        least NAME_SHARE of the times they use it ("iphone", "japan": yes; "koala", "window": no).
        None: they use it too rarely to say."""
        return True if word in self.named else False if word in self.common else None

    def generic(self, word: str, share: float = GENERIC_DF) -> bool:
        """Whether `word` is in more than `share` of the backend's documents."""
        return self.df.get(stem(word), 0) / self.docs > share

    def weight(self, stem: str) -> float:
        """How much sharing this word says about two texts (its inverse document frequency)."""
        return math.log(self.docs / (1 + self.df.get(stem, 0)))

    def relatedness(self, a: str, b: str) -> float:
        """How much two texts share, by the rarity of their common words (0 for nothing)."""
        sa, sb = text_stems(a), text_stems(b)
        common = sum(self.weight(x) for x in sa & sb if len(x) > 2)
        return common / (1 + math.sqrt(len(sa) * len(sb)) / 4)

    def exact_titles(self, words: list[str]) -> tuple[str, ...]:
        return self.exact.get(keyed(words), ())

    def qualified_titles(self, words: list[str]) -> tuple[str, ...]:
        """Titles said with their qualifier as context, in either order ("C programming language",
        "programming language C" for "C (programming language)")."""
        found = self.qualified.get(keyed(words), ())
        if found or len(words) < 2:
            return found
        for cut in range(1, len(words)):  # the qualifier first
            found = self.qualified.get(keyed(words[cut:] + words[:cut]), ())
            if found:
                return found
        return ()

    def partial_titles(self, words: list[str]) -> list[str]:
        """Titles (of at most four words) containing every word of a proper name."""
        key = keyed(words)
        if not key:
            return []
        pools = [set(self.by_word.get(s, ())) for s in key]
        found = set.intersection(*pools) if pools else set()
        return sorted(t for t in found if len(tokens(bare_title(t))) <= 4)


def link_tables(titles: list[str], texts: list[str] | None = None) -> dict:
    """What a `Linker` of these titles (and the texts of their documents) looks words up in."""
    exact: dict[tuple[str, ...], list[str]] = {}
    qualified: dict[tuple[str, ...], list[str]] = {}
    by_word: dict[str, list[str]] = {}
    for title in titles:
        key = keyed(tokens(bare_title(title)))
        if not key:
            continue
        exact.setdefault(key, []).append(title)
        if title != bare_title(title):  # "C (programming language)" is said "C programming language" too
            qualified.setdefault(keyed(tokens(title)), []).append(title)
        for s in set(key):
            by_word.setdefault(s, []).append(title)
    named, common = _name_usage(texts or [])
    df: dict[str, int] = {}
    for text in texts or titles:
        for s in set(stems(tokens(text))):
            df[s] = df.get(s, 0) + 1
    # kept as tuples of strings: the collector stops tracking them (and then the dicts) after
    # its first pass, instead of scanning tens of thousands of lists in every full pass for as
    # long as the process lives
    return {
        "exact": {k: tuple(v) for k, v in exact.items()},
        "by_word": {k: tuple(v) for k, v in by_word.items()},
        "qualified": {k: tuple(v) for k, v in qualified.items()},
        "named": named,
        "common": common,
        "df": df,
        "docs": max(1, len(texts or titles)),
    }


def _encoded(tables: dict) -> dict:
    """`link_tables` as JSON holds it: pairs for the dicts keyed by tuples, lists for sets."""
    return {
        "exact": list(tables["exact"].items()),
        "by_word": tables["by_word"],
        "qualified": list(tables["qualified"].items()),
        "named": sorted(tables["named"]),
        "common": sorted(tables["common"]),
        "df": tables["df"],
        "docs": tables["docs"],
    }


def _decoded(data: dict) -> dict:
    return {
        "exact": {tuple(k): tuple(v) for k, v in data["exact"]},
        "by_word": {k: tuple(v) for k, v in data["by_word"].items()},
        "qualified": {tuple(k): tuple(v) for k, v in data["qualified"]},
        "named": frozenset(data["named"]),
        "common": frozenset(data["common"]),
        "df": dict(data["df"]),
        "docs": int(data["docs"]),
    }


def _name_usage(texts: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(words the texts write as names, words they write otherwise), by how each word is written
    inside sentences (a sentence's first word is capitalized whatever it is): the share of a word's
    uses that are capitalized, the "keyphraseness" by which entity linkers tell a name from ordinary
    words, taken from the documents themselves rather than from how a question happens to be typed."""
    if not texts:
        return frozenset(), frozenset()
    corpus = "\n".join(texts)
    forms = Counter(TOKEN.findall(corpus))
    forms.subtract(Counter(_SENTENCE_START.findall(corpus)))
    uses: Counter[str] = Counter()
    capitalized: Counter[str] = Counter()
    for form, n in forms.items():
        if n <= 0:
            continue
        word = fold(form)
        word = word[:-2] if word.endswith(POSSESSIVE) else word
        uses[word] += n
        if form != form.lower():
            capitalized[word] += n
    seen = [w for w, n in uses.items() if n >= NAME_EVIDENCE]
    named = frozenset(w for w in seen if capitalized[w] >= NAME_SHARE * uses[w])
    return named, frozenset(seen) - named


def name_flags(raw: Sequence[str], linker: Linker | None) -> list[bool]:
    """For each word of a question as written, whether it is a name: by the documents' own usage where
    they use the word ("who unveiled the first iphone", "the capital of japan"), else by its capital
    letter (a question's first word is capitalized whatever it is)."""
    flags = []
    for i, form in enumerate(raw):
        word = fold(form)
        word = word[:-2] if word.endswith(POSSESSIVE) else word
        usage = linker.written_as_name(word) if linker is not None else None
        flags.append(bool(usage) or (form[:1].isupper() and i > 0))
    return flags


def linking_backend(ctx):
    """The run's first search backend (concepts link to its titles when it has them, and their
    queries go to it); None if it cannot be had."""
    from deepresearch.tools.registry import backend_for, primary

    try:
        return backend_for(ctx, primary(ctx))
    except Exception:  # noqa: BLE001 - execute_tools reports a bad backend; concepts go unlinked
        return None


_linkers: dict[int, Linker] = {}
# the backends the caches below are keyed by (their ids): held, so that no other object takes an id
# while its entries stand
_owners: dict[int, object] = {}


_linkers_lock = threading.Lock()


def linker_for(backend) -> Linker | None:
    """The backend's linker, built once per backend instance (None: it has no titles); its tables
    derived once per corpus (deepresearch.understanding.tables keeps them)."""
    titles_fn = getattr(backend, "titles", None)
    if titles_fn is None:
        return None
    with _linkers_lock:
        if id(backend) not in _linkers:
            texts_fn = getattr(backend, "link_texts", None)
            titles, texts = list(titles_fn()), list(texts_fn()) if texts_fn else None
            program = (sys.modules[__name__], _words, _sentences)
            tables = kept_table(backend, "linker", lambda: link_tables(titles, texts), _encoded, _decoded, program)
            _linkers[id(backend)] = Linker(titles, texts, tables)
            _owners[id(backend)] = backend
        return _linkers[id(backend)]


_PREPOSITIONS = r"(?:of|in|from|by|for|at|on|with|near|between|during|since|to|after|as|into)"
# a qualifier: a preposition, a relative word, or a participle with its preposition ("film based on ...")
_KIND_CUT = re.compile(rf"\b(?:{_PREPOSITIONS}|who|that|which|whose|[a-z]{{2,}}ed(?=\s+{_PREPOSITIONS}\b))\b|[,;:]")
MIN_KIND_DOCS = 3  # a noun that heads fewer descriptions than this is no kind of thing the backend knows
_kinds: dict[int, frozenset[str]] = {}


def kinds_for(backend) -> frozenset[str] | None:
    """The kinds of thing the backend's documents are, by their own descriptions: the head nouns
    before any qualifier ("Russian ballet dancer and choreographer (1889-1950)" is a dancer and a
    choreographer; "Art museum in New York" a museum), each heading at least MIN_KIND_DOCS
    descriptions. A role in a question ("the choreographer of X") is one of these. None: the backend
    does not describe its documents. Worked out once per backend."""
    describe = getattr(backend, "description", None) if backend is not None else None
    titles = getattr(backend, "titles", None) if backend is not None else None
    if describe is None or titles is None:
        return None
    with _linkers_lock:
        if id(backend) not in _kinds:
            counts: dict[str, int] = {}
            for title in titles():
                for noun in head_nouns(describe(title) or ""):
                    counts[noun] = counts.get(noun, 0) + 1
            _kinds[id(backend)] = frozenset(w for w, n in counts.items() if n >= MIN_KIND_DOCS)
            _owners[id(backend)] = backend
        return _kinds[id(backend)]


def own_kinds(concepts, backend) -> dict[str, frozenset[str]]:
    """The kinds each linked concept's own description says it is, by its phrase in the question
    ("rome": city, for "Capital city of Italy"); empty when the backend describes nothing."""
    describe = getattr(backend, "description", None) if backend is not None else None
    if describe is None:
        return {}
    return {
        c.get("phrase") or c["name"]: frozenset(head_nouns(describe(c["title"]) or ""))
        for c in concepts
        if c.get("title")
    }


def named_by_its_kind(noun: str, after: list[str], own_kinds: Mapping[str, AbstractSet[str]]) -> bool:
    """ "the NOUN of X" or "the NOUN X" (`after`: the words after NOUN) where X's own description
    says X is a NOUN (`own_kinds`, by phrase): X named by its kind, no role ("the city of X")."""
    if not after:
        return False
    rest = after if after[0] != "of" else after[2:] if after[1:2] and after[1] in ("the", "a", "an") else after[1:]
    said = " ".join(rest) + " "
    return any(
        said.startswith(" ".join(re.findall(r"[a-z]+", fold(p))) + " ") and noun in k for p, k in own_kinds.items()
    )


def head_nouns(description: str) -> set[str]:
    """The kinds of thing a description says its document is: the head nouns before any qualifier
    ("Russian ballet dancer and choreographer (1889-1950)": dancer, choreographer)."""
    head = _KIND_CUT.split(re.sub(r"\([^)]*\)", " ", fold(description)))[0]
    nouns = set()
    for piece in re.split(r"\b(?:and|or)\b", head):
        words = [w for w in re.findall(r"[a-z]+", piece) if not w.endswith("ly")]  # no adverb ("primarily")
        if words:
            nouns.add(singular(words[-1]))
    return nouns


def mentions(text: str, linker: Linker, skip: AbstractSet[str] = frozenset()) -> list[str]:
    """The titles a text names, in the order it names them (entity linking over every n-gram,
    longest first). A span counts as a mention when it is a name (capitalized, not only as a
    sentence's first word), several words, or one specific word (not in more than GENERIC_DF of
    the documents); `skip`: titles not to return (lower case)."""
    spans = list(TOKEN.finditer(text))
    raw = [m.group(0) for m in spans]
    words = [w[:-2] if w.endswith(POSSESSIVE) else w for w in map(fold, raw)]
    keys = keyed(words)  # each word's singular once: exact_titles(words[i:i + n]) looks up keys[i:i + n]
    # a sentence's first word is capitalized whatever it is: no evidence of a name
    starts = {0} | {
        i for i in range(1, len(spans)) if re.search(r"[.!?:;]", text[spans[i - 1].end() : spans[i].start()])
    }
    used = [False] * len(words)
    found: list[tuple[int, str]] = []
    for n in range(min(MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            if any(used[i : i + n]):
                continue
            a, b = spans[i].start(), spans[i + n - 1].end()
            if text[a - 1 : a] == "-" or text[b : b + 1] == "-":
                continue  # part of a hyphenated word ("honey-bearing" names no bearing)
            titles = linker.exact.get(keys[i : i + n], ())
            if not titles:
                continue
            capital = raw[i][:1].isupper() and i not in starts
            if n == 1 and not capital and (len(words[i]) < 4 or linker.generic(words[i])):
                continue
            title = titles[0] if len(titles) == 1 else _best_in_context(titles, set(stems(words)), linker)
            used[i : i + n] = [True] * n
            if title.lower() not in skip:
                found.append((i, title))
    out: list[str] = []
    for _, t in sorted(found):
        if t not in out:
            out.append(t)
    return out


def _best_in_context(titles: Sequence[str], context: set[str], linker: Linker) -> str:
    """Of several titles with one name ("Mercury (planet)", "Mercury (element)"), the one whose
    qualifier the surrounding words use, else the plain one."""

    def score(t: str) -> tuple:
        qualifier = set(stems(tokens(t))) - set(stems(tokens(bare_title(t))))
        return (len(qualifier & context), t == bare_title(t), -len(t))

    return max(titles, key=score)


def concept(name: str, phrase: str, title: str | None, origin: str = "question") -> dict:
    return {"name": name, "query": name, "title": title, "phrase": phrase, "origin": origin}
