"""Report styles: presets built on report templates (deepresearch.templates).

Each style is a template: its headings give the report its structure whatever the model (the
embedded model's extractive writer places the sources' sentences under them), and its
preamble, the text before the first heading, tells a capable model the reader and the tone.
What the template machinery cannot give, the source tracer adds from the run itself
(`finish`): the academic style's account of how the research was done, and the brief style's
key points as five bullets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deepresearch.templates import parse_template

METHODS = "Methods of the research"
KEY_POINTS = "Key points"

PRESETS: dict[str, tuple[str, str]] = {  # name -> (what it is, the template)
    "academic": (
        "abstract, methods of the research, findings, limitations; the Sources list as references",
        f"""\
Formal academic register for a specialist reader: precise, hedged claims, each one cited; no rhetorical questions.

## Abstract
The question, what the sources show and how firmly, in one paragraph.

## {METHODS}
How the research was done: what was searched, how many sources were read and cited, how the citations were checked.

## Findings
What the sources show, claim by claim, each cited.

## Limitations
What the sources do not settle: gaps, disagreements, the kind and number of sources.
""",
    ),
    "brief": (
        "the answer, five bullets, the sources",
        f"""\
Terse, for a busy reader: no introduction, no repetition.

## Answer
The direct answer in two or three sentences.

## {KEY_POINTS}
Five bullet points, one fact each, most important first.
""",
    ),
    "news": (
        "a news story: the lead, the background, what comes next",
        """\
News style for a general reader: the most important facts first (who, what, when, where, why), short paragraphs, no jargon.

## The story
The lead: the essential facts in the first sentences, then the details in order of importance.

## Background
What led to it: earlier events and context.

## What comes next
What is expected or still open, as the sources say.
""",
    ),
    "popular": (
        "popular science: in short, the story, why it matters",
        """\
Popular science for a curious reader with no background: plain words, concrete examples, every technical term explained.

## In short
The answer in plain words.

## The story
How it works or what happened, told simply, with examples from the sources.

## Why it matters
What it means for the reader and for the world.
""",
    ),
}
NAMES = tuple(PRESETS)


def template_for(style: str, template: str | None) -> str:
    """The template text of `style`; ValueError for an unknown style or a different template
    given with it (one or the other: a style is a template)."""
    if style not in PRESETS:
        raise ValueError(f"unknown report style {str(style)[:40]!r}; valid: {', '.join(NAMES)}")
    text = PRESETS[style][1]
    if template is not None and template != text:
        raise ValueError("give a report style or a template, not both")
    return text


def list_text() -> str:
    """What `deepresearch template --list` prints: each style, what it is, its parts."""
    lines = []
    for name, (what, text) in PRESETS.items():
        parts = " / ".join(s["title"] for s in parse_template(text)["sections"])
        lines.append(f"{name:<9} {what}\n          parts: {parts}")
    return "\n".join(lines) + "\n\nUse one with --style NAME (context `style`); --template FILE uses your own.\n"


# --- what the tracer adds ----------------------------------------------------------------------


def _section(draft: str, title: str) -> tuple[int, int] | None:
    """Where the body of the `## title` part of `draft` is: (start, end), or None."""
    m = re.search(rf"^#{{2,3}} {re.escape(title)}\s*$", draft, re.M)
    if not m:
        return None
    nxt = re.search(r"^#{1,3} ", draft[m.end() :], re.M)
    return m.end(), m.end() + nxt.start() if nxt else len(draft)


def methods_text(state: Mapping[str, Any]) -> str:
    """How this run researched its question, from its own record (no model, nothing invented)."""
    evidence = state.get("evidence") or []
    tools = sorted({s.get("backend") or "search" for s in evidence})
    searches = len({(s.get("backend"), s.get("query")) for s in evidence})
    text = (
        f"{searches} search(es)"
        + (f" of {', '.join(tools)}" if tools else "")
        + f" retrieved {len(evidence)} source(s). "
        "The report was written from the retrieved text only; every citation was then checked against "
        "the text of the source it cites, and a sentence its source does not clearly support is marked."
    )
    return text


def _bullets(body: str, n: int = 5) -> str:
    """A part's cited sentences as up to `n` bullet points (the rest of its text stays after them)."""
    text = " ".join(line.strip() for line in body.strip().split("\n") if line.strip() and not line.startswith(">"))
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])", text) if s.strip()]
    if not sentences:
        return body
    notes = "\n".join(line for line in body.strip().split("\n") if line.startswith(">"))
    points = "\n".join(f"- {s.lstrip('-* ').strip()}" for s in sentences[:n])
    return f"\n\n{points}\n" + (f"\n{notes}\n" if notes else "") + "\n"


def finish(draft: str, state: Mapping[str, Any], style: str | None) -> str:
    """The draft with what its style adds from the run: the academic style's methods, the
    brief style's key points as bullets."""
    if style == "academic" and (at := _section(draft, METHODS)):
        draft = draft[: at[0]] + f"\n\n{methods_text(state)}\n\n" + draft[at[1] :].lstrip("\n")
    if style == "brief" and (at := _section(draft, KEY_POINTS)):
        draft = draft[: at[0]] + _bullets(draft[at[0] : at[1]]) + draft[at[1] :].lstrip("\n")
    return draft
