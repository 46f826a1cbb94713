"""`planner`: an outline for the report (a title, background, sections with key questions).

Re-run with the person's comment when the outline review asks for a revision.

Outlines are about the question: with the tiny local model (context `planner`: concepts) the
outline is built from the question's concepts: for a question about one thing, a section per
aspect it names (deepresearch.research.asked_aspects) and per aspect the material holds (its own
and related documents' sentences grouped by meaning, deepresearch.research.aspects); for two things
not compared, the sentences linking them and each one's side (deepresearch.research.relation_outline);
for a comparison, per aspect the compared things share (deepresearch.research.compare_outline);
a model's outline is checked by
`guard_outline`: a section that is not a question, or shares no concept with the question,
is replaced, and a comparison gets a section for every thing it compares.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from deepresearch import templates
from deepresearch.brief import brief_of, carry_over, with_language
from deepresearch.config import Context, get_context, tiny_model, validate_question
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import Similarity, similarity_for
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.research.asked_aspects import named_aspects
from deepresearch.research.compare_outline import comparison_outline
from deepresearch.research.coverage import content_overlap
from deepresearch.research.explore import aspect_outline, explored_outline
from deepresearch.research.relation_outline import relation_outline
from deepresearch.sections.dependencies import concept_dependencies, dependencies_checked, needed_titles, to_titles
from deepresearch.state.deep import DeepState, DependentReportPlan, ReportPlan, outline_view
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens
from deepresearch.tools.base import SearchBackend
from deepresearch.understanding.analysis import Analysis
from deepresearch.understanding.linking import linking_backend
from deepresearch.understanding.reader import analysis_of

SYSTEM = "You plan research reports. Each section must answer one distinct, searchable question."

PROMPT = """Research question: {question}

Plan a report with at most {max_sections} sections. Give it a title, one or two sentences of
background, and for each section a short title and the key question it answers."""

DEPENDENT = """
Sections may build on earlier ones (causes before consequences, each thing before their
comparison): give each section "depends_on", the titles of the earlier sections it needs
(empty when it stands on its own)."""

REVISE = """

The current outline is:
{outline}

