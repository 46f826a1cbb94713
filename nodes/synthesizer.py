"""`synthesizer`: one report from the section drafts, in outline order.

The model writes the introduction and the conclusion; the section drafts go in as they
are (their citations already in the run's global numbers), so no citation is lost in a
rewrite. The report opens with the answer paragraph (deepresearch.research.answer) and, for a
comparison, closes with the comparison table. The introduction and conclusion follow the writer's rule: cited, or not written
(they go through `grounding.ground` against the run's sources; with the extractive writer
there is no model call and no introduction or conclusion). A failed section leaves a short
note about the gap. An outline of aspects (deepresearch.research.aspects) is written extractively
from every source of the run (deepresearch.research.aspect_report): each section from the sources
that speak to its aspect, no sentence in two sections, with a note on what the report covers
after the overview and a conclusion on where the sources agree and what they do not say.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from deepresearch.brief import brief_of, with_language
from deepresearch.config import Context, get_context
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import structured
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.grounding import ground, prompt_frame
from deepresearch.research.answer import OVERVIEW_HEADING
from deepresearch.research.aspect_report import Written, compose, frame_notes, is_aspect_plan
from deepresearch.research.compare import COMPARISON_HEADING
from deepresearch.research.compose import GAPS_NOTE, answer_first, partial_note, writer_style
from deepresearch.sections.dependencies import needed_titles
from deepresearch.state.deep import DeepState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.text.safe import md_text


class Synthesis(BaseModel):
    introduction: str = Field(
        description="Two to four sentences introducing the report, the first of them "
        "stating the answer to the research question."
    )
    conclusion: str = Field(description="Two to four sentences drawing the sections together.")


SYSTEM = """You edit research reports. Write only from the section drafts given. Keep any
[n] citation numbers exactly as they appear in the drafts; never invent new ones. Every
sentence states a fact from the drafts and carries its [n] citation; never write about the
report, the sections or the sources themselves."""

PROMPT = """Report title: {title}
Research question: {question}
Background: {background}

Section drafts:
{drafts}

Write a short introduction and a short conclusion for this report. The introduction's first
sentence states the answer to the research question."""


def builds_on(plan: dict[str, Any]) -> str:
    """A dependent outline: how its sections build on each other, for the introduction."""
    said = [
        f"'{s['title']}' builds on " + " and ".join(f"'{t}'" for t in needed_titles(plan["sections"], s))
        for s in plan["sections"]
        if needed_titles(plan["sections"], s)
    ]
    return (
        ("\n\nThe sections build on each other: " + "; ".join(said) + ". The introduction may say so.") if said else ""
    )


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def subject_section(
    answer: list[str], drafts: list[dict[str, Any]], keys: set[str], evidence: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The draft a broad question's overview stands for: the explored outline's section on the
    subject itself, written from the source the overview quotes. Its text goes under the
    overview instead of repeating it under a heading of its own."""
    if not answer or not answer[0].startswith(OVERVIEW_HEADING):
        return None
    titles = {s["title"].lower() for s in evidence if s["key"] in keys}
    for d in drafts:
        if (
            d["status"] == "done"
            and d["text"].strip()
            and d["title"].lower() in titles
            and keys & set(d.get("source_keys") or ())
        ):
            return d
    return None


def _at(written: list[Written | None], draft: dict[str, Any]) -> Written | None:
    i = draft.get("index")
    return written[i] if isinstance(i, int) and 0 <= i < len(written) else None


