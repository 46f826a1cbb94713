"""`report_feedback`: edit the finished report in place, its citations kept true.

Reached after `source_tracer` when the context's `edit_after_report` is on (or when
`deepresearch edit` opens a finished run). The report is already in state; the node pauses with

    {"type": "report_feedback", "report": "...", "sources": [...], "round": k, "max_rounds": m,
     "error"?: "why the last request was not used", "last_change"?: {"action", "start", "end", "new_end", ...}}

and takes one request per visit (offsets are into the current report; `selected_text` must
equal `report[start:end]`):

    {"action": "expand" | "shorten" | "polish", "selected_text", "start", "end"}
    {"action": "supplementary_search", "selected_text", "start", "end",
     "scope": "selected_only" | "selected_and_related", "query"?: "..."}
    {"action": "fact_check", "selected_text", "start", "end"}
    {"action": "sync", "report": "the whole report as the person edited it"}
    {"action": "finish"}

An invalid request is asked again with `error` (it uses no round); so is an edit that does
not fit in the budget or that nothing the sources support came back for (the text is left
as it was). Rewritten text is model output: it goes through the same checks as the writer's
(links and HTML removed, only offered sources cited, every sentence grounded) and the tiny
local model's failures fall back to the sources' own sentences where that can do the job
(expand, supplementary search). `max_edits` bounds the non-sync edits; then, or on
`finish`, the graph ends. The node calls the model only after the interrupt has returned,
so re-running it from its top on resume repeats no work but the request's.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import TypedDict

from deepresearch.brief import brief_of, with_language
from deepresearch.config import Context, get_context
from deepresearch.edit.actions import (
    UNVERIFIED,
    EditError,
    clean_rewrite,
    numbered,
    offer,
    parse_request,
    plain_length,
    quoted,
    sentence_keys,
    split_report,
)
from deepresearch.edit.session import EditRun, Refused
from deepresearch.edit.topic import keep_on_topic, paragraph_around
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.events import emit
from deepresearch.llm.budget import BudgetExhausted
from deepresearch.llm.calls import chat
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.evidence import DATA_RULE, evidence_blocks
from deepresearch.report.grounding import extract_sentences, prompt_frame
from deepresearch.state.shared import GraphState
from deepresearch.store import full_text
from deepresearch.text.citations import CITE, cited_numbers, support
from deepresearch.text.sentences import split_sentences

SYSTEM = f"""You revise passages of a research report written in Markdown.
{DATA_RULE}
Use only facts from the sources. After each claim, cite the source it comes from by its
number in square brackets, like [1] or [2][3]. Never cite a number that is not a source
below and never write URLs, headings or a list of sources. State what the sources say
about the world; never write about "the source" or "the article" itself."""

PROMPT = """A passage of a report on: {question}

Passage:
{passage}

{instruction}

Sources:
{evidence}

