"""Grounded writing: every sentence that states a fact carries a citation of a source that
supports it, and no sentence talks about "the source" instead of the world.

Two tools, used by the writer and the synthesizer:
- `extract_sentences`: the sentences of a retrieved text that best answer a question (the
  extractive writer quotes them, so it cannot invent);
- `ground`: a filter over model-written Markdown. A sentence about a source is dropped; a
  cited sentence keeps the citations whose source supports it (or is re-cited to the source
  that does); an uncited sentence is cited to the source that supports it, else dropped. A
  sentence naming something (a capitalized name, a number) that its source never mentions is
  an invented fact and is dropped. Text that reproduces the prompt instead of the world (a
  model echoing its input, as a successful injection does) is dropped too: source block tags,
  the data rule and the prompt's other instructions (`frame`, see `prompt_frame`), a line
  under one of the prompt's labels (`Sources:`, `Question:`…) and a list of sources.
"""

from __future__ import annotations

import functools
import re

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.evidence import DATA_RULE
from deepresearch.text.citations import CITE, SUPPORTED, cited_numbers, support, support_bound
from deepresearch.text.safe import decode_entities, quote_text
from deepresearch.text.sentences import NOT_AFTER_INITIAL, NOT_AFTER_TITLE, UPPER, content_words, split_sentences

# A sentence that describes a source instead of saying what it says.
META = re.compile(
    r"\b(?:the|this|these|each|both|our|my|another|other)\s+(?:retrieved\s+|given\s+|provided\s+)?"
    r"(?:sources?|articles?|passages?|documents?|snippets?|excerpts?|search results?)\b"
    r"|\b(?:the|this|that)\s+(?:text|summary)\s+(?:says|states|describes|mentions|explains|provides|discusses|notes)\b"
    r"|\baccording to (?:the|this|these) (?:sources?|articles?|text|passage|documents?)\b"
    r"|\bsource \[?\d+\]?(?!\w)|\bsources? (?:provides?|describes?|discuss(?:es)?|mentions?|says?|states?|explains?)\b",
    re.IGNORECASE,
)
# not after an initial ("Robert H. Goddard", a text opening "W. B. Yeats"), nor before a parenthesis
# (a lead line "Apple Inc. (Technology company)." is one sentence)
# a sentence may end inside its closing quotation mark ('... the expression "fifteen minutes."')
_SENT = re.compile(rf"{NOT_AFTER_INITIAL}{NOT_AFTER_TITLE}(?:(?<=[.!?])|(?<=[.!?][\"”’]))\s+(?=[{UPPER}\"'“])")
_ENDS = re.compile(r"[.!?][\"”’]?$")
# a footnote mark left after a sentence's stop ("... (1969–1992).[a]"): the sentence ends before it
_FOOTNOTE = re.compile(r"(?<=[.!?])\[(?:[a-z]|\d{1,3}|note \d{1,3})\](?=\s|$)")
_NAME = re.compile(r"\b([A-Z][a-z]{2,}|\d{3,4})\b")
MAX_SENTENCE = 400
NEAR = 0.15  # cosine: a sentence less close to what a report is about is not quoted for it


def is_meta(sentence: str) -> bool:
    return bool(META.search(CITE.sub("", sentence)))


# --- the prompt's own text ---------------------------------------------------------------------

