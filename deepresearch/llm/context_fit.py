"""Prompts that fit a model's context window (`context_window`, `--context-window`).

Local servers run models with small windows (Ollama's default is 2,048 to 4,096 tokens), and
refuse a prompt that does not fit with its completion (vLLM, llama.cpp's server) or cut it
silently (Ollama). With a window set, every call's prompt plus its completion cap fits in it:

1. the retrieved sources in the prompt (its `<source>` blocks) are dropped whole, the least
   relevant to the rest of the prompt (the question, the section, the instructions) first,
   until one is left;
2. that one's sentences are dropped, the least relevant first, down to its first sentence
   (a source is never cut in the middle of a sentence);
3. a text reply may then have a smaller cap, down to a quarter of what was asked;
4. past that the call is not made: BudgetExhausted("context_window"), a budget stop.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from langchain_core.messages import BaseMessage

from deepresearch.llm.budget import MIN_COMPLETION, BudgetExhausted

_BLOCK = re.compile(r'<source id="\d+"[^\n]*>\n(.*?)\n</source>', re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]{4,}")


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _score(text: str, query: set[str]) -> float:
    words = _WORD.findall(text)
    return len({w.lower() for w in words} & query) / math.sqrt(len(words) + 1)


def _blocks(messages: list[BaseMessage]) -> list[tuple[int, re.Match]]:
    return [
        (i, m) for i, msg in enumerate(messages) if isinstance(msg.content, str) for m in _BLOCK.finditer(msg.content)
    ]


def _query(messages: list[BaseMessage]) -> set[str]:
    return _terms(" ".join(_BLOCK.sub(" ", m.content) for m in messages if isinstance(m.content, str)))


def _replace(messages, i: int, match: re.Match, new: str | None) -> list[BaseMessage]:
    """`messages` with one source block's text replaced (None: the block dropped)."""
    text = messages[i].content
    if new is None:
        content = (text[: match.start()].rstrip("\n") + "\n\n" + text[match.end() :].lstrip("\n")).strip("\n")
    else:
        content = text[: match.start(1)] + new + text[match.end(1) :]
    return messages[:i] + [messages[i].model_copy(update={"content": content})] + messages[i + 1 :]


def fit(
    messages: list[BaseMessage],
    *,
    window: int,
    max_output: int,
    count: Callable[[list[BaseMessage]], int],
    need_full: bool,
) -> tuple[list[BaseMessage], int]:
    """(messages, completion cap) that fit in `window` tokens as `count` counts a prompt."""
    limit = window - max_output
    if count(messages) <= limit:
        return messages, max_output
    query = _query(messages)
    while count(messages) > limit:  # 1. whole sources, the least relevant first
        blocks = _blocks(messages)
        if len(blocks) <= 1:
            break
        worst = min(range(len(blocks)), key=lambda k: (_score(blocks[k][1].group(1), query), -k))
        messages = _replace(messages, *blocks[worst], None)
    while count(messages) > limit:  # 2. the last source's sentences, the least relevant first
        blocks = _blocks(messages)
        if not blocks:
            break
        i, match = blocks[0]
        sentences = _SENTENCE_END.split(match.group(1).strip())
        if len(sentences) <= 1:
            break
        worst = min(range(1, len(sentences)), key=lambda k: (_score(sentences[k], query), -k))
        messages = _replace(messages, i, match, " ".join(sentences[:worst] + sentences[worst + 1 :]))
    prompt = count(messages)
    if prompt <= limit:
        return messages, max_output
    room = window - prompt  # 3. a shorter text reply
    if not need_full and room >= max(MIN_COMPLETION, max_output // 4):
        return messages, room
    raise BudgetExhausted("context_window")  # 4. it cannot fit even bare
