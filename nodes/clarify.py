"""`clarify`: the first node of both graphs. It sets the research brief and the report's
language; when the context's `clarify` is on it first asks the person what they mean.

A structured model call (`Clarification`) decides whether the question is clear enough; if
not, it writes up to `max_clarify_questions` short questions and the node pauses with
    {"type": "clarify", "questions": [...], "round": k, "max_rounds": m[, "error": "..."]}
The resume value is one of
    {"action": "answer", "answers": "free text" | ["one answer per question", ...]}
    {"action": "skip"}      research the question as asked
    {"action": "finish"}    end the run now: no research, stopped_by "cancelled", no report
An invalid answer is asked again (it does not use a round). After `max_clarify_rounds`
answers the research goes on. When the model says the question is clear, the call fails or
the budget is too small, nothing pauses and a `clarify` event says why. The embedded tiny
model's judgement is not trusted: with it the questions are fixed ones about scope, asked once.

The node re-runs from its top on every resume, so it never calls the model and interrupts in
the same visit: one visit writes the questions to state and loops back, the next one asks.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from deepresearch import language as lang
from deepresearch.brief import make_brief
from deepresearch.chat import chat_turn, with_context
from deepresearch.config import MAX_CLARIFY_QUESTIONS, Context, get_context, tiny_model, validate_question
from deepresearch.events import emit
from deepresearch.llm.budget import USAGE_KEYS, Budget, BudgetExhausted, add_usage, empty_usage
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.state.brief import ClarifyUpdate
from deepresearch.state.shared import GraphState

SYSTEM = "You help people frame research questions before a research assistant answers them in a report."

PROMPT = """Research question: {brief}

