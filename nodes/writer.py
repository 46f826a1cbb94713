"""`writer`: the report (or, inside a deep run, one section's draft), citing sources as [n].

Three ways of writing, chosen by the context's `writer` field:
  single      one call writes the whole report from the numbered evidence blocks (the
              default for capable models);
  per_source  one short call per source, each paragraph citing the source it was written from;
  extractive  no model call: for each concept of the question, the source that covers it and
              its sentences that best answer the question, each cited (the default for the
              tiny local model, which must not be trusted to state facts).
Model-written text goes through `grounding.ground`: a sentence about "the source", or one no
retrieved source supports, is dropped; an uncited one is cited to the source that supports
it. When the budget or the model gives out, or nothing grounded is left, the writer falls
back to the extractive report, saying why it is partial. The source tracer checks the result.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from deepresearch import templates
from deepresearch.brief import brief_of, with_language
from deepresearch.config import Context, get_context
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.events import emit
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import chat
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.evidence import DATA_RULE, evidence_blocks, notes_text, source_block
from deepresearch.report.grounding import cite, extract_sentences, ground, prompt_frame
from deepresearch.report.subjects import with_subject
from deepresearch.research.compose import (
    RELEVANT,
    answer_first,
    partial_note,
    pick_sources,
    rank_sources,
    with_unanswered,
    writer_style,
)
from deepresearch.state.iterative import IterativeState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.text.citations import CITE
from deepresearch.text.safe import md_text

SYSTEM = f"""You write clear, factual research reports in Markdown.
{DATA_RULE}
Use only facts from the sources. After each claim, cite the source it comes from by its
number in square brackets, like [1] or [2][3]. Never cite a number that is not a source
below and never write URLs. State what the sources say about the world; never write about
"the source" or "the article" itself. Do not add a list of sources: it is added for you."""

SINGLE_PROMPT = """Question: {question}
{scope}
Sources:
{evidence}

Notes from the research:
{notes}

Write the {what} answering the question: {shape}"""

PER_SOURCE_PROMPT = """Question: {question}

{block}

In two or three sentences, say what this source tells us that helps answer the question.
Use only facts stated in the source."""

MAX_PER_SOURCE = 5
SENTENCES_PER_SOURCE = 3  # in a deep section or a template's part, each of several beside it
SENTENCES_PER_REPORT_SOURCE = 5  # in a whole report, under the source's own heading


def _template(ctx: Context, state: IterativeState) -> dict[str, Any] | None:
    """The report template, for a whole report (a deep section is one part of the outline)."""
    return templates.parse_template(ctx.template) if ctx.template and not state.get("section") else None


def _title(state: IterativeState, template: dict[str, Any] | None) -> str:
    return f"# {md_text((template or {}).get('title') or state['question'].strip(), 300)}"


def write_templated_extract(
    state: IterativeState, ranked: list[tuple[dict[str, Any], float]], template: dict[str, Any]
) -> str:
    """The extractive report under the template's headings: for each part, the chosen sources'
    sentences that best answer the brief and the part's title and purpose, each cited, each once."""
    brief = brief_of(state)
    units: list[tuple[str, str]] = []
    seen: set[str] = set()
    picked = pick_sources(state, ranked)
    for part in template["sections"]:
        for s, focus in picked:
            for x in extract_sentences(
                full_text(s),
                f"{brief} {focus} {part['title']} {part['purpose']}",
                limit=SENTENCES_PER_SOURCE,
                skip_title=s["title"],
            ):
                if x not in seen:
                    seen.add(x)
                    units.append((cite(x, s["id"]), s["key"]))
    return templates.place(units, template, _title(state, template)) if units else ""


