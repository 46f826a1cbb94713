"""LangGraph's chat input, `{"messages": [...]}`, for both graphs (Studio's chat view and chat
front ends built on the LangGraph SDK).

A chat turn is a run whose input's last message is a human one not answered yet: its text is
the question, and the conversation before it (at most `MAX_CONTEXT` characters, the latest
kept) joins the research brief as context. The finished report is added to `messages` as an
AI message. `{"question": ...}` works as before, also on a thread that chatted earlier.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, convert_to_messages
from typing_extensions import TypedDict

MAX_CONTEXT = 2000


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, list):  # content blocks: keep the text ones
        content = " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return " ".join(str(content).split())


def chat_turn(state: Mapping[str, Any]) -> dict[str, str] | None:
    """{"question", "context", "id"} when the last message is a human one this thread has not
    researched yet (`chat_turn` in state holds the id of the last one researched), else None."""
    messages = convert_to_messages(state.get("messages") or [])
    if not messages or not isinstance(messages[-1], HumanMessage):
        return None
    last = messages[-1]
    if last.id and last.id == state.get("chat_turn"):
        return None
    earlier = [
        f"{'The person' if isinstance(m, HumanMessage) else 'You'}: {_text(m)}" for m in messages[:-1] if _text(m)
    ]
    context = "\n".join(earlier)[-MAX_CONTEXT:]
    return {"question": _text(last), "context": context, "id": last.id or ""}


def with_context(brief: str, context: str) -> str:
    """The brief followed by the conversation before the question."""
    return f"{brief}\n\nEarlier in the conversation:\n{context}" if context else brief


class ChatReply(TypedDict, total=False):
    """What `chat_reply` adds to a state update."""

    messages: list[AnyMessage]


def chat_reply(state: Mapping[str, Any], report: str) -> ChatReply:
    """The state update adding the report to `messages` (only on a thread that chats)."""
    return {"messages": [AIMessage(content=report)]} if state.get("messages") and report else {}