Reply with the new passage only."""

INSTRUCTIONS = {
    "expand": "Rewrite the passage at greater length, about twice as long: keep what it says and add "
    "more facts from the sources, each cited.",
    "shorten": "Rewrite the passage more briefly, about half as long: keep its main facts and their citations.",
    "polish": "Improve the wording and flow of the passage without changing its facts or its citations.",
    "supplementary_search": "Rewrite the passage using the sources, adding what the newly found sources say "
    "about it, each fact cited.",
    "related": "Revise the passage: keep what it says and its citations, and add what the sources say that "
    "bears on it, cited.",
}
MAX_RELATED = 3  # selected_and_related: other paragraphs rewritten at most


class TraceRoute(TypedDict, total=False):
    """What `route_after_trace` reads (a conditional edge gets only its annotated keys)."""

    editing: bool
    report: str


class FeedbackRoute(TypedDict, total=False):
    """What `route_after_feedback` reads."""

    feedback_done: bool


def route_after_trace(state: TraceRoute) -> Literal["report_feedback", "__end__"]:
    return "report_feedback" if state.get("editing") and state.get("report") else "__end__"  # END


def route_after_feedback(state: FeedbackRoute) -> Literal["report_feedback", "__end__"]:
    return "__end__" if state.get("feedback_done") else "report_feedback"  # END


def report_feedback(state: GraphState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    """The update is the edit's (deepresearch.edit.session): in the deep graph it also renumbers
    `sections`, a key the iterative state has not."""
    ctx = get_context(runtime)
    edits = state.get("edits", 0)
    if edits >= ctx.max_edits:
        return {"feedback_done": True}
    report = state.get("report", "")
    request = {
        "type": "report_feedback",
        "report": report,
        "sources": state.get("sources", []),
        "round": edits + 1,
        "max_rounds": ctx.max_edits,
    }
    if state.get("feedback_error"):
        request["error"] = state["feedback_error"]
    if state.get("last_change"):
        request["last_change"] = state["last_change"]
    answer = interrupt(request)
    try:
        req = parse_request(answer, report)
    except EditError as e:
        emit("edit", status="invalid", reason=str(e))
        return {"feedback_error": str(e), "last_change": None}
    action = req["action"]
    if action == "finish":
        emit("edit", action="finish", status="done")
        return {"feedback_done": True, "feedback_error": None}
    emit("edit", action=action, status="started")
    run = _Edit(ctx, state, runtime)
    try:
        update = run.sync(req) if action == "sync" else run.span(req)
    except Refused as e:
        emit("edit", action=action, status="refused", reason=str(e))
        return {
            "feedback_error": f"{action} not done: {e}; the report is unchanged",
            "last_change": None,
            **run.spent(),
        }
    emit(
        "edit",
        action=action,
        status="done",
        **{k: v for k, v in update["last_change"].items() if k in ("start", "end", "new_end", "changed")},
    )
    done = update.pop("_counts", True)
    out = {**update, **run.spent(), "feedback_error": None}
    if done and action != "sync":
        out["edits"] = edits + 1  # the next visit ends the run when that was the last edit
    return out


def appended(passage: str, more: list[str]) -> str:
    """`passage` with the sentences `more` after it, its trailing whitespace kept."""
    return passage.rstrip() + " " + " ".join(more) + passage[len(passage.rstrip()) :]


class _Edit(EditRun):
    """An edit whose span is rewritten by the model (or checked: fact_check, sync)."""

    unused = ""  # why the model's last rewrite could not be used, when it could not

    def rewrite(self, passage: str, kind: str, offered: list[dict[str, Any]], added: str = "") -> str:
        """The model's version of `passage`, cleaned and grounded ("" when nothing is left, or
        when the reply was cut: a rewrite cut short would silently drop the passage's end).
        `added`: text this edit has written elsewhere already (none of it may be repeated)."""
        reason = self.budget.exhausted(for_writer=True)
        if reason:
            raise Refused(f"the run's {reason} budget is spent")
        prompt = PROMPT.format(
            question=brief_of(self.state),
            passage=passage.strip(),
            instruction=INSTRUCTIONS[kind],
            evidence=evidence_blocks(offered, max_chars=6000, per_source=1200),
        )
        prompt = with_language(prompt, self.state, self.ctx)
        want = min(900, max(200, plain_length(passage) // 2 * (2 if kind in ("expand", "related") else 1)))
        cut = self.budget.usage["cut_replies"]
        try:
            text = chat(
                self.ctx,
                self.budget,
                [SystemMessage(content=SYSTEM), HumanMessage(content=prompt)],
                node="report_feedback",
                max_output=want,
                for_writer=True,
            )
        except BudgetExhausted as e:
            raise Refused(f"it does not fit in the run's {e.reason} budget") from None
        except ModelCallError as e:
            raise Refused(f"the model call failed ({e.cause})") from None
        if self.budget.usage["cut_replies"] > cut:
            self.unused = "the model's reply was cut at its cap"
            return ""
        body = split_report(self.state.get("report", ""))[0]
        elsewhere = body.replace(passage, "", 1) + "\n\n" + added
        frame = prompt_frame(f"{SYSTEM}\n{prompt}", brief_of(self.state), passage.strip())
        text, removed = clean_rewrite(text, passage, offered, self.ctx.support_threshold, elsewhere, frame)
        off: list[dict[str, Any]] = []
        if kind == "expand":  # a search's new findings are what its query asked for: judged by it
            text, off = self.on_topic(text, passage, offered)
            removed += off
        self.removed += removed
        if not text.strip():
            self.unused = (
                "what the rewrite added was off the passage's topic"
                if kind == "expand" and off
                else "nothing the sources support came back from the rewrite"
            )
        return text

    def on_topic(self, text: str, passage: str, offered: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
        """`text` without the sentences it adds to `passage` that are off the topic of the
        passage and its paragraph (deepresearch.edit.topic), and what was left out."""
        body = split_report(self.state.get("report", ""))[0]
        at = body.find(passage)
        paragraph = paragraph_around(body, at, at + len(passage)) if at >= 0 else passage
        return keep_on_topic(text, passage, paragraph, offered, similarity_for(embedder_of(self.ctx)))

    def extract(
        self, passage: str, sources: list[dict[str, Any]], limit: int = 2, added: str = "", on_topic: bool = False
    ) -> list[str]:
        """Cited sentences of `sources` about `passage` that the report (and `added`, what this
        edit wrote elsewhere) does not have yet: compared as sentences, without citations,
        marks or case, since the report holds them as quoted and cited (the fallback of a
        failed rewrite; it must never repeat the report's own text). `on_topic`: only sentences on
        the topic of the passage and its paragraph (an expansion's)."""
        body = split_report(self.state.get("report", ""))[0]
        seen = sentence_keys(f"{body}\n{added}")
        focus = CITE.sub("", passage).replace(UNVERIFIED, "")
        out: list[str] = []
        for s in sources:
            # a few more candidates than wanted: the best ones may be in the report already
            for x in extract_sentences(full_text(s), focus, limit=limit + 3, skip_title=s["title"]):
                line = quoted(x, int(s["id"]))
                if line and on_topic and not self.on_topic(line, passage, sources)[0]:
                    continue  # shares words with the passage, not its topic
                keys = sentence_keys(line) - {""}
                if line and keys and not keys & seen and len(out) < limit:
                    out.append(line)
                    seen |= keys
        return out

    # --- actions ----------------------------------------------------------------------------
    def span(self, req: dict[str, Any]) -> dict[str, Any]:
        action, old, start, end = req["action"], req["selected_text"], req["start"], req["end"]
        if action == "fact_check":
            return self.fact_check(req)
        extra = []
        if action == "supplementary_search":
            query = req.get("query") or " ".join(CITE.sub("", old).replace(UNVERIFIED, "").split())[:200]
            extra = self.findings(query, old)
            if not extra:
                raise Refused("the search found nothing on this passage that the report does not cite already")
        offered = offer(self.view(), old, extra=extra)
        new = self.rewrite(old, action, offered)
        instead: tuple[str, str] | None = (
            None  # (why, what was done) in place of the model's rewrite, said in last_change
        )
        if action == "expand" and plain_length(new) <= plain_length(old):
            more = self.extract(old, offered, on_topic=True)
            if not more:
                raise Refused(self.failed("the sources have nothing more to add to this passage"))
            new, instead = (
                appended(old, more),
                (self.unused or "the rewrite was not longer", "the sources' own sentences were added"),
            )
        elif action == "shorten" and (not new or plain_length(new) >= plain_length(old)):
            new, instead = (
                self.shortened(old),
                (self.unused or "the rewrite was not shorter", "the passage's least supported sentences were left out"),
            )
        elif action == "supplementary_search":
            fresh = {int(s["id"]) for s in offered if s["key"] in {f["key"] for f in extra}}
            if not fresh & set(cited_numbers(new)):  # the rewrite left the new findings out
                more = self.extract(old, [s for s in offered if int(s["id"]) in fresh])
                if not more:
                    raise Refused(self.failed("the new sources say nothing the passage can use"))
                new, instead = (
                    appended(old, more),
                    (
                        self.unused or "the rewrite left the new sources out",
                        "the new sources' own sentences were added",
                    ),
                )
        if not new.strip():
            raise Refused(self.unused or "nothing the sources support came back from the rewrite")
        changes = [(start, end, new)]
        pool = list(offered)
        if req.get("scope") == "selected_and_related":
            for s, e, text, used in self.related(start, end, extra, new):
                changes.append((s, e, text))
                pool += [u for u in used if u not in pool]
        update = self.apply(changes, pool)
        spans = update.pop("_spans")
        last = {
            "action": action,
            **({"scope": req["scope"]} if req.get("scope") else {}),
            **{k: spans[0][k] for k in ("start", "end", "new_end")},
        }
        if len(spans) > 1:
            last["related"] = spans[1:]
        if instead:
            last["fallback"] = f"{instead[0]}: {instead[1]} instead"
        return self.recorded(update, last)

    def failed(self, why: str) -> str:
        return f"{why} ({self.unused})" if self.unused else why

    def shortened(self, old: str) -> str:
        """`old` without its least supported sentences, down to about 60% of its length."""
        sents = [s for s in split_sentences(old.strip())]
        if len(sents) < 2:
            raise Refused("the passage is one sentence and the rewrite was not shorter")
        cited = numbered(self.state)

        def score(sent: str) -> float:
            nums = [n for n in cited_numbers(sent) if n in cited]
            return max((support(sent, full_text(cited[n]))[0] for n in nums), default=0.0)

        ranked = sorted(range(len(sents)), key=lambda i: -score(sents[i]))
        keep: set[int] = set()
        length = 0
        for i in ranked:
            if keep and length + len(sents[i]) > 0.6 * len(old.strip()):
                continue
            keep.add(i)
            length += len(sents[i])
        text = " ".join(sents[i].strip() for i in sorted(keep))
        return old[: len(old) - len(old.lstrip())] + text + old[len(old.rstrip()) :]

    def related(
        self, start: int, end: int, found: list[dict[str, Any]], added: str
    ) -> list[tuple[int, int, str, list[dict[str, Any]]]]:
        """Other paragraphs of the body the new sources bear on, each revised with them
        (`added`: the selection's new text; no paragraph repeats what another one got)."""
        body = split_report(self.state.get("report", ""))[0]
        out, at = [], 0
        for para in body.split("\n\n"):
            p_start, p_end = at, at + len(para)
            at = p_end + 2
            text = para.strip()
            if not text or text.startswith(("#", ">")) or not (p_end <= start or p_start >= end):
                continue
            plain = CITE.sub("", text).replace(UNVERIFIED, "")
            if not any(support(plain, f"{s['title']}. {full_text(s)}")[0] >= self.ctx.support_threshold for s in found):
                continue
            offered = offer(self.view(), para, extra=found)
            fresh = {int(s["id"]) for s in offered if s["key"] in {f["key"] for f in found}}
            new = self.rewrite(para, "related", offered, added)
            if not fresh & set(cited_numbers(new)):
                more = self.extract(para, [s for s in offered if int(s["id"]) in fresh], limit=1, added=added)
                new = appended(para, more) if more else ""
            if new.strip():
                out.append((p_start, p_end, new, offered))
                added += "\n\n" + new
            if len(out) >= MAX_RELATED:
                break
        return out