Can this question be researched and answered in a report as it stands? It cannot when it
could mean quite different things, or when the report would differ a lot with the period,
place, scope or audience the person has in mind. If it can, say it is clear and ask nothing.
If not, write at most {n} short questions to the person, each about one thing to settle."""


class Clarification(BaseModel):
    clear: bool = Field(description="True if the question can be researched as asked.")
    questions: list[str] = Field(
        default_factory=list,
        max_length=MAX_CLARIFY_QUESTIONS,
        description="Short questions to the person; none when the question is clear.",
    )


# The embedded model's questions: fixed, about scope (its own judgement is not trusted).
FIXED = {
    "en": [
        "What should the report focus on?",
        "Is there a period, place or case you have in mind?",
        "Who is the report for, and what will it be used for?",
    ],
    "fr": [
        "Sur quoi le rapport doit-il se concentrer ?",
        "Avez-vous en tête une période, un lieu ou un cas précis ?",
        "À qui s'adresse le rapport, et à quoi servira-t-il ?",
    ],
    "de": [
        "Worauf soll sich der Bericht konzentrieren?",
        "Denken Sie an einen bestimmten Zeitraum, Ort oder Fall?",
        "Für wen ist der Bericht, und wofür wird er gebraucht?",
    ],
    "es": [
        "¿En qué debe centrarse el informe?",
        "¿Tiene en mente un periodo, un lugar o un caso concreto?",
        "¿Para quién es el informe y para qué se usará?",
    ],
    "it": [
        "Su cosa deve concentrarsi il rapporto?",
        "Ha in mente un periodo, un luogo o un caso preciso?",
        "A chi è destinato il rapporto, e a cosa servirà?",
    ],
    "pt": [
        "Em que o relatório deve se concentrar?",
        "Tem em mente um período, um lugar ou um caso específico?",
        "Para quem é o relatório e para que será usado?",
    ],
}
MAX_ANSWER = 2000
MAX_QUESTION = 300


def _parse(answer: object, n: int) -> tuple[str, str | list[str] | None, str | None]:
    """(action, answers, error)."""
    if not isinstance(answer, dict):
        return (
            "",
            None,
            f'expected an object like {{"action": "answer", "answers": "..."}}, got {type(answer).__name__}',
        )
    action = answer.get("action")
    if action in ("skip", "finish"):
        return action, None, None
    if action != "answer":
        return "", None, f"unknown action {action!r}; use answer, skip or finish"
    given = answer.get("answers")
    if isinstance(given, str):
        if not given.strip():
            return "", None, 'answer needs non-empty "answers"'
        return action, " ".join(given.split())[:MAX_ANSWER], None
    if isinstance(given, list):
        if len(given) != n or not all(isinstance(a, str) for a in given):
            return (
                "",
                None,
                (f'"answers" as a list needs one text per question ({n}), got {len(given)} item(s); or give one text'),
            )
        if not any(a.strip() for a in given):
            return "", None, "every answer is empty; answer at least one question, or skip"
        return action, [" ".join(a.split())[:MAX_ANSWER] for a in given], None
    return "", None, '"answers" must be a text or a list with one answer per question'


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out = {k: (after.get(k, 0) or 0) - (before.get(k, 0) or 0) for k in USAGE_KEYS}
    out["seconds"] = round(max(0.0, out["seconds"]), 3)
    return out


def _ask_model(ctx: Context, budget: Budget, brief: str, code: str) -> tuple[list[str] | None, str, str]:
    """(questions or None, reason, note): None when nothing is to be asked, with why."""
    prompt = lang.with_rule(PROMPT.format(brief=brief, n=ctx.max_clarify_questions), code, named=ctx.language != "auto")
    try:
        out = structured(
            ctx,
            budget,
            [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)],
            Clarification,
            node="clarify",
            max_output=60 + 40 * ctx.max_clarify_questions,
        )
    except BudgetExhausted as e:
        return None, "budget", f"the budget is too small for the clarifying call ({e.reason})"
    except ModelCallError as e:
        emit("error", node="clarify", cause=e.cause)
        return None, "error", f"the clarifying call failed: {e.cause}"
    questions = [" ".join(q.split())[:MAX_QUESTION] for q in out.questions if q.strip()][: ctx.max_clarify_questions]
    if out.clear or not questions:
        return None, "clear", "the model judged the question clear enough to research as asked"
    return questions, "", ""


def clarify(state: GraphState, runtime: Runtime[Context] | None = None) -> ClarifyUpdate:
    """Chat input (deepresearch.chat): the last human message is the question, the earlier
    ones join the brief."""
    turn = chat_turn(state)
    if turn is None:
        return _clarify(state, runtime)
    asked: GraphState = {**state, "question": turn["question"]}
    out: ClarifyUpdate = {**_clarify(asked, runtime), "question": turn["question"]}
    if "brief" in out:
        out["brief"] = with_context(out["brief"], turn["context"])
    if out.get("clarify_action") != "ask":
        out["chat_turn"] = turn["id"]
    return out


def _clarify(state: GraphState, runtime: Runtime[Context] | None = None) -> ClarifyUpdate:
    ctx = get_context(runtime)
    question = state.get("question", "")
    try:
        validate_question(question)
    except ValueError as e:
        emit("error", node="clarify", cause=str(e))
        raise
    current = state.get("clarifying")
    if not current or current.get("question") != question:  # this question's first visit
        finished = bool(state.get("stopped_by"))  # an earlier run on the thread: the next node starts afresh
        current = {
            "question": question,
            "round": 1,
            "questions": None,
            "error": None,
            "rounds": [],
            "language": lang.resolve(ctx.language, question),
            "usage": empty_usage(),
            "errors": [],
            "base_usage": {} if finished else (state.get("usage") or {}),
            "base_errors": [] if finished else list(state.get("errors") or []),
        }
    code = current["language"]
    if not ctx.clarify:
        return _go(current, question, code, note=None)
    base = add_usage(current["base_usage"], current["usage"])
    budget = Budget.of(ctx, {"usage": base})
    if current["questions"] is None:  # this round's questions: from the model, or fixed ones
        if tiny_model(ctx):
            if current["rounds"]:
                return _go(
                    current,
                    question,
                    code,
                    note=("rounds_used", "the embedded model asks its fixed questions once"),
                    budget=budget,
                    base=base,
                )
            questions: list[str] | None = FIXED.get(code, FIXED["en"])[: ctx.max_clarify_questions]
        else:
            brief = make_brief(question, current["rounds"])
            questions, reason, note = _ask_model(ctx, budget, brief, code)
            if questions is None:
                return _go(current, question, code, note=(reason, note), budget=budget, base=base)
        emit("clarify", status="asking", round=current["round"], questions=questions)
        spent = _delta(budget.close(), base)
        current = {**current, "questions": questions, "usage": add_usage(current["usage"], spent)}
        return {"clarifying": current, "clarify_action": "ask", "usage": add_usage(base, spent)}
    request = {
        "type": "clarify",
        "questions": current["questions"],
        "round": current["round"],
        "max_rounds": ctx.max_clarify_rounds,
    }
    if current.get("error"):
        request["error"] = current["error"]
    answer = interrupt(request)
    action, answers, error = _parse(answer, len(current["questions"]))
    if error:
        emit("error", node="clarify", cause=error)
        return {"clarifying": {**current, "error": error}, "clarify_action": "ask"}
    if action == "finish":
        emit("clarify", status="finished", round=current["round"])
        out = _go(current, question, code, note=None, budget=budget, base=base)
        return out | {
            "clarify_action": "finish",
            "stopped_by": "cancelled",
            "report": "",
            "sources": [],
            "citations": [],
        }
    if action == "skip":
        emit("clarify", status="skipped", round=current["round"])
        return _go(current, question, code, note=None, budget=budget, base=base)
    rounds = current["rounds"] + [{"questions": current["questions"], "answers": answers}]
    emit("clarify", status="answered", round=current["round"])
    current = {**current, "rounds": rounds, "error": None}
    if len(rounds) >= ctx.max_clarify_rounds:
        return _go(current, question, code, note=None, budget=budget, base=base)
    return {"clarifying": {**current, "round": current["round"] + 1, "questions": None}, "clarify_action": "ask"}


def _go(
    current: dict[str, Any],
    question: str,
    code: str,
    *,
    note: tuple[str, str] | None,
    budget: Budget | None = None,
    base: dict[str, Any] | None = None,
) -> ClarifyUpdate:
    """On to the research, with the brief and the language (a clarify event says why nothing
    was asked, when that is so)."""
    usage = current["usage"]
    if budget is not None:
        usage = add_usage(usage, _delta(budget.close(), base or {}))
    if note is not None:
        reason, text = note
        emit("clarify", status="not_asked", reason=reason, note=text)
    errors = current["errors"] + ([{"node": "clarify", "cause": text}] if note and note[0] == "error" else [])
    return {
        "brief": make_brief(question, current["rounds"]),
        "language": code,
        "clarifying": None,
        "clarify_action": "go",
        "clarified": {"question": question, "usage": usage, "errors": errors},
        "usage": add_usage(current["base_usage"], usage),
        "errors": current["base_errors"] + errors,
    }


class ClarifyRoute(TypedDict, total=False):
    """What `route_after_clarify` reads (a conditional edge gets only its annotated keys)."""

    clarify_action: Literal["ask", "go", "finish"]


def route_after_clarify(state: ClarifyRoute) -> Literal["ask", "go", "finish"]:
    """Ask (again), go on to the research, or end the run."""
    return state.get("clarify_action") or "go"