A reviewer asked for this change: {comment}
Rewrite the outline to address the comment."""


ASPECTS = (
    "history",
    "origins",
    "causes",
    "consequences",
    "effects",
    "impact",
    "science",
    "development",
    "uses",
    "legacy",
    "influence",
)
_QUESTION = re.compile(
    r"^(what|who|whom|whose|which|when|where|why|how|is|are|was|were|do|does|did|can|could|"
    r"should|would|will|has|have|had|in what|to what)\b",
    re.IGNORECASE,
)


def fallback_plan(question: str) -> dict[str, Any]:
    return {
        "title": question[:150],
        "background": "",
        "sections": [{"title": "Overview", "key_question": _as_question(question)[:300]}],
    }


def _as_question(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .")
    return text if text.endswith("?") else text + "?"


def _section(concept: dict[str, Any], question: str, aspect: str | None = None) -> dict[str, Any]:
    q = " ".join(question.split()).rstrip(" ?.")
    if aspect:
        return {
            "title": f"{concept['name']}: {aspect}",
            "concepts": [concept],
            "key_question": f"What are the {aspect} of {concept['name']}, for the question: {q}?"[:300],
        }
    return {
        "title": concept["name"],
        "concepts": [concept],
        "key_question": f"What should a report on '{q}' say about {concept['name']}?"[:300],
    }


def concept_plan(
    analysis: Analysis,
    concepts: list[dict[str, Any]],
    max_sections: int,
    backend: SearchBackend | None = None,
    sim: Similarity | None = None,
) -> dict[str, Any]:
    """Aspects of the question: of its one thing (those it names first), of how its two things
    bear on each other, or those its compared things share; else a section per concept."""
    question = analysis.read
    if not concepts:
        return fallback_plan(question)
    words = set(analysis.words)
    aspects = [a for a in ASPECTS if a in words or a.rstrip("s") in words]
    subjects = [c for c in concepts if c.get("origin") != "related"]
    sections = []
    if len(subjects) == 1 and not analysis.comparison:
        # what a reader wants to know about it: the aspects the question names, each on its own
        # question, and those found in its own and related documents; else (too little material) a
        # section per aspect it names, or the subject and its closest related topics
        known = {c.get("title") or c["name"] for c in concepts}
        sim = sim or similarity_for(None)
        asked = named_aspects(question, [subjects[0]["name"], subjects[0].get("title") or ""])
        sections = aspect_outline(question, subjects[0], backend, known, max_sections, sim, asked=asked)
        if not sections and len(aspects) > 1:  # the aspects the question asks about are its sections
            sections = [_section(subjects[0], question, a) for a in aspects]
        sections = sections or explored_outline(question, subjects[0], backend, known, max_sections, sim)
    elif len(subjects) > 1 and not analysis.comparison:
        # how one thing bears on the other: the sentences that link them, then each thing's side
        known = {c.get("title") or c["name"] for c in concepts}
        sections = relation_outline(question, subjects, backend, known, max_sections, sim or similarity_for(None))
    elif len(subjects) > 1 and analysis.comparison:
        # each section compares the things on one aspect their documents share
        known = {c.get("title") or c["name"] for c in concepts}
        sim = sim or similarity_for(None)
        sections = comparison_outline(question, subjects, backend, known, max_sections, sim)
    if not sections:
        sections = [_section(c, question) for c in concepts]
    return {"title": " ".join(question.split())[:150], "background": "", "sections": sections[:max_sections]}


def is_question(text: str) -> bool:
    text = text.strip()
    return text.endswith("?") and bool(_QUESTION.match(text)) or bool(_QUESTION.match(text)) and len(text) > 15


def _mentions(section: dict[str, Any], concept: dict[str, Any]) -> bool:
    text = f"{section['title']} {section['key_question']}"
    want = [w for w in tokens(concept.get("phrase") or concept["name"]) if w not in STOP]
    have = set(stems(tokens(text)))
    return bool(want) and set(stems(want)) <= have or concept["name"].lower() in text.lower()


def guard_outline(
    plan: dict[str, Any], analysis: Analysis, concepts: list[dict[str, Any]], max_sections: int
) -> tuple[dict[str, Any], list[str]]:
    """The plan with its sections about the question; returns (plan, notes on what changed)."""
    question = analysis.read
    about = question + " " + " ".join(c["name"] for c in concepts)
    spare = [c for c in concepts if not any(_mentions(s, c) for s in plan["sections"])]
    notes, sections = [], []
    for s in plan["sections"]:
        if is_question(s["key_question"]) and content_overlap(f"{s['title']} {s['key_question']}", about):
            sections.append(s)
            continue
        replacement = _section(spare.pop(0), question) if spare else None
        notes.append(
            f"section '{s['title'][:60]}' is not about the question; "
            + (f"replaced by '{replacement['title']}'" if replacement else "dropped")
        )
        if replacement:
            sections.append(replacement)
    if analysis.comparison:
        for c in concepts:
            if not any(_mentions(s, c) for s in sections):
                notes.append(f"the comparison needs '{c['name']}': section added")
                sections.append(_section(c, question))
    if len(sections) > max_sections:  # keep every compared thing: drop the sections naming none first
        named = [s for s in sections if any(_mentions(s, c) for c in concepts)]
        sections = (named + [s for s in sections if s not in named])[:max_sections]
    if not sections:
        return concept_plan(analysis, concepts, max_sections), notes + ["no section was about the question"]
    for s in sections:  # the concepts each section researches (the section finds its own if none)
        s.setdefault("concepts", [c for c in concepts if _mentions(s, c)])
    return {**plan, "sections": sections}, notes


def planner(state: DeepState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    # dict, not DeepState: a fresh plan resets `section_results` with None, a value no state type has
    ctx = get_context(runtime)
    dependent = ctx.outline_style == "dependent"
    comment = state.get("review_comment")
    if not comment:  # a fresh plan: nothing of an earlier question on this thread carries over
        # but what `clarify` set, and what `analyse` read
        fresh: DeepState = {"question": state.get("question", ""), **carry_over(state)}
        if (read := state.get("analysis")) is not None:
            # `analyse` read this question (a capable model's reading is a call): its usage and
            # errors, which start from the clarifying call's, are this plan's so far
            fresh["analysis"] = read
            fresh["usage"] = state.get("usage") or {}
            fresh["errors"] = list(state.get("errors") or [])
        state = fresh
    budget = Budget.of(ctx, state)
    question = state.get("question", "")
    try:
        validate_question(question)
    except ValueError as e:
        emit("error", node="planner", cause=str(e))
        raise
    emit("planning", comment=comment or "")
    analysis = analysis_of(state)
    found: list[dict[str, Any]] | None = (
        state.get("concepts") if comment and state.get("concepts") is not None else None
    )
    backend = linking_backend(ctx)
    if found is None:  # the question's subjects, as `analyse` read them
        found = [dict(c.data()) for c in analysis.subjects]
    use_concepts = ctx.planner == "concepts" or (ctx.planner == "auto" and tiny_model(ctx))
    template = templates.parse_template(ctx.template) if ctx.template else None
    if template and not comment:
        return _fresh_plan(plan_from_template(ctx, budget, state, template, found, use_concepts), found, budget, state)
    if use_concepts and not comment:
        plan = concept_plan(analysis, found, ctx.max_sections, backend, similarity_for(embedder_of(ctx)))
        layers: dict[str, list[list[int]]] = {}
        if dependent:
            extractive = ctx.writer == "extractive" or (ctx.writer == "auto" and tiny_model(ctx))
            plan, layers["layers"] = dependencies_checked(
                concept_dependencies(plan, analysis, ctx.max_sections, closing=not extractive)
            )
        emit(
            "outline",
            outline=outline_view(plan),
            note="sections from the question's concepts and its subject's related topics",
            **layers,
        )
        return _planned(plan, found, budget, state.get("errors", []), fresh=True)
    prompt = PROMPT.format(question=brief_of(state), max_sections=ctx.max_sections)
    if template:  # a revision of a template's outline: the parts stay, their key questions change
        prompt = templates.PLAN_PROMPT.format(
            question=brief_of(state), parts=templates.parts_text(template["sections"])
        )
    if comment and state.get("plan"):
        outline = outline_view(state["plan"])
        needs = ["; ".join(needed_titles(outline["sections"], s)) for s in outline["sections"]]
        prompt += REVISE.format(
            outline="\n".join(
                [f"Title: {outline['title']}"]
                + [
                    f"- {s['title']}: {s['key_question']}" + (f" (builds on: {n})" if n else "")
                    for s, n in zip(outline["sections"], needs)
                ]
            ),
            comment=comment,
        )
    prompt = with_language(prompt, state, ctx)
    errors = list(state.get("errors", []))
    stop = ""  # the budget that cut the planner's call, if one did
    try:
        plan = structured(
            ctx,
            budget,
            [SystemMessage(content=SYSTEM), HumanMessage(content=prompt + (DEPENDENT if dependent else ""))],
            DependentReportPlan if dependent else ReportPlan,
            node="planner",
            max_output=600,
        ).model_dump()
        plan["title"] = plan["title"].strip()[:150]
        plan["sections"] = [
            {"title": s["title"].strip()[:100], "key_question": s["key_question"].strip()[:300]}
            | ({"depends_on": s["depends_on"]} if dependent else {})
            for s in plan["sections"][: ctx.max_sections]
        ]
    except (BudgetExhausted, ModelCallError) as e:
        if isinstance(e, BudgetExhausted):  # a budget stop (a call cut by the deadline), never an error
            stop = e.reason
            emit("budget", reason=e.reason, usage=budget.close(), node="planner")
        else:
            emit("error", node="planner", cause=e.cause)
            errors.append({"node": "planner", "cause": e.cause})
        plan = state.get("plan") or (
            concept_plan(analysis, found, ctx.max_sections) if found else fallback_plan(question)
        )
    layers = {}
    notes: list[str]
    if dependent:  # by title, so they survive the guard's replacements
        plan = {**plan, "sections": to_titles(plan["sections"])}
    if template:
        plan, notes = _template_sections(template, question, plan, found), []
    else:
        plan, notes = guard_outline(plan, analysis, found, ctx.max_sections)
    if dependent:
        plan, layers["layers"] = dependencies_checked(plan)
    emit("outline", outline=outline_view(plan), **({"note": "; ".join(notes)} if notes else {}), **layers)
    update = _planned(plan, found, budget, errors, fresh=not comment)
    if stop:  # the report says which budget stopped the run, whatever the sections say
        update["stopped_by"] = stop
    return update


def _template_sections(
    template: dict[str, Any], question: str, plan: dict[str, Any] | None, found: list[dict[str, Any]]
) -> dict[str, Any]:
    """The template's parts as the outline, with the key questions the model wrote for them."""
    given = (plan or {}).get("sections") or []
    out = templates.template_plan(
        template,
        question,
        title=(plan or {}).get("title"),
        key_questions=[s["key_question"] if is_question(s["key_question"]) else "" for s in given],
    )
    for s in out["sections"]:
        s["concepts"] = [c for c in found if _mentions(s, c)]
    return out


