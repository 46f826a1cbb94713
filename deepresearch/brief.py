"""The research brief and the report's language, as the nodes read them from state.

The brief is the question plus what the person said when asked clarifying questions (node
`clarify`); every node shows it to the model in place of the bare question. Without
clarifications it is the question itself. A deep section's brief is its own question with the
report's brief after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict

from deepresearch import language as lang


def brief_of(state: Mapping[str, Any]) -> str:
    return state.get("brief") or state.get("question", "")


def language_of(state: Mapping[str, Any], ctx) -> str:
    """The report's language code: set by `clarify` (or handed to a deep section), else
    resolved from the context and the question."""
    return state.get("language") or lang.resolve(ctx.language, brief_of(state))


def language_rule(state: Mapping[str, Any], ctx) -> str:
    """The instruction for writing prompts ("" for English from an English question)."""
    return lang.rule(language_of(state, ctx), named=ctx.language != "auto")


def with_language(prompt: str, state: Mapping[str, Any], ctx) -> str:
    rule = language_rule(state, ctx)
    return f"{prompt}\n\n{rule}" if rule else prompt


def make_brief(question: str, rounds: list[dict]) -> str:
    """The question plus each round's questions and answers (`[{questions, answers}]`, answers
    a string or one per question)."""
    lines = []
    for r in rounds:
        answers = r["answers"]
        if isinstance(answers, list):
            lines += [f"- {q} {a}" for q, a in zip(r["questions"], answers) if a.strip()]
        else:
            lines.append(f"- Asked: {' '.join(r['questions'])}")
            lines.append(f"- Answer: {answers}")
    if not lines:
        return question
    return f"{question}\n\nWhat the person asking said when asked to clarify:\n" + "\n".join(lines)


def clarified_brief(state: Mapping[str, Any]) -> str:
    """The brief when the person clarified the question, else "" (it would only repeat it)."""
    brief = state.get("brief") or ""
    return brief if brief != state.get("question") else ""


def section_brief(section_question: str, report_brief: str | None) -> str | None:
    """A deep section's brief: its question, then the report's clarified brief (None without
    one: the section's question is its brief)."""
    if not report_brief:
        return None
    return f"{section_question}\n\nThis section is part of a report on:\n{report_brief}"


class CarriedOver(TypedDict, total=False):
    """What `carry_over` keeps (keys of either graph's state)."""

    brief: str
    language: str
    usage: dict[str, Any]
    errors: list[dict[str, Any]]


def carry_over(state: Mapping[str, Any]) -> CarriedOver:
    """What `clarify` set for this question and a node starting afresh keeps: the brief, the
    language, and the usage and errors of the clarifying call."""
    done = state.get("clarified") or {}
    if not done or done.get("question") != state.get("question"):
        return {}
    keep: CarriedOver = {}
    if state.get("brief"):
        keep["brief"] = state["brief"]
    if state.get("language"):
        keep["language"] = state["language"]
    return keep | {"usage": done.get("usage") or {}, "errors": list(done.get("errors") or [])}
