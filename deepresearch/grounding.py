"""Grounded writing: every sentence that states a fact carries a citation of a source that
supports it, and no sentence talks about "the source" instead of the world.

Two tools, used by the writer and the synthesizer:
- `extract_sentences`: the sentences of a retrieved text that best answer a question (the
  extractive writer quotes them, so it cannot invent);
- `ground`: a filter over model-written Markdown. A sentence about a source is dropped; a
  cited sentence keeps the citations whose source supports it (or is re-cited to the source
  that does); an uncited sentence is cited to the source that supports it, else dropped. A
  sentence naming something (a capitalized name, a number) that its source never mentions is
  an invented fact and is dropped.
"""

from __future__ import annotations

import re

from deepresearch.citations import CITE, SUPPORTED, cited_numbers, content_words, split_sentences, support

# A sentence that describes a source instead of saying what it says.
META = re.compile(
    r"\b(?:the|this|these|each|both|our|my|another|other)\s+(?:retrieved\s+|given\s+|provided\s+)?"
    r"(?:sources?|articles?|passages?|documents?|snippets?|excerpts?|search results?)\b"
    r"|\b(?:the|this|that)\s+(?:text|summary)\s+(?:says|states|describes|mentions|explains|provides|discusses|notes)\b"
    r"|\baccording to (?:the|this|these) (?:sources?|articles?|text|passage|documents?)\b"
    r"|\bsource \[?\d+\]?(?!\w)|\bsources? (?:provides?|describes?|discuss(?:es)?|mentions?|says?|states?|explains?)\b",
    re.IGNORECASE,
)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_NAME = re.compile(r"\b([A-Z][a-z]{2,}|\d{3,4})\b")
MAX_SENTENCE = 400


def is_meta(sentence: str) -> bool:
    return bool(META.search(CITE.sub("", sentence)))


def source_sentences(text: str, longest: int = MAX_SENTENCE) -> list[str]:
    """The sentences of a retrieved text, whole and of a readable length."""
    text = " ".join(text.split())
    out = []
    for s in _SENT.split(text):
        s = s.strip()
        if 20 <= len(s) <= longest and s[-1:] in ".!?":
            out.append(s)
    return out


def md_text(text: str, limit: int = 200) -> str:
    """Retrieved or model text fit for one line of Markdown: one line, capped, with the
    characters that make links, emphasis, headings or HTML escaped."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return re.sub(r"([\\`*_{}\[\]()<>#|!])", r"\\\1", text)


def extract_sentences(text: str, focus: str, *, limit: int = 2, lead: bool = True,
                      skip_title: str | None = None) -> list[str]:
    """Up to `limit` sentences of `text` that best answer `focus`, in the text's order. With
    `lead`, the first sentence (what the thing is) is always one of them. A leading
    "Title (description)." line of an encyclopedia text is no sentence."""
    sents = source_sentences(text)
    if skip_title and sents and sents[0].startswith(skip_title) and sents[0].endswith(")."):
        sents = sents[1:]
    if not sents:  # a text of one long sentence: quote it whole rather than nothing
        sents = [s for s in source_sentences(text, 3 * MAX_SENTENCE)
                 if not (skip_title and s.startswith(skip_title) and s.endswith(")."))]
    if not sents:
        return []
    want = set(content_words(focus))
    scored = []
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
    """`sentence` with `[n]` before its final punctuation."""
    s = sentence.rstrip()
    if s[-1:] in ".!?":
        return f"{s[:-1].rstrip()} [{n}]{s[-1]}"
    return f"{s} [{n}]"


def invented(sentence: str, text: str) -> list[str]:
    """Names and numbers in `sentence` (not at its start) that `text` never mentions."""
    body = CITE.sub("", sentence).strip()
    low = text.lower()
    return [m.group(1) for m in _NAME.finditer(body) if m.start() > 0 and m.group(1).lower() not in low]


def ground(draft: str, evidence: list[dict], text_of, *, threshold: float) -> tuple[str, list[dict]]:
    """`draft` with every remaining sentence cited and supported; returns (text, dropped)."""
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
        scores = [(support(sentence, text(n))[0], n) for n in by_id]
        scores = [(sc, n) for sc, n in scores if sc >= SUPPORTED and not invented(sentence, text(n))]
        return max(scores)[1] if scores else None

    dropped: list[dict] = []
    lines = []
    for line in draft.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ">", "|", "```")):
            lines.append(line)
            continue
        lead = line[: len(line) - len(stripped)]
        bullet = re.match(r"^(?:[-*+]|\d+[.)])\s+", stripped)
        prefix = bullet.group(0) if bullet else ""
        kept = []
        for sent in split_sentences(stripped[len(prefix):]):
            plain = CITE.sub("", sent).strip()
            if not content_words(plain):
                continue  # nothing but citations or punctuation
            if is_meta(sent):
                dropped.append({"sentence": plain, "reason": "talks about a source, not the world"})
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
    s = plain.rstrip()
    marks = "".join(f"[{n}]" for n in nums)
    if s[-1:] in ".!?":
        return f"{s[:-1].rstrip()} {marks}{s[-1]}"
    return f"{s} {marks}"
