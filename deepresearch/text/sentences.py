"""Sentences and words, as every check of the report reads them: stop words, content words
(stemmed, one shared Snowball stemmer), and sentence splitting that keeps a sentence's citations."""

from __future__ import annotations

import re
from itertools import filterfalse

import Stemmer

# the capital letters of the Latin alphabets (ASCII, Latin-1 and Latin Extended), for patterns that
# find a sentence's start or a name: "Éamon de Valera", "Łódź", "Ōsaka" begin with a capital too
UPPER = "".join(c for c in map(chr, range(0x250)) if c.isupper())
# a title before a name ends no sentence: "the St. Matthew Passion", "Dr. Watson"
TITLES = "St Mt Ft Dr Mr Mrs Ms Prof Gen Gov Capt Col Lt Sgt Rev Jr Sr vs".split()
NOT_AFTER_TITLE = "".join(r"(?<!\b" + t + r"\.)" for t in TITLES)
# an abbreviation before a number ends no sentence either: "Symphony No. 5", "Op. 67", "Vol. 2"
NOT_BEFORE_NUMBER = "".join(r"(?!(?<=\b" + t + r"\.)\s+\d)" for t in "No Nos Op Vol".split())
# nor does an initial ("Lillie P. Bliss", a line opening "W. B. Yeats"): a report's sentence is cut
# where its source's is (deepresearch.report.grounding reads the sources so), inside its closing
# quotation mark too ('... the motto "salt first."')
NOT_AFTER_INITIAL = r"(?<![\s(][A-Z]\.)(?<!^[A-Z]\.)"
SENTENCE_END = re.compile(
    rf"{NOT_AFTER_TITLE}{NOT_AFTER_INITIAL}{NOT_BEFORE_NUMBER}(?:(?<=[.!?])|(?<=[.!?][\"”’]))((?:\s*\[\d[\d,;\s]*\](?:\^unverified\^)?)*)\s+(?=[{UPPER}0-9*_\"'(#>-])"
)


# shared: its C calls never release the GIL. Without PyStemmer's own cache (size 0): it keeps a
# list per word for as long as the process lives (10,000 of them, scanned in every full pass of
# the garbage collector), and stem_words' table below already answers every word seen before.
_stemmer = Stemmer.Stemmer("english", 0)


_stem = _stemmer.stemWord


_stem_words = _stemmer.stemWords


# word -> stem, for every word stemmed so far: a lookup costs a sixth of a Snowball call (whose
# own cache is slower still). A language's working vocabulary is small; past STEMS_KEPT words
# the table starts again.
_STEMS: dict[str, str] = {}
STEMS_KEPT = 100_000


def stem_words(words: list[str]) -> list[str]:
    """The Snowball stems of `words`, in order (the same as `Stemmer.stemWords`)."""
    memo = _STEMS
    try:
        return list(map(memo.__getitem__, words))
    except KeyError:
        pass
    missing = list({w for w in words if w not in memo})
    new = dict(zip(missing, _stem_words(missing)))
    if len(memo) + len(new) > STEMS_KEPT:
        memo.clear()  # another thread's lookup may miss now: it stems again, nothing else
    memo.update(new)
    get = memo.get
    return [new.get(w) or get(w) or _stem(w) for w in words]


STOP = set(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that "
    "these those which who whom whose what when where why how not no nor so than then there here also into "
    "about over after before during while has have had do does did can could may might will would shall should "
    "their they them he she his her we our you your i me my according regarding concerning".split()
)


CONTENT_WORD = re.compile(r"[a-z0-9]{2,}")  # a run of one letter or digit is no content word


_stop = STOP.__contains__


def content_words(text: str) -> list[str]:
    """The stems of `text`'s words (runs of two or more ASCII letters and digits), stop words
    left out, in order."""
    return stem_words(list(filterfalse(_stop, CONTENT_WORD.findall(text.lower()))))


SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_BREAK.split(text) if s.strip()]


def is_table_row(line: str) -> bool:
    """Is `line` a Markdown table row ("| aspect | ... |")?"""
    return line.lstrip().startswith("|")


_CELL_BORDER = re.compile(r"(?<!\\)\|")  # an escaped "\|" is a cell's own text


def table_cells(row: str) -> list[str]:
    """The cells of a table row, each stripped (its outer borders dropped)."""
    return [c.strip() for c in _CELL_BORDER.split(row.strip().removeprefix("|").removesuffix("|"))]


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of `paragraph`, each keeping the citations that follow its full stop. A table
    row is one unit, never split: a full stop in a cell ("Lillie P. Bliss") ends no row."""
    if is_table_row(paragraph):
        return [paragraph] if paragraph.strip() else []
    out, start = [], 0
    for m in SENTENCE_END.finditer(paragraph):
        out.append(paragraph[start : m.end(1)])
        start = m.end()
    out.append(paragraph[start:])
    return [s for s in out if s.strip()]
