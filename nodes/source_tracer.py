"""`source_tracer`: check every citation of the draft against what the run retrieved.

(The node keeps the reference design's id; the checking itself is deepresearch.report.verify.)

- a citation of a number that is no retrieved source is removed;
- the body keeps no link, image, raw HTML or URL-like text: a link to a retrieved source
  becomes a citation of it, anything else is removed (see deepresearch/text/safe.py);
- each remaining citation is scored against the cited source's full retrieved text
  (offline overlap scorer, or a model judgement when `verify_with_model` is set); one
  scoring below the threshold is marked "unverified" in the report and listed;
- sources are renumbered in order of first citation and listed under `## Sources` (titles
  and identifiers escaped, on one line; only web sources are links, files and MCP results
  are shown as text), followed by a one-line verification summary.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from deepresearch.brief import language_of
from deepresearch.chat import chat_reply
from deepresearch.choices.report_styles import finish as finish_style
from deepresearch.config import Context, get_context
from deepresearch.events import emit
from deepresearch.llm.budget import Budget
from deepresearch.report.verify import section_sources, verify_draft
from deepresearch.state.deep import DeepState
from deepresearch.state.iterative import IterativeState
from deepresearch.state.shared import GraphState
from deepresearch.store import reads_texts_once, texts_until


@reads_texts_once
def source_tracer(state: IterativeState, runtime: Runtime[Context] | None = None) -> IterativeState:
    """The node of the iterative graph."""
    return _checked(state, runtime)[0]


@reads_texts_once
def source_tracer_deep(state: DeepState, runtime: Runtime[Context] | None = None) -> DeepState:
    """The node of the deep graph (its id is `source_tracer` too): each section's cited sources as well."""
    update, key_ids = _checked(state, runtime)
    if state.get("drafts") is not None:  # each section's cited sources, in the report's numbers
        update["sections"] = section_sources(state["drafts"], update["sources"], key_ids)
    return update


def _checked(state: GraphState, runtime: Runtime[Context] | None) -> tuple[GraphState, dict[str, int]]:
    """The update with the checked report, and each cited source's number by its key."""
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)  # checking is inside the run's seconds, and bounded by them
    emit("verifying", sources=len(state.get("evidence", [])))
    with texts_until(time.monotonic() + budget.seconds_left()):
        draft = finish_style(state.get("draft", ""), state, ctx.style)  # what a report style adds from the run
        out = verify_draft(draft, state.get("evidence", []), ctx, budget, language_of(state, ctx))
    update: GraphState = {
        "report": out["report"],
        "sources": out["sources"],
        "citations": out["citations"],
        "removed": list(state.get("removed", [])) + out["removed"],
        "report_removed": out["removed"],  # what the report's verification line counts (edits add to it)
        "editing": bool(ctx.edit_after_report),  # on: report_feedback follows (the report is saved first)
    }
    if ctx.citation_style != "numeric":  # the report is delivered in it (deepresearch.report.citation_style)
        update["citation_style"] = ctx.citation_style
    update["usage"] = budget.close()
    update.update(chat_reply(state, update["report"]))  # chat input: the report as an AI message
    emit(
        "complete",
        stopped_by=state.get("stopped_by"),
        sources=len(out["sources"]),
        citations=len(out["citations"]),
        verification=out["verification"],
        usage=update.get("usage", state.get("usage")),
    )
    return update, out["key_ids"]
