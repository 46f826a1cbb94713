"""`writer`: the report (or, inside a deep run, one section's draft), citing sources as [n].

Two ways of writing, chosen by the context's `writer` field:
  single      one call writes the whole report from the numbered evidence blocks;
  per_source  one short call per source, each paragraph citing the source it was written
              from (the default for the tiny local model, which cannot juggle many sources).
When the budget or the model gives out, the writer still returns a partial report built
from the evidence, saying why it is partial. The source tracer checks the result.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage

from deepresearch.citations import support
from deepresearch.config import get_context
from deepresearch.events import emit
from deepresearch.evidence import DATA_RULE, evidence_blocks, source_block
from deepresearch.llm import ModelCallError, chat
from deepresearch.state.budget import Budget, BudgetExhausted
from deepresearch.state.sources import full_text

SYSTEM = f"""You write clear, factual research reports in Markdown.
{DATA_RULE}
Use only facts from the sources. After each claim, cite the source it comes from by its
number in square brackets, like [1] or [2][3]. Never cite a number that is not a source
below and never write URLs. Do not add a list of sources: it is added for you."""

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

STOP_REASONS = {
    "max_tokens": "the token budget was spent",
    "max_seconds": "the time budget was spent",
    "max_iterations": "the research loop reached its iteration limit",
    "error": "a model call failed",
}


RELEVANT = 0.75  # per_source writes only about sources scoring this share of the best one


def rank_sources(question: str, evidence: list[dict]) -> list[tuple[dict, float]]:
    """Evidence with its relevance to the question (the overlap scorer of the citation
    checks: BM25 over a handful of documents gives odd weights), best first; ties keep
    the order of retrieval."""
    scored = [(s, support(question, f"{s['title']}. {full_text(s)}")[0]) for s in evidence]
    return sorted(scored, key=lambda pair: -pair[1])


def _style(ctx) -> str:
    if ctx.writer != "auto":
        return ctx.writer
    return "per_source" if ctx.model == "local" else "single"


def _fallback(sources: list[dict]) -> str:
    if not sources:
        return "No sources were found for this question."
    lines = ["The sources found so far:", ""]
    lines += [f"- **{s['title']}**: {s['snippet']} [{s['id']}]" for s in sources[:8]]
    return "\n".join(lines)


def write_single(ctx, budget: Budget, state: dict, sources: list[dict]) -> str:
    section = state.get("section")
    prompt = SINGLE_PROMPT.format(
        question=state["question"],
        scope=f"This is one section, titled \"{section}\", of a longer report.\n" if section else "",
        evidence=evidence_blocks(sources, max_chars=9000, per_source=1800),
        notes="\n".join(state.get("observations", [])) or "(none)",
        what="section body (no title heading)" if section else "report",
        shape="a few paragraphs, each claim cited." if section
        else "a title line starting with '# ', a short summary, then sections with '## ' headings.",
    )
    return chat(ctx, budget, [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)],
                node="writer", max_output=1200 if not section else 700, for_writer=True)


def write_per_source(ctx, budget: Budget, state: dict, ranked: list[tuple[dict, float]]) -> tuple[str, str | None]:
    """One paragraph per relevant source (at least two when there are two)."""
    best = ranked[0][1] if ranked else 0.0
    sources = [s for i, (s, score) in enumerate(ranked) if i < 2 or score >= RELEVANT * best]
    paragraphs, stopped = [], None
    for s in sources[:MAX_PER_SOURCE]:
        block = source_block(s, full_text(s)[:1500])
        prompt = PER_SOURCE_PROMPT.format(question=state["question"], block=block)
        try:
            text = chat(ctx, budget, [SystemMessage(content=DATA_RULE), HumanMessage(content=prompt)],
                        node="writer", max_output=160, for_writer=True)
        except BudgetExhausted as e:
            stopped = e.reason
            break
        text = " ".join(text.replace("[", "(").replace("]", ")").split())
        if text:
            paragraphs.append(f"**{s['title']}.** {text} [{s['id']}]")
    heading = "" if state.get("section") else f"# {state['question'].strip()}\n\n"
    return heading + "\n\n".join(paragraphs), stopped


def writer(state: dict, runtime=None) -> dict:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    stopped_by = state.get("stopped_by") or "complete"
    ranked = rank_sources(state["question"], state.get("evidence", []))
    sources = [s for s, _ in ranked]
    emit("writing", sources=len(sources), section=state.get("section"))
    errors = list(state.get("errors", []))
    draft = ""
    try:
        if _style(ctx) == "per_source":
            draft, late_stop = write_per_source(ctx, budget, state, ranked)
            if late_stop and stopped_by == "complete":
                stopped_by = late_stop
            if not draft.strip().strip("#").strip() and late_stop:
                raise BudgetExhausted(late_stop)
        else:
            draft = write_single(ctx, budget, state, sources)
    except BudgetExhausted as e:
        stopped_by = e.reason if stopped_by == "complete" else stopped_by
        draft = ""
    except ModelCallError as e:
        emit("error", node="writer", cause=e.cause)
        errors.append({"node": "writer", "cause": e.cause})
        stopped_by = "error"
        draft = ""
    if not draft.strip():
        heading = "" if state.get("section") else f"# {state['question'].strip()}\n\n"
        draft = heading + _fallback(sources)
    if stopped_by != "complete":
        why = STOP_REASONS.get(stopped_by, stopped_by)
        draft = draft.rstrip() + f"\n\n> **Partial report:** research stopped early because {why} ({stopped_by})."
    return {"draft": draft, "stopped_by": stopped_by, "errors": errors, "usage": budget.close()}
