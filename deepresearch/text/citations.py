"""Citation checking: parse [n] citations, score support offline, renumber, list sources.

The offline scorer needs no capable model: it compares a sentence with every passage of
the cited source's retrieved text and takes the best match, scoring 0.7 x the share of the
sentence's content words found in the passage (stemmed) + 0.3 x the share of its word
pairs found there. `span` is that best passage.
"""

from __future__ import annotations

import functools
import re
from itertools import chain

from deepresearch.text.sentences import (
    CONTENT_WORD,
    SENTENCE_BREAK,
    STOP,
    content_words,
    is_table_row,
    sentences,
    split_sentences,
    stem_words,
    table_cells,
)
from deepresearch.text.urls import normalize_url

UNVERIFIED = "^unverified^"  # the mark after a citation its source does not clearly support
CITE = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\](?!\()")
URL = re.compile(r"https?://[^\s<>\]\)\"']+")
MD_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
SOURCES_HEADING = re.compile(
    r"^#{1,6}\s*(sources|references|bibliography|works cited)\s*:?\s*$", re.IGNORECASE | re.MULTILINE
)
HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
# loose forms a model writes: [ 3 ], [1-4], [1–4], [2, 5]
LOOSE_CITE = re.compile(r"\[\s*(\d{1,4}(?:\s*(?:[,;]|[-–])\s*\d{1,4})*)\s*\](?!\()")
NUMERIC_LINK = re.compile(r"\[\s*(\d{1,4})\s*\]\((https?://[^\s)]+)\)")

LABEL = re.compile(r"\*\*[^*]{1,120}\*\*")  # a bold label such as the per-source writer's title

SUPPORTED = 0.5


def _windows(sents: list, size: int) -> list[tuple[int, int]]:
    """(start, end) of the passages: every run of `size` consecutive sentences (all of them
    when there are no more)."""
    if len(sents) <= size:
        return [(0, len(sents))] if sents else []
    return [(i, i + size) for i in range(0, len(sents) - size + 1)]


def passages(text: str, size: int = 3) -> list[str]:
    sents = sentences(text)
    return [" ".join(sents[a:b]) for a, b in _windows(sents, size)]


PASSAGE = 3  # sentences in a passage


@functools.lru_cache(maxsize=512)
def _read(text: str) -> tuple[list[str], tuple[tuple[str, ...], ...]]:
    """A text's sentences, and each sentence's content words (stemmed), worked out once per text.
    The words are read from the lower-cased text split where `sentences` splits it (lower case
    moves no sentence end), all stemmed at once; only the split's last piece can be blank (it has
    no words). Tuples of strings: the garbage collector stops looking at them."""
    per = [[w for w in CONTENT_WORD.findall(piece) if w not in STOP] for piece in SENTENCE_BREAK.split(text.lower())]
    stems = stem_words(list(chain.from_iterable(per)))
    out, at = [], 0
    for raw in per:
        out.append(tuple(stems[at : at + len(raw)]))
        at += len(raw)
    return sentences(text), tuple(out)


class _Index:
    """A text's words as `support` reads them, worked out once per text: its sentences, and for
    each content word and each pair of consecutive content words the passages holding it, as a
    bit mask over the passages (bit i: the passage of sentences i to i + 2).

    Only strings and ints: the garbage collector never has to scan what a kept index holds."""

    __slots__ = ("sents", "passages", "words", "pairs")

    def __init__(self, text: str):
        self.sents, per = _read(text)
        self.passages = _windows(self.sents, PASSAGE)
        last = len(self.passages) - 1
        in_sentences: dict[str, int] = {}  # word -> bit i set when sentence i holds it
        pairs: dict[str, int] = {}  # "a b" -> the passages holding the pair
        get, pget = in_sentences.get, pairs.get
        prev, prev_at = None, 0
        for i, ws in enumerate(per):
            if not ws:
                continue
            bit = 1 << i
            for w in ws:
                in_sentences[w] = get(w, 0) | bit
            if prev is not None:  # a pair may run from one sentence's last word to the next one's first
                key = f"{prev} {ws[0]}"
                pairs[key] = pget(key, 0) | _held_by(prev_at, i, last)
            inside = _held_by(i, i, last)
            for key in map(" ".join, zip(ws, ws[1:])):
                pairs[key] = pget(key, 0) | inside
            prev, prev_at = ws[-1], i
        self.words = {w: _passages_of(m, len(self.passages)) for w, m in in_sentences.items()}
        self.pairs = pairs


def _held_by(first: int, end: int, last: int) -> int:
    """The passages (up to passage `last`) holding sentences first..end, as a bit mask."""
    lo, hi = max(0, end - PASSAGE + 1), min(first, last)
    return ((1 << (hi - lo + 1)) - 1) << lo if lo <= hi else 0


def _passages_of(in_sentences: int, n: int) -> int:
    """The passages holding a word, from the sentences holding it (PASSAGE = 3: passage i holds
    the words of sentences i, i + 1 and i + 2)."""
    m = in_sentences
    return (m | m >> 1 | m >> 2) & ((1 << n) - 1)


@functools.lru_cache(maxsize=512)
def _passage_index(text: str) -> _Index:
    """Worked out once per text: a report checks many sentences against the same few texts."""
    return _Index(text)


def _bits(mask: int):
    """The positions of the set bits of `mask`."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _best(words: list[str], word_mask, pair_mask, n: int) -> tuple[float, int | None]:
    """The best passage's score and number (None: none holds anything), given the passages
    holding each word and each pair of the sentence's (`word_mask(w)`, `pair_mask(a, b)`)."""
    uni = [0] * n  # per passage: how many of the sentence's words it holds
    for w in words:
        for i in _bits(word_mask(w)):
            uni[i] += 1
    pairs = set(zip(words, words[1:]))
    bi = [0] * n  # per passage: how many of the sentence's word pairs it holds
    for a, b in pairs:
        for i in _bits(pair_mask(a, b)):
            bi[i] += 1
    n_words, n_pairs = len(words), len(pairs)
    best, at = 0.0, None
    for i in range(n):
        u = uni[i] / n_words
        score = 0.7 * u + 0.3 * (bi[i] / n_pairs if pairs else u)
        if score > best:
            best, at = score, i
    return best, at


def _claim_words(sentence: str) -> list[str]:
    return content_words(LABEL.sub("", CITE.sub("", sentence)))


def support(sentence: str, text: str) -> tuple[float, str]:
    """How well `text` supports `sentence`: (score 0..1, best-matching passage).

    A passage is a run of three consecutive sentences (the whole text when it has no more),
    and its words are its sentences' words in a row. Each passage is scored 0.7 x the share of
    the sentence's words it holds + 0.3 x the share of its word pairs; the first best wins."""
    words = _claim_words(sentence)
    if not words:
        return 0.0, ""
    index = _passage_index(text)
    if not index.sents:
        return 0.0, ""
    words_held, pairs_held = index.words.get, index.pairs.get
    best, at = _best(words, lambda w: words_held(w, 0), lambda a, b: pairs_held(f"{a} {b}", 0), len(index.passages))
    if at is None:
        return round(best, 3), ""
    a, b = index.passages[at]
    return round(best, 3), " ".join(index.sents[a:b])[:400]


@functools.lru_cache(maxsize=512)
def _text_words(text: str) -> frozenset:
    """Every content word of a text (stemmed), as `_read` reads them."""
    return frozenset(chain.from_iterable(_read(text)[1]))


def support_bound(sentence: str):
    """For one sentence, a function of a text that `support(sentence, text)`'s score never
    passes (rounded as the score is): the score of a passage holding every word and word pair
    of the sentence that the text holds anywhere. It reads no passage, only the text's words,
    so ruling out a text that cannot support a sentence costs a set lookup per word."""
    words = _claim_words(sentence)
    pairs = set(zip(words, words[1:]))

    def reach(text: str) -> float:
        held = _text_words(text)
        if not words or not held:
            return 0.0
        word_share = sum(w in held for w in words) / len(words)
        pair_share = sum(x in held and y in held for x, y in pairs) / len(pairs) if pairs else word_share
        return round(0.7 * word_share + 0.3 * pair_share, 3)

    return reach


def relevance(sentence: str, text: str) -> float:
    """`support(sentence, text)`'s score, without the text's whole index: only the passages
    holding the sentence's own words and pairs are worked out (ranking many sources against one
    question reads each of them once)."""
    words = _claim_words(sentence)
    if not words:
        return 0.0
    sents, per = _read(text)
    if not sents:
        return 0.0
    n = len(_windows(sents, PASSAGE))
    wanted, pairs = set(words), set(zip(words, words[1:]))
    in_sentences: dict[str, int] = {}
    pair_masks: dict[tuple[str, str], int] = {}
    prev, prev_at = None, 0
    for i, ws in enumerate(per):
        if not ws:
            continue
        hit = wanted.intersection(ws)
        if hit:
            for w in hit:
                in_sentences[w] = in_sentences.get(w, 0) | (1 << i)
            inside = None
            for pair in zip(ws, ws[1:]):
                if pair in pairs:
                    inside = _held_by(i, i, n - 1) if inside is None else inside
                    pair_masks[pair] = pair_masks.get(pair, 0) | inside
        if prev is not None and (prev, ws[0]) in pairs:
            pair_masks[(prev, ws[0])] = pair_masks.get((prev, ws[0]), 0) | _held_by(prev_at, i, n - 1)
        prev, prev_at = ws[-1], i
    masks = {w: _passages_of(m, n) for w, m in in_sentences.items()}
    best, _ = _best(words, lambda w: masks.get(w, 0), lambda a, b: pair_masks.get((a, b), 0), n)
    return round(best, 3)


def verdict(score: float, threshold: float) -> str:
    if score >= max(SUPPORTED, threshold):
        return "supported"
    return "partial" if score >= threshold else "unsupported"


def strip_sources_section(report: str) -> str:
    """Drop a Sources/References list the model wrote itself at the end (it is rebuilt from
    the registry). Only a bare "Sources"-like heading that no other heading follows counts:
    a section titled "Sources of energy" stays."""
    found = list(SOURCES_HEADING.finditer(report))
    if not found:
        return report
    last = found[-1]
    if HEADING.search(report, last.end()):
        return report
    return report[: last.start()].rstrip()


def normalize_citations(report: str, id_of_url: dict[str, int]) -> tuple[str, list[dict]]:
    """Plain `[n]` citations from the loose forms models write: `[ 3 ]`, ranges `[1-4]`, and
    numeric links `[2](url)` (cited as the id of that URL, or removed if it was never
    retrieved)."""
    removed: list[dict] = []

    def link(m: re.Match) -> str:
        sid = id_of_url.get(normalize_url(m.group(2)))
        if sid is None:
            removed.append({"kind": "url", "value": m.group(2), "reason": "not a retrieved source"})
            return ""
        return f"[{sid}]"

    def loose(m: re.Match) -> str:
        nums: list[int] = []
        for part in re.split(r"\s*[,;]\s*", m.group(1)):
            ends = [int(x) for x in re.split(r"\s*[-–]\s*", part)]
            if max(ends) > 999:  # "[1990-1995]" is a span of years, not citations
                return m.group(0)
            lo, hi = ends[0], ends[-1]
            nums += list(range(lo, hi + 1)) if 0 < hi - lo < 20 else ends
        return "".join(f"[{n}]" for n in nums)

    report = NUMERIC_LINK.sub(link, report)
    return LOOSE_CITE.sub(loose, report), removed


# the space a removed citation leaves before a full stop or a comma ("in 2019 [7]." -> "in 2019 .");
# only those two: French puts a space before ; : ! ? on purpose
_GAP = re.compile(r"(?<=[\w\])])[ \t]+(?=[.,](?:\s|$))")


def close_gaps(text: str) -> str:
    """`text` without the space a removed citation left before a full stop or a comma."""
    return _GAP.sub("", text)


def cited_numbers(text: str) -> list[int]:
    return [int(n) for m in CITE.finditer(text) for n in re.split(r"[,;]", m.group(1))]


def remove_unknown_urls(report: str, known: set[str]) -> tuple[str, list[dict]]:
    """Remove URLs that are not in the registry; a Markdown link keeps its text."""
    removed: list[dict] = []

    def link(m: re.Match) -> str:
        if normalize_url(m.group(2)) in known:
            return m.group(0)
        removed.append({"kind": "url", "value": m.group(2), "reason": "not a retrieved source"})
        return m.group(1)

    report = MD_LINK.sub(link, report)

    def bare(m: re.Match) -> str:
        url = m.group(0).rstrip(".,;:")
        tail = m.group(0)[len(url) :]
        if normalize_url(url) in known:
            return m.group(0)
        removed.append({"kind": "url", "value": url, "reason": "not a retrieved source"})
        return "[link removed]" + tail

    return URL.sub(bare, report), removed


def each_cited_sentence(text: str, fn) -> str:
    """`text` with `fn` applied to every sentence of every line that cites something, as the
    citation checks read a report: line by line (headings and lines citing nothing stay as
    they are), each line's sentences joined again by one space."""
    lines = []
    for line in text.split("\n"):
        if line.lstrip().startswith("#") or not CITE.search(line):
            lines.append(line)
        elif is_table_row(line):  # a table row: each cell is one claim, never split into sentences
            lines.append("| " + " | ".join(fn(c).strip() if CITE.search(c) else c for c in table_cells(line)) + " |")
        else:
            lead = line[: len(line) - len(line.lstrip())]
            lines.append(lead + " ".join(fn(x).strip() for x in split_sentences(line.strip())))
    return "\n".join(lines)