@reads_texts_once
def synthesizer(state: DeepState, runtime: Runtime[Context] | None = None) -> DeepState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    plan, drafts = state["plan"], state.get("drafts", [])
    emit("synthesizing", sections=len(drafts))
    done = [d for d in drafts if d["status"] == "done" and d["text"].strip()]
    stopped_by = state.get("stopped_by") or "complete"
    errors = list(state.get("errors", []))
    intro = conclusion = frame = ""
    if done and writer_style(ctx) != "extractive" and not ctx.template:  # a template's parts are the whole report
        per = max(300, 6000 // max(1, len(done)))
        excerpts = [_excerpt(d["text"], per) for d in done]
        prompt = with_language(
            PROMPT.format(
                title=plan["title"],
                question=brief_of(state),
                background=plan.get("background") or "(none)",
                drafts="\n\n".join(f"## {d['title']}\n{x}" for d, x in zip(done, excerpts)),
            ),
            state,
            ctx,
        )
        # the prompt's own words, which an introduction must not repeat (the drafts it may)
        frame = prompt_frame(
            f"{SYSTEM}\n{prompt}{builds_on(plan)}",
            plan["title"],
            brief_of(state),
            plan.get("background") or "",
            *excerpts,
        )
        try:
            out = structured(
                ctx,
                budget,
                [SystemMessage(content=SYSTEM), HumanMessage(content=prompt + builds_on(plan))],
                Synthesis,
                node="synthesizer",
                max_output=600,
                for_writer=True,
            )
            intro, conclusion = out.introduction.strip(), out.conclusion.strip()
        except BudgetExhausted as e:
            stopped_by = e.reason if stopped_by == "complete" else stopped_by
        except ModelCallError as e:
            emit("error", node="synthesizer", cause=e.cause)
            errors.append({"node": "synthesizer", "cause": e.cause})
    evidence = state.get("evidence", [])
    # an introduction and a conclusion are paragraphs: no heading or quote of theirs reaches the report
    intro = (
        ground(intro, evidence, full_text, threshold=ctx.support_threshold, frame=frame, prose_only=True)[0]
        if intro
        else ""
    )
    conclusion = (
        ground(conclusion, evidence, full_text, threshold=ctx.support_threshold, frame=frame, prose_only=True)[0]
        if conclusion
        else ""
    )

    parts = [f"# {md_text(plan['title'], 150)}"]
    opening, quoting, quoted = answer_first(state, ctx) if not ctx.template else ([], Counter[str](), set[str]())
    # the short answer first: quoted from the sources with the extractive writer; a model writes
    # it as the introduction's opening. A comparison's table closes the report either way.
    answer = [x for x in opening if not x.startswith(COMPARISON_HEADING)] if writer_style(ctx) == "extractive" else []
    table = [x for x in opening if x.startswith(COMPARISON_HEADING)]
    aspect_notes = ("", "")
    if writer_style(ctx) == "extractive" and is_aspect_plan(plan):
        # sections that are aspects: every source that speaks to each, no sentence in two of them
        written, found = compose(plan, evidence, full_text, similarity_for(embedder_of(ctx)), set(quoted))
        drafts = [
            {**d, "text": w.text, "status": "done", "source_keys": w.keys} if (w := _at(written, d)) else d
            for d in drafts
        ]
        aspect_notes = frame_notes(plan, state.get("question", ""), written, found, evidence)
        merged = None
    else:
        merged = subject_section(answer, drafts, set(quoting), evidence)
    parts += answer + ([merged["text"].strip()] if merged else [])
    if aspect_notes[0]:
        parts.append(aspect_notes[0])
    if intro:
        parts += ["## Introduction", intro]
    # a template's heading levels (a draft without an index gets the default)
    levels: dict[int | None, int] = {i: s.get("level", 2) for i, s in enumerate(plan["sections"])}
    for d in drafts:
        if d is merged:
            continue
        parts.append(f"{'#' * levels.get(d.get('index'), 2)} {md_text(d['title'], 100)}")
        if d["status"] == "done" and d["text"].strip():
            parts.append(d["text"].strip())
        else:
            # why stays in `sections`/`errors`: a provider's error text never goes into the report
            parts.append("> **Gap:** this section could not be researched.")
    parts += table
    if conclusion or aspect_notes[1]:
        parts += ["## Conclusion"] + [x for x in (conclusion, aspect_notes[1]) if x]
    failed = [md_text(d["title"], 100) for d in drafts if d["status"] == "failed"]
    if failed:
        parts.append(
            f"{GAPS_NOTE} {len(failed)} of {len(drafts)} sections failed ({', '.join(failed)}); "
            "the report has gaps there."
        )
    if stopped_by not in ("complete", "error"):  # said once, naming the sections it applies to
        early = [md_text(d["title"], 100) for d in drafts if d["status"] == "done" and d["stopped_by"] != "complete"]
        where = (
            f" in {len(early)} of {len(drafts)} sections ({', '.join(early)})" if 0 < len(early) < len(drafts) else ""
        )
        parts.append(partial_note(stopped_by, where))
    return {"draft": "\n\n".join(parts), "stopped_by": stopped_by, "usage": budget.close(), "errors": errors}
