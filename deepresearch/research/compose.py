"""What a report is written from and how: the writing style, the sources ranked for the
question and picked per concept, the answer-first opening, and why a run stopped early.
Shared by the writer, the synthesizer, the proofreader and the dependent sections."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from deepresearch.config import Context, tiny_model
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research.answer import ANSWER_HEADING, NOT_FOUND_NOTE, answer_paragraph, lead_line
from deepresearch.research.asked import answering
from deepresearch.research.choice import choice_paragraph
from deepresearch.research.compare import comparison_table
from deepresearch.research.coverage import sources_for
from deepresearch.research.polar import polar_paragraph
from deepresearch.store import full_text
from deepresearch.text.citations import relevance
from deepresearch.text.safe import md_text
from deepresearch.understanding.linking import linking_backend
from deepresearch.understanding.reader import analysis_of

MAX_EXTRACT_SOURCES = 6


STOP_REASONS = {
    "max_tokens": "the token budget was spent",
    "max_seconds": "the time budget was spent",
    "max_cost": "the cost budget was spent",
    "max_iterations": "the research loop reached its iteration limit",
    "error": "a model call failed",
    "no_new_sources": "two rounds of searches found no new source",
    "stopped": "the person stopped it",  # the web page's Stop: the run cancelled, what it found written
}


PARTIAL_NOTE = "> **Partial report:**"
UNANSWERED_NOTE = "> **Not answered:**"
GAPS_NOTE = "> **Gaps:**"
REPORT_NOTES = (PARTIAL_NOTE, GAPS_NOTE)  # notes on a whole report, after its last section


def unanswered_said(asked: dict) -> str:
    """What an asked thing (deepresearch.research.asked.Asked.data) the sources leave open, as a reader
    reads it: the question's own words, and the role no source filled or the thing it led to."""
    text = asked.get("text") or asked.get("gap") or ""
    said = f"“{md_text(text.strip().rstrip('?.!'), 160)}”"
    if asked.get("role") and asked.get("via"):
        role, via = md_text(asked["role"], 40), md_text(asked["via"], 80)
        # a role the question says with a verb after a pronoun ("who built X"), or with a noun
        if re.search(rf"\b(?:who|which|that)\s+{re.escape(asked['role'])}\b", text, re.IGNORECASE):
            return f"{said} (no source says who {role} {via})"
        return f"{said} (no source names the {role} of {via})"
    if asked.get("subject") and asked["subject"].lower() not in text.lower():
        return f"{said} of {md_text(asked['subject'], 80)}"
    return said


def with_unanswered(draft: str, asked: list[dict]) -> str:
    """The draft with one sentence saying what the retrieved sources do not answer (`asked`: the asked
    things left open), placed under its answer heading (where a reader looks for the answer), else at
    its end."""
    said_once = list(dict.fromkeys(map(unanswered_said, asked)))  # two things asked in the same words: said once
    note = f"{UNANSWERED_NOTE} the sources retrieved do not answer " + "; ".join(said_once) + "."
    head = f"{ANSWER_HEADING}\n\n"
    said = re.search(rf"^{re.escape(head)}{re.escape(NOT_FOUND_NOTE)}[^\n]*\n?", draft, re.M)
    if said:  # the answer's own "no sentence states ..." says it once, as the question's words
        return draft[: said.start()] + f"{head}{note}\n" + draft[said.end() :]
    if head in draft:
        return draft.replace(head, f"{head}{note}\n\n", 1)
    return draft.rstrip() + "\n\n" + note


def partial_note(stopped_by: str, where: str = "") -> str:
    """The note that research stopped early (`where`: in which sections, when not all)."""
    return (
        f"{PARTIAL_NOTE} research stopped early because {STOP_REASONS.get(stopped_by, stopped_by)} "
        f"({stopped_by}){where}."
    )


def without_partial_note(draft: str) -> str:
    """A section's draft without the writer's partial-report note: a deep report says it once."""
    return "\n".join(line for line in draft.split("\n") if not line.startswith(PARTIAL_NOTE)).strip()


RELEVANT = 0.75  # per_source writes only about sources scoring this share of the best one


def rank_sources(question: str, evidence: list[dict]) -> list[tuple[dict, float]]:
    """Evidence with its relevance to the question (the overlap scorer of the citation
    checks: BM25 over a handful of documents gives odd weights), best first; ties keep
    the order of retrieval."""
    scored = [(s, relevance(question, f"{s['title']}. {full_text(s)}")) for s in evidence]
    return sorted(scored, key=lambda pair: -pair[1])


def writer_style(ctx) -> str:
    """How reports are written: the context's `writer`, or for `auto` extractive with the tiny
    local model and `single` with any other."""
    if ctx.writer != "auto":
        return ctx.writer
    return "extractive" if tiny_model(ctx) else "single"


def pick_sources(state: Mapping[str, Any], ranked: list[tuple[dict, float]]) -> list[tuple[dict, str]]:
    """(source, focus) to write from: the best source of each concept, in the question's
    order, then other sources nearly as relevant as the best."""
    order = [s for s, _ in ranked]
    chosen: dict[str, tuple[dict, str]] = {}
    for c in state.get("concepts") or []:
        hits = sources_for(c, order, full_text)
        if hits and hits[0]["key"] not in chosen:
            chosen[hits[0]["key"]] = (hits[0], c["name"])
    if chosen:  # only what helps: sources covering a concept (the answer's own are added by the writer)
        return list(chosen.values())[:MAX_EXTRACT_SOURCES]
    best = ranked[0][1] if ranked else 0.0
    for i, (s, score) in enumerate(ranked):
        if len(chosen) >= MAX_EXTRACT_SOURCES:
            break
        if s["key"] not in chosen and score > 0 and (score >= RELEVANT * best or (not chosen and i < 2)):
            chosen[s["key"]] = (s, "")
    return list(chosen.values())[:MAX_EXTRACT_SOURCES]


def answer_first(state: Mapping[str, Any], ctx: Context) -> tuple[list[str], Counter[str], set[str]]:
    """The report's opening: the answer paragraph and, for a comparison, the table; how many
    sentences the answer quotes from each source (by key), and those sentences. Sentences are
    compared by meaning with the run's embedder (`ctx.embeddings`)."""
    concepts = state.get("concepts") or []
    evidence = state.get("evidence", [])
    if not evidence:
        return [], Counter(), set()
    analysis = analysis_of(state)  # the question's own words: a brief adds the person's answers
    sim = similarity_for(embedder_of(ctx))
    checked = answering(analysis, concepts, evidence, full_text, sim, linking_backend(ctx))
    paragraph, picks = (
        polar_paragraph(analysis, evidence, full_text)
        or choice_paragraph(analysis, evidence, full_text, sim)
        or answer_paragraph(analysis, concepts, evidence, full_text, sim, checked)
    )
    table = comparison_table(analysis, concepts, evidence, full_text, sim)
    # a source's "Title (description)." line is no sentence of its text: it takes none of its section's room
    quoting = Counter({p.source["key"]: 0 for p in picks})  # every source quoted gets its section
    quoting.update(p.source["key"] for p in picks if not lead_line(p.sentence, p.source))
    return [x for x in (paragraph, table) if x], quoting, {p.sentence for p in picks}