def write_extractive(
    state: IterativeState,
    ranked: list[tuple[dict[str, Any], float]],
    ctx: Context,
    template: dict[str, Any] | None = None,
) -> str:
    """The sources' own sentences that answer the question, each cited: nothing invented."""
    if template:
        return write_templated_extract(state, ranked, template)
    question = brief_of(state)
    section = state.get("section")
    blocks = []
    opening, used, quoted = ([], Counter[str](), set[str]()) if section else answer_first(state, ctx)
    picked = pick_sources(state, ranked)
    keys = {s["key"] for s, _ in picked}
    evidence = {s["key"]: s for s in state.get("evidence", [])}
    for key in used:  # a source the answer quotes gets its section too
        if key not in keys and key in evidence:
            picked.append((evidence[key], ""))
            keys.add(key)
    most = SENTENCES_PER_SOURCE if section else SENTENCES_PER_REPORT_SOURCE
    sim = similarity_for(embedder_of(ctx))  # sentences quoted by closeness in meaning to the question
    for s, focus in picked:
        room = most - used[s["key"]]  # the answer's quotes count against the source's room
        text = full_text(s)
        sents = extract_sentences(text, f"{question} {focus}", limit=most, skip_title=s["title"], sim=sim)
        sents = [x for x in sents if x not in quoted][: max(room, 0)]
        if not sents:
            continue
        # under its own title a source's sentences are quoted as they stand; in a deep section
        # (no heading of the source's) an opening pronoun gets its subject's name
        body = " ".join(cite(with_subject(x, s["title"], text) if section else x, s["id"]) for x in sents)
        blocks.append(body if section else f"## {md_text(s['title'], 120)}\n\n{body}")
    heading = "" if section else f"{_title(state, None)}\n\n"  # the question, never the brief
    if not blocks and not used:
        return ""
    return heading + "\n\n".join(opening + blocks)


def _fallback(
    state: IterativeState,
    ranked: list[tuple[dict[str, Any], float]],
    ctx: Context,
    template: dict[str, Any] | None = None,
) -> str:
    text = write_extractive(state, ranked, ctx, template)
    if text.strip().strip("#").strip():
        return text
    heading = "" if state.get("section") else f"{_title(state, template)}\n\n"
    return heading + "No sources were found for this question."


def write_single(
    ctx: Context,
    budget: Budget,
    state: IterativeState,
    sources: list[dict[str, Any]],
    template: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """The model's report (or section) and the prompt's own words (see `grounding.prompt_frame`)."""
    section = state.get("section")
    notes = notes_text(state)
    prompt = SINGLE_PROMPT.format(
        question=brief_of(state),
        scope=f'This is one section, titled "{section}", of a longer report.\n' if section else "",
        evidence=evidence_blocks(sources, max_chars=9000, per_source=1800),
        notes=notes,
        what="section body (no title heading)" if section else "report",
        shape="a few paragraphs, each claim cited."
        if section
        else "a title line starting with '# ', then '## Answer' with a short paragraph that states the answer "
        "to the question directly (each claim cited), then sections with '## ' headings.",
    )
    if template:
        prompt += "\n\n" + templates.writer_instruction(template)
    prompt = with_language(prompt, state, ctx)
    text = chat(
        ctx,
        budget,
        [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)],
        node="writer",
        max_output=1200 if not section else 700,
        for_writer=True,
    )
    return text, prompt_frame(f"{SYSTEM}\n{prompt}", brief_of(state), notes, section or "")