# a source block's tag (as the prompt writes it, or escaped), or what `evidence.fence` leaves of one
_TAG = re.compile(r"<\s*/?\s*source\b|\[tag removed\]", re.IGNORECASE)
_BLOCK = re.compile(r"<source\b[^>]*>.*?</source>", re.DOTALL)
_LABEL = re.compile(r"^[ \t]*([A-Za-z][A-Za-z ]{0,40}?)[ \t]*:", re.MULTILINE)
# a line listing a source: `[1] Title…`, `- [2] Title…`, `1. [3] Title…`
_SOURCE_ENTRY = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)?\[\d{1,4}\]\s*[^\s\[]")
LIST_LABELS = frozenset({"sources", "source", "references", "bibliography", "works cited", "citations"})
ECHO = "repeats the prompt, not the world"
RUN = 4  # content words in a row that, taken from the instructions, make a sentence an echo


def prompt_frame(prompt: str, *data: str) -> str:
    """The prompt's own words: `prompt` without its source blocks and without `data` (the
    question, notes, drafts, a passage: what the model may rightly repeat)."""
    frame = _BLOCK.sub("\n", prompt)
    for d in sorted({d.strip() for d in data if d and d.strip()}, key=len, reverse=True):
        frame = frame.replace(d, "\n")
    return frame


@functools.lru_cache(maxsize=64)
def _frame(frame: str) -> _Frame:
    """The frame's `_Frame`, worked out once per frame: a node's instructions are the same in
    every call (a deep run grounds each section's draft, the synthesis and its blocks)."""
    return _Frame(frame)


class _Frame:
    """What a model's text must not reproduce: the instructions' sentences (the data rule
    always) and the prompt's labels. Read only, once made (`_frame` shares one per frame)."""

    def __init__(self, frame: str):
        text = f"{DATA_RULE}\n{frame}"
        self.labels = LIST_LABELS | {m.group(1).strip().lower() for m in _LABEL.finditer(text)}
        said = [
            content_words(CITE.sub("", s))
            for line in text.splitlines()
            if not line.lstrip().startswith("#")
            for s in split_sentences(line.strip())
        ]
        self.sentences = [set(words) for words in said if len(set(words)) >= 3]
        self.runs = {tuple(words[i : i + RUN]) for words in said for i in range(len(words) - RUN + 1)}

    def echoes(self, sentence: str) -> bool:
        """A sentence holding a source tag, made mostly of one of the instructions' sentences,
        or repeating a run of their words."""
        plain = _plain(sentence)
        if _TAG.search(plain):
            return True
        said = content_words(CITE.sub("", plain))
        words = set(said)
        return (len(words) >= 3 and any(len(words & f) >= max(3, 0.6 * len(words)) for f in self.sentences)) or any(
            tuple(said[i : i + RUN]) in self.runs for i in range(len(said) - RUN + 1)
        )

    def labelled(self, line: str) -> bool:
        """A line under one of the prompt's labels (`Sources: …`), a heading naming one, or an
        entry of a list of sources."""
        text = _plain(line).strip()
        bare = re.sub(r"^(?:#{1,6}|>|[-*+]|\d+[.)])\s*", "", text)
        if _SOURCE_ENTRY.match(bare) or _TAG.search(text):
            return True
        head = bare.split(":", 1)[0].strip(" *_").lower()
        return (":" in bare and head in self.labels) or bare.strip(" *_:").lower() in self.labels


def _plain(text: str) -> str:
    """Model text as a reader sees it: HTML entities decoded, Markdown escapes undone."""
    return re.sub(r"\\(.)", r"\1", decode_entities(text))


def source_sentences(text: str, longest: int = MAX_SENTENCE) -> list[str]:
    """The sentences of a retrieved text, whole and of a readable length (a new list of the
    sentences worked out once per text and length)."""
    return list(_source_sentences(text, longest))


def split_text(text: str) -> list[str]:
    """`text` cut into sentences (any length, as they stand)."""
    return _SENT.split(text)


@functools.lru_cache(maxsize=512)  # whole texts, as many as citations._passage_index keeps
def _source_sentences(text: str, longest: int) -> tuple[str, ...]:
    text = _FOOTNOTE.sub("", " ".join(text.split()))
    out = []
    for s in _SENT.split(text):
        s = s.strip()
        if 20 <= len(s) <= longest and _ENDS.search(s):
            out.append(s)
    return tuple(out)


def extract_sentences(
    text: str,
    focus: str,
    *,
    limit: int = 2,
    lead: bool = True,
    skip_title: str | None = None,
    sim: Similarity | None = None,
) -> list[str]:
    """Up to `limit` sentences of `text` that best answer `focus`, in the text's order. With
    `lead`, the first sentence (what the thing is) is always one of them. A leading
    "Title (description)." line of an encyclopedia text is no sentence. With `sim` (an embedder's),
    sentences are chosen by closeness in meaning to `focus`, at least `NEAR`; else by the words
    they share with it."""
    sents = source_sentences(text)
    if skip_title and sents and sents[0].startswith(skip_title) and sents[0].endswith(")."):
        sents = sents[1:]
    if not sents:  # a text of one long sentence: quote it whole rather than nothing
        sents = [
            s
            for s in source_sentences(text, 3 * MAX_SENTENCE)
            if not (skip_title and s.startswith(skip_title) and s.endswith(")."))
        ]
    if not sents:
        return []
    scored = []
    if sim is not None and sim.embedder is not None:
        near = sim.scores(focus, sents)
        scored = [(near[i] - NEAR - i * 0.001, i) for i in range(len(sents))]
    else:
        want = set(content_words(focus))
        for i, s in enumerate(sents):
            words = set(content_words(s))
            scored.append((len(words & want) / (1 + len(want)) - i * 0.001, i))
    chosen = {0} if lead else set()
    for _score, i in sorted(scored, reverse=True):
        if len(chosen) >= limit:
            break
        if _score > 0 or not chosen:
            chosen.add(i)
    return [sents[i] for i in sorted(chosen)]


def cite(sentence: str, n: int) -> str:
    """`sentence` as Markdown text (quote_text: a source's `[3]` or `*` is no citation and no
    emphasis) with `[n]` before its final punctuation."""
    return _with_marks(quote_text(sentence.rstrip()), f"[{n}]")


def _with_marks(s: str, marks: str) -> str:
    """`s` with its citation marks before its final punctuation, after its closing quotation mark when
    it ends inside one ('... "of fame" [n].')."""
    if s[-1:] in ".!?":
        return f"{s[:-1].rstrip()} {marks}{s[-1]}"
    if s[-1:] in '"”’' and s[-2:-1] in ".!?":
        return f"{s[:-2]}{s[-1]} {marks}{s[-2]}"
    return f"{s} {marks}"


def invented(sentence: str, text: str) -> list[str]:
    """Names and numbers in `sentence` (not at its start) that `text` never mentions."""
    body = CITE.sub("", sentence).strip()
    low = text.lower()
    return [m.group(1) for m in _NAME.finditer(body) if m.start() > 0 and m.group(1).lower() not in low]


def ground(
    draft: str, evidence: list[dict], text_of, *, threshold: float, frame: str = "", prose_only: bool = False
) -> tuple[str, list[dict]]:
    """`draft` with every remaining sentence cited and supported, and none reproducing the
    prompt (`frame`: the prompt's own words, see `prompt_frame`); headings, quotes, tables and
    code fences stay as they are (or go, with `prose_only`). Returns (text, dropped)."""
    echo = _frame(frame)
    by_id = {int(s["id"]): s for s in evidence}
    texts: dict[int, str] = {}

    def text(n: int) -> str:
        if n not in texts:
            texts[n] = f"{by_id[n].get('title', '')}. {text_of(by_id[n])}"
        return texts[n]

    def supported_by(sentence: str, n: int) -> bool:
        score, _ = support(sentence, text(n))
        return score >= threshold and not invented(sentence, text(n))

    def best(sentence: str) -> int | None:
        # a source whose words could not reach SUPPORTED anywhere in it is not scored
        reach = support_bound(sentence)
        scores = [(support(sentence, text(n))[0], n) for n in by_id if reach(text(n)) >= SUPPORTED]
        scores = [(sc, n) for sc, n in scores if sc >= SUPPORTED and not invented(sentence, text(n))]
        return max(scores)[1] if scores else None

    dropped: list[dict] = []
    lines = []
    for line in draft.split("\n"):
        stripped = line.strip()
        if stripped and echo.labelled(stripped):
            dropped.append({"sentence": stripped, "reason": ECHO})
            continue
        if prose_only and stripped.startswith(("#", ">", "|", "```")):
            dropped.append({"sentence": stripped, "reason": "not prose"})
            continue
        if stripped.startswith(">") and echo.echoes(stripped):  # a note: kept as it is, unless an echo
            dropped.append({"sentence": stripped, "reason": ECHO})
            continue
        if not stripped or stripped.startswith(("#", ">", "|", "```")):
            lines.append(line)
            continue
        lead = line[: len(line) - len(stripped)]
        bullet = re.match(r"^(?:[-*+]|\d+[.)])\s+", stripped)
        prefix = bullet.group(0) if bullet else ""
        kept = []
        for sent in split_sentences(stripped[len(prefix) :]):
            plain = CITE.sub("", sent).strip()
            if not content_words(plain):
                continue  # nothing but citations or punctuation
            if is_meta(sent):
                dropped.append({"sentence": plain, "reason": "talks about a source, not the world"})
                continue
            if echo.echoes(sent) or echo.labelled(sent):
                dropped.append({"sentence": plain, "reason": ECHO})
                continue
            nums = [n for n in dict.fromkeys(cited_numbers(sent)) if n in by_id]
            good = [n for n in nums if supported_by(sent, n)]
            if not good:
                n = best(sent)
                if n is None:
                    dropped.append({"sentence": plain, "reason": "no retrieved source supports it"})
                    continue
                good = [n]
            kept.append(_recite(plain, good))
        if kept:
            lines.append(lead + prefix + " ".join(kept))
    text_out = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return text_out, dropped


def _recite(plain: str, nums: list[int]) -> str:
    return _with_marks(plain.rstrip(), "".join(f"[{n}]" for n in nums))