def plan_from_template(
    ctx: Context,
    budget: Budget,
    state: DeepState,
    template: dict[str, Any],
    found: list[dict[str, Any]],
    no_model: bool,
) -> dict[str, Any]:
    """The outline of a templated report: one section per part of the template, in order; the
    model writes the key questions (with the tiny model they are made from the parts)."""
    question = state.get("question", "")
    if no_model:
        plan = None
    else:
        prompt = with_language(
            templates.PLAN_PROMPT.format(question=brief_of(state), parts=templates.parts_text(template["sections"])),
            state,
            ctx,
        )
        try:
            plan = structured(
                ctx,
                budget,
                [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)],
                ReportPlan,
                node="planner",
                max_output=600,
            ).model_dump()
        except BudgetExhausted as e:  # a budget stop, never an error: the parts make the outline
            emit("budget", reason=e.reason, usage=budget.close(), node="planner")
            plan = None
        except ModelCallError as e:
            emit("error", node="planner", cause=e.cause)
            state.setdefault("errors", []).append({"node": "planner", "cause": e.cause})
            plan = None
    return _template_sections(template, question, plan, found)


def _fresh_plan(plan: dict[str, Any], found: list[dict[str, Any]], budget: Budget, state: DeepState) -> dict[str, Any]:
    emit("outline", outline=outline_view(plan), note="the template's parts")
    return _planned(plan, found, budget, list(state.get("errors", [])), fresh=True)


def _planned(
    plan: dict[str, Any], found: list[dict[str, Any]], budget: Budget, errors: list[dict[str, Any]], *, fresh: bool
) -> dict[str, Any]:
    """The planner's update: the outline, and for a fresh plan (not a revision) the results of an
    earlier question on this thread forgotten."""
    update: dict[str, Any] = {
        "plan": plan,
        "outline": outline_view(plan),
        "review_comment": None,
        "usage": budget.close(),
        "errors": errors,
        "concepts": found,
    }
    if fresh:
        update |= {
            "section_results": None,
            "review_round": 0,
            "report": "",
            "stopped_by": "",
            "removed": [],
            "sources": [],
            "citations": [],
            "sections": [],
        }
    return update
