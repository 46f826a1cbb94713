"""Replies that are no answer: empty, or only the prompt said back.

Small local models, given a long prompt or a chat template they were not trained on, often
answer with nothing or with the instruction repeated. Such a reply is a failed call (the
node's fallback applies), never content for a report.
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

ECHO_HEAD = 40  # characters: a reply copying a message from its start, at least this far (or all of it)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def no_answer(text: str, messages: list[BaseMessage]) -> str | None:
    """Why `text` is no answer to `messages` (None: it is one)."""
    if not text.strip():
        return "the model sent an empty reply"
    reply = _plain(text)
    if not reply:
        return "the model's reply holds no words"
    head = reply[:ECHO_HEAD]
    for content in [str(m.content) for m in messages] + ["\n".join(str(m.content) for m in messages)]:
        # the plain form of a text's start is the start of the text's plain form (lower() looks
        # at a letter's neighbours only for a capital sigma): a message whose start differs from
        # the reply's is ruled out without reading all of it
        start = content[: ECHO_HEAD * 4]
        if "Σ" not in start:
            start = _plain(start)
            if len(start) >= len(head) and not start.startswith(head):
                continue
        said = _plain(content)
        # copied from the message's start: a text given back unchanged to a copy editor is not
        # (the instructions come first), the instructions said back are
        if said and reply in said and said.startswith(reply[:ECHO_HEAD]) and len(reply) >= min(len(said), ECHO_HEAD):
            return "the model's reply only repeats the prompt"
    return None
