"""Comparison tables: one row per aspect the question asks about, one column per thing compared.

Each cell is a short cited fact from that thing's own sources: the clause of a retrieved
sentence that speaks of the aspect (the question's focus, e.g. "born" with a year, or an aspect
word such as "origins"), or "not found". When the question names no aspect, the rows are the
aspects the sources of every compared thing share (content words all of their texts use).
"""

from __future__ import annotations

import re
from collections import Counter

from deepresearch.report.grounding import with_subject
from deepresearch.research.answer import score_sentence, sentences_of
from deepresearch.research.coverage import sources_for
from deepresearch.research.sentences import LIFESPAN, focus_terms, prefix, prefixes
from deepresearch.text.safe import md_text
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens
from deepresearch.understanding.analysis import Analysis, Focus
from deepresearch.understanding.embedded.question import FOCUS_SYNONYMS
from deepresearch.understanding.linking import SCAFFOLD

COMPARISON_HEADING = "## Comparison"
MAX_ROWS = 3
CELL_WORDS = 30
NOT_FOUND = "not found"


def _clause(sentence: str, want: set[str]) -> str:
    """The part of `sentence` that speaks of `want` (a clause between commas or semicolons), or
    the sentence, cut to CELL_WORDS words."""
    parts = [p.strip() for p in re.split(r"[;,]\s+|\s+[–—]\s+", sentence) if p.strip()]
    hits = [p for p in parts if prefixes(p) & want and len(p.split()) >= 4]
    text = hits[0] if hits else sentence
    words = text.split()
    if len(words) > CELL_WORDS:
        text = " ".join(words[:CELL_WORDS]) + " …"
    return text.rstrip(" .;,")


def _cell(text: str, n: int) -> str:
    return f"{md_text(text, 400)} [{n}]"  # md_text escapes `|` already (once: `\\|` would end the cell)


def shared_aspects(things: list[dict], evidence: list[dict], text_of, asked: tuple[str, ...]) -> list[str]:
    """Content words every compared thing's sources use, the most frequent first (`asked`: the
    question's words, which name no aspect)."""
    names = set(asked)
    for c in things:
        names |= set(tokens(c["name"]))
    counts: list[Counter] = []
    for c in things:
        words = Counter()
        for s in sources_for(c, evidence, text_of):
            words.update(
                w
                for w in tokens(text_of(s))
                if len(w) > 3 and w not in STOP and w not in SCAFFOLD and w not in names and not w.isdigit()
            )
        counts.append(words)
    if not counts or not all(counts):
        return []
    common = set(counts[0])
    for c in counts[1:]:
        common &= set(c)
    ranked = sorted(common, key=lambda w: (-sum(c[w] for c in counts), w))
    return ranked[:MAX_ROWS]


def rows_for(
    focus: Focus, things: list[dict], evidence: list[dict], text_of, asked: tuple[str, ...]
) -> list[tuple[str, set[str]]]:
    """(label, stems a cell must use) per row."""
    rows: list[tuple[str, set[str]]] = []
    if focus.words:
        label = " ".join(focus.words[:3])
        rows.append((label, focus_terms(focus)))
    for a in focus.aspects:
        rows.append((a, {prefix(x) for x in stems([a] + sorted(FOCUS_SYNONYMS.get(a, set())))}))
    if not rows:
        rows = [(a, {prefix(x) for x in stems([a])}) for a in shared_aspects(things, evidence, text_of, asked)]
    return rows[:MAX_ROWS]


def comparison_table(analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of) -> str:
    """The Markdown table (with its heading), or "" when the question compares nothing."""
    things = [c.data() for c in analysis.compared]
    if len(things) < 2:
        return ""
    focus = analysis.focus
    rows = rows_for(focus, things, evidence, text_of, analysis.words)
    if not rows:
        return ""
    asked = frozenset(analysis.words)
    qstems = {prefix(x) for x in stems([w for w in analysis.words if w not in STOP])}
    header = "| aspect | " + " | ".join(md_text(c["name"], 60) for c in things) + " |"
    lines = [COMPARISON_HEADING, "", header, "|" + "---|" * (len(things) + 1)]
    for label, want in rows:
        cells = []
        for c in things:
            best = None
            for rank, s in enumerate(sources_for(c, evidence, text_of)):
                for i, sent in enumerate(sentences_of(s, text_of)):
                    if not prefixes(sent) & want and not _lifespan_row(want, sent):
                        continue
                    score, _ = score_sentence(sent, asked, focus, want, qstems)
                    score -= 0.01 * i + 0.02 * rank
                    if best is None or score > best[0]:
                        best = (score, sent, s)
            cells.append(
                _cell(_clause(with_subject(best[1], best[2]["title"]), want), int(best[2]["id"])) if best else NOT_FOUND
            )
        lines.append(f"| {md_text(label, 40)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _lifespan_row(want: set[str], sentence: str) -> bool:
    return bool(LIFESPAN.search(sentence)) and bool(
        want & {prefix(x) for x in stems(["born", "died", "birth", "death"])}
    )