def write_per_source(
    ctx: Context,
    budget: Budget,
    state: IterativeState,
    ranked: list[tuple[dict[str, Any], float]],
    template: dict[str, Any] | None = None,
) -> tuple[str, str | None, str]:
    """One paragraph per relevant source (at least two when there are two); the reason the
    budget stopped it; the prompts' own words (see `grounding.prompt_frame`)."""
    best = ranked[0][1] if ranked else 0.0
    sources = [s for i, (s, score) in enumerate(ranked) if i < 2 or score >= RELEVANT * best]
    paragraphs, stopped = [], None
    frame = prompt_frame(f"{DATA_RULE}\n{PER_SOURCE_PROMPT}".replace("{question}", "").replace("{block}", ""))
    for s in sources[:MAX_PER_SOURCE]:
        block = source_block(s, full_text(s)[:1500])
        prompt = with_language(PER_SOURCE_PROMPT.format(question=brief_of(state), block=block), state, ctx)
        frame = prompt_frame(f"{DATA_RULE}\n{prompt}", brief_of(state))
        try:
            text = chat(
                ctx,
                budget,
                [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
                node="writer",
                max_output=160,
                for_writer=True,
            )
        except BudgetExhausted as e:
            stopped = e.reason
            break
        text = " ".join(text.replace("[", "(").replace("]", ")").split())
        if text:
            paragraphs.append(
                (" ".join(cite(x, s["id"]) if not x.rstrip().endswith("]") else x for x in _sentences(text)), s["key"])
            )
    if template and paragraphs:
        return templates.place(paragraphs, template, _title(state, template), per_section=2), stopped, frame
    heading = "" if state.get("section") else f"{_title(state, template)}\n\n"
    return heading + "\n\n".join(p for p, _ in paragraphs), stopped, frame


def _sentences(text: str) -> list[str]:
    from deepresearch.text.sentences import split_sentences

    return split_sentences(text)


@reads_texts_once
def writer(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    stopped_by = state.get("stopped_by") or "complete"
    ranked = rank_sources(brief_of(state), state.get("evidence", []))
    sources = [s for s, _ in ranked]
    emit("writing", sources=len(sources), section=state.get("section"))
    errors = list(state.get("errors", []))
    draft = ""
    style = writer_style(ctx)
    template = _template(ctx, state)
    dropped: list[dict[str, Any]] = []
    frame = ""  # the prompt's own words: text that repeats them is no report
    try:
        if style == "extractive":
            draft = write_extractive(state, ranked, ctx, template)
        elif style == "per_source":
            draft, late_stop, frame = write_per_source(ctx, budget, state, ranked, template)
            if late_stop and stopped_by == "complete":
                stopped_by = late_stop
            if not draft.strip().strip("#").strip() and late_stop:
                raise BudgetExhausted(late_stop)
        else:
            draft, frame = write_single(ctx, budget, state, sources, template)
    except BudgetExhausted as e:
        stopped_by = e.reason if stopped_by == "complete" else stopped_by
        draft = ""
    except ModelCallError as e:
        emit("error", node="writer", cause=e.cause)
        errors.append({"node": "writer", "cause": e.cause})
        # a call cut by the end of the time budget is a budget stop, not a provider failure
        late = budget.exhausted(for_writer=True)
        if stopped_by != "max_seconds":
            stopped_by = late if late == "max_seconds" else "error"
        draft = ""
    if draft.strip() and style != "extractive":
        draft, dropped = ground(
            draft, state.get("evidence", []), full_text, threshold=ctx.support_threshold, frame=frame
        )
        if dropped:
            emit("grounding", dropped=len(dropped), section=state.get("section"))
    if not CITE.search(draft):  # nothing grounded left: the sources' own sentences
        draft = _fallback(state, ranked, ctx, template)
    if template:  # the template's headings, in order, whatever the model wrote
        draft = templates.conform(draft, template, _title(state, template))
    covered = set(state.get("covered") or [])
    missing = [c["name"] for c in state.get("concepts") or [] if c["name"] not in covered]
    if state.get("covered") is not None and missing:  # say what the research did not find
        draft = (
            draft.rstrip()
            + "\n\n> **Not found:** no retrieved source covers "
            + ", ".join(md_text(m, 80) for m in missing)
            + "."
        )
    if state.get("unanswered"):  # what the question asks that no retrieved sentence says, said plainly
        draft = with_unanswered(draft, list(state["unanswered"]))
    if stopped_by != "complete":
        draft = draft.rstrip() + "\n\n" + partial_note(stopped_by)
    return {"draft": draft, "stopped_by": stopped_by, "errors": errors, "usage": budget.close()}
