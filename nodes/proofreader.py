"""`proofreader`: remove repetition across sections and smooth the flow, keeping citations.

Repetition: a sentence that says again (nearly word for word) what an earlier section
said is dropped, and its citations move to the sentence it repeats; a section left with
nothing under its heading says so. Flow: with a capable
model (the `single` writer style), each section body is polished by one call; the result
is used only if it keeps every citation and most of the text.
"""

from __future__ import annotations

import re
from collections import Counter

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables.config import ContextThreadPoolExecutor
from langgraph.runtime import Runtime

from deepresearch.brief import with_language
from deepresearch.config import Context, get_context
from deepresearch.llm.budget import Budget, BudgetExhausted
from deepresearch.llm.calls import chat
from deepresearch.llm.retries import ModelCallError
from deepresearch.report.grounding import ground, prompt_frame
from deepresearch.research.compose import REPORT_NOTES, writer_style
from deepresearch.state.deep import DeepState
from deepresearch.store import full_text, reads_texts_once
from deepresearch.text.citations import CITE, cited_numbers
from deepresearch.text.sentences import content_words, split_sentences

SIMILAR = 0.85
SAID_ABOVE = "> Nothing new here: what the sources say on this is stated in an earlier part of the report."
HEADING = re.compile(r"^ {0,3}(#{1,6})\s")
UNSPLIT = ("#", ">", "|")  # headings, notes and table rows: lines kept whole, never a repeated sentence
EDITOR = "You are a careful copy editor."

POLISH = """Improve the flow of this report section: join choppy sentences and remove repetition.
Keep every fact and every [n] citation exactly as written. Reply with the section text only.

{text}"""


def _words(sentence: str) -> set[str]:
    return set(content_words(CITE.sub("", sentence)))


def dedupe(report: str) -> tuple[str, int]:
    """Drop sentences repeated from earlier in the report; returns (report, dropped). The last
    sentence under a heading stays even when repeated: a section is never emptied."""
    # line by line, so headings, list items and blank lines keep their places; a table row is one
    # unit, neither split into sentences nor dropped (a row that lost a cell breaks the table)
    paragraphs = [
        split_sentences(p) if p.strip() and not p.lstrip().startswith(UNSPLIT) else [p] for p in report.split("\n")
    ]
    block, blocks = 0, []
    for sents in paragraphs:
        block += bool(sents and sents[0].lstrip().startswith("#"))
        blocks.append(block)
    left: dict[int, int] = {}  # sentences each block holds
    for b, sents in zip(blocks, paragraphs):
        left[b] = left.get(b, 0) + sum(1 for x in sents if x.strip() and not x.lstrip().startswith(("#", ">")))
    kept: list[tuple[int, int, set[str]]] = []
    dropped = 0
    for pi, sents in enumerate(paragraphs):
        out = []
        for s in sents:
            words = _words(s) if not s.lstrip().startswith(UNSPLIT) else set()
            twin = None
            if len(words) >= 4 and left[blocks[pi]] > 1:
                for kpi, ksi, kw in kept:
                    if len(words & kw) / len(words | kw) >= SIMILAR:
                        twin = (kpi, ksi)
                        break
            if twin is None:
                out.append(s)
                if words:
                    kept.append((pi, len(out) - 1, words))
                continue
            dropped += 1
            left[blocks[pi]] -= 1
            kpi, ksi = twin
            target = paragraphs[kpi][ksi] if kpi < pi else out[ksi]
            extra = "".join(f"[{n}]" for n in dict.fromkeys(cited_numbers(s)) if n not in cited_numbers(target))
            if extra:
                target = target.rstrip() + " " + extra
                if kpi < pi:
                    paragraphs[kpi][ksi] = target
                else:
                    out[ksi] = target
        paragraphs[pi] = out
    text = "\n".join(" ".join(x.strip() for x in p) if len(p) != 1 else p[0] for p in paragraphs if p)
    return text, dropped


def _level(line: str) -> int:
    m = HEADING.match(line)
    return len(m.group(1)) if m else 0


def say_why_empty(report: str) -> str:
    """The report with a note under each section heading that has nothing under it before the
    next heading of its level or above: its sentences all said again what an earlier part says
    (the answer paragraph most often), so dedupe dropped them. The heading stays (the outline
    the person approved, a template's parts); the notes on the whole report at its end are no
    section's text."""
    lines = report.split("\n")

    def empty(i: int) -> bool:
        for line in lines[i + 1 :]:
            if _level(line) and _level(line) <= _level(lines[i]):
                return True
            if not _level(line) and line.strip() and not line.startswith(REPORT_NOTES):
                return False
        return True

    out = []
    for i, line in enumerate(lines):
        out += [line, "", SAID_ABOVE, ""] if _level(line) >= 2 and empty(i) else [line]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def _headings(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith("#")]


def _polish_block(ctx: Context, budget: Budget, block: str, state: DeepState | None = None) -> str:
    heading, _, body = block.partition("\n\n")
    if not CITE.search(body) or len(body) < 200:
        return block
    prompt = with_language(POLISH.format(text=body), state or {}, ctx)
    try:
        new = chat(
            ctx,
            budget,
            [SystemMessage(content=EDITOR), HumanMessage(content=prompt)],
            node="proofreader",
            max_output=900,
            for_writer=True,
        )
    except (BudgetExhausted, ModelCallError):
        return block
    # model text like any writer's: grounded, and none of the prompt's own words
    new, _dropped = ground(
        new,
        (state or {}).get("evidence", []),
        full_text,
        threshold=ctx.support_threshold,
        frame=prompt_frame(f"{EDITOR}\n{prompt}", body),
    )
    same_cites = Counter(cited_numbers(new)) >= Counter(set(cited_numbers(body)))
    if (
        same_cites
        and len(new) >= 0.6 * len(body)
        and not new.lstrip().startswith("#")
        and _headings(new) == _headings(body)
    ):  # a template's sub-headings stay as they are
        return f"{heading}\n\n{new.strip()}"
    return block


def _polish(ctx: Context, budget: Budget, report: str, state: DeepState | None = None) -> str:
    """Polish the sections concurrently (the shared pacer bounds the calls in flight)."""
    blocks = report.split("\n## ")
    with ContextThreadPoolExecutor(max_workers=max(1, min(len(blocks) - 1, ctx.model_concurrency))) as pool:
        polished = list(pool.map(lambda b: _polish_block(ctx, budget, b, state), blocks[1:]))
    return "\n## ".join([blocks[0], *polished])


@reads_texts_once
def proofreader(state: DeepState, runtime: Runtime[Context] | None = None) -> DeepState:
    ctx = get_context(runtime)
    budget = Budget.of(ctx, state)
    report, _dropped = dedupe(state.get("draft", ""))
    report = say_why_empty(report)
    if writer_style(ctx) == "single":
        report = _polish(ctx, budget, report, state)
    return {"draft": report, "usage": budget.close()}
