"""Reasoning models: their reasoning is read apart from their answer.

Servers send a reasoning model's reasoning in one of two ways:

- in the content, as a `<think>...</think>` (or `<thinking>...</thinking>`) block at its
  start (Ollama without `think`, llama.cpp's server with `--reasoning-format none`, vLLM
  without a reasoning parser; some chat templates open the block in the prompt, so the
  reply holds only its end, `...</think>answer`);
- in a separate field of the message or streamed delta, `reasoning_content` (vLLM's
  reasoning parsers, llama.cpp's server, DeepSeek) or `reasoning` (Ollama, LM Studio,
  OpenRouter, newer vLLM).

The transport folds the fields into the content as a `<think>` block (`fold_delta`), so a
streamed reply is read, counted and cut at its cap in one way whatever the server does,
reasoning tokens included; `split` then takes the reasoning off the answer before anything
reads it (deepresearch.llm.calls). A reply cut in the middle of its reasoning has no answer.
"""

from __future__ import annotations

import re

REASONING_FIELDS = ("reasoning_content", "reasoning")
_OPEN = re.compile(r"^\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE = {name: re.compile(rf"</{name}>", re.IGNORECASE) for name in ("think", "thinking", "reasoning")}
_BARE_CLOSE = re.compile(r"</(think|thinking)>", re.IGNORECASE)


def split(text: str) -> tuple[str | None, str]:
    """(reasoning, answer) of a reply's text; reasoning None when it has none."""
    m = _OPEN.match(text)
    if m:
        end = _CLOSE[m.group(1).lower()].search(text, m.end())
        if end is None:  # cut in the middle of its reasoning: no answer
            return text[m.end() :].strip(), ""
        return text[m.end() : end.start()].strip(), text[end.end() :].strip()
    end = _BARE_CLOSE.search(text)  # the template opened the block in the prompt
    if end is not None and "<" + end.group(1).lower() + ">" not in text[: end.start()].lower():
        return text[: end.start()].strip(), text[end.end() :].strip()
    return None, text


class Folder:
    """Folds the reasoning fields of one reply's messages or streamed deltas into their
    content as one `<think>` block, closed when the answer starts."""

    def __init__(self) -> None:
        self.open = False

    def fold(self, delta: dict) -> dict:
        reasoning = "".join(v for k in REASONING_FIELDS if isinstance(v := delta.pop(k, None), str))
        delta.pop("reasoning_details", None)
        content = delta.get("content")
        text = ""
        if reasoning:
            text += ("" if self.open else "<think>") + reasoning
            self.open = True
        if isinstance(content, str) and content:
            if self.open:
                text += "</think>"
                self.open = False
            text += content
        elif self.open and delta.get("tool_calls"):  # the answer is a tool call
            text += "</think>"
            self.open = False
        if reasoning or text:
            delta["content"] = text
        return delta
