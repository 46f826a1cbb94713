"""State keys of the research brief, the report's language and the clarifying questions,
shared by both graphs (node `clarify`)."""

from __future__ import annotations

from typing import Annotated, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import Field
from typing_extensions import TypedDict


class BriefOutput(TypedDict, total=False):
    brief: str  # the question plus what the person said when asked to clarify it
    language: str  # the report's language (ISO 639-1 code)


class ClarifyState(BriefOutput, total=False):
    clarifying: dict | None  # while asking: {question, round, questions, error, rounds: [...], usage, errors}
    clarify_action: Literal["ask", "go", "finish"]  # clarify again, research, or end the run
    clarified: dict  # {question, usage, errors}: what clarify did for this question (see deepresearch.brief)
    chat_turn: str  # the id of the last chat message researched (deepresearch.chat)


class ClarifyUpdate(ClarifyState, total=False):
    """What `clarify` writes: these keys and the ones of the research and its result it sets
    when the person ends the run (keys both graphs' states have, with the same types)."""

    question: str
    usage: dict
    errors: list[dict]
    stopped_by: str
    report: str
    sources: list[dict]
    citations: list[dict]


class ChatInput(TypedDict, total=False):
    """A graph's input: a question, or LangGraph's chat input (deepresearch.chat)."""

    question: Annotated[str, Field(description="The research question (or give `messages`).")]
    messages: Annotated[
        list[AnyMessage],
        Field(
            description=(
                "Chat input instead of `question`: the last human message is the question, earlier ones are "
                "context for the research brief; the report is added as an AI message."
            )
        ),
        add_messages,
    ]


class ChatOutput(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]  # the chat: the report is added as an AI message
