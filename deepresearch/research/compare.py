"""Comparison tables: one row per aspect, one column per thing compared.

The first row is what the question asks of each thing, when it asks something ("When were X and Y
built?": each thing's sentence closest to the question that holds a year). The next says in brief
what each thing is: its source's "Title (description)." line, where an encyclopedia gives a
person's life dates and a place's country, when every thing has one. The other rows are
aspects the sources of the things compared both speak of: the pairs of sentences, one of each
thing's sources, closest to each other in meaning (deepresearch.embeddings.similarity), each row
named by a word both sentences use. Every cell is one retrieved sentence, whole, cited and as its
source says it, or "not found": a cell is read by itself, so no sentence opening with a pronoun
("It is exhibited in ...") is one, and none is given a name its source did not write there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Set as AbstractSet

from deepresearch.embeddings.similarity import Similarity
from deepresearch.report.subjects import reads_alone
from deepresearch.research.answer import best_sentence, lead_line, sentences_of
from deepresearch.research.coverage import sources_for
from deepresearch.text.safe import md_text
from deepresearch.text.sentences import STOP
from deepresearch.text.words import tokens
from deepresearch.understanding.analysis import Analysis

COMPARISON_HEADING = "## Comparison"
MAX_ROWS = 3
CELL_WORDS = 60  # a longer sentence is cut (a table cell, not a paragraph)
PAIRS_FROM = 12  # each thing's sentences a shared aspect is looked for among
MIN_PAIR = 0.2  # two sentences less close than this (cosine) speak of different things
NOT_FOUND = "not found"
BRIEF = "in brief"


def _cell(sentence: str, source: dict) -> str:
    words = sentence.split()
    text = " ".join(words[:CELL_WORDS]) + (" …" if len(words) > CELL_WORDS else "")
    return f"{md_text(text, 600).replace('|', chr(92) + '|')} [{int(source['id'])}]"


def _unnamed(sources: list[dict], text_of) -> set[str]:
    """The sentences of `sources` that do not say what they speak of ("It is ..."): no cell's."""
    return {x for s in sources for x in sentences_of(s, text_of) if not reads_alone(x)}


def _named(things: list[dict], asked: tuple[str, ...]) -> set[str]:
    out = set(asked)
    for c in things:
        out |= set(tokens(c["name"]))
    return out


def shared_rows(
    things: list[dict],
    evidence: list[dict],
    text_of,
    sim: Similarity,
    asked: tuple[str, ...],
    limit: int,
    shown: AbstractSet[str] = frozenset(),
) -> list[tuple[str, list[tuple[str, dict] | None]]]:
    """Aspects the first two things' sources both speak of: (label, a sentence and its source per
    thing), the closest pairs first; each sentence in one row at most, and none of those `shown`."""
    own = []
    for c in things[:2]:
        sents = [
            (x, s)
            for s in sources_for(c, evidence, text_of, limit=2)
            for x in sentences_of(s, text_of)
            if not lead_line(x, s) and x not in shown and reads_alone(x)
        ]
        own.append(sents[:PAIRS_FROM])
    if len(own) < 2 or not own[0] or not own[1]:
        return []
    a, b = own
    if sim.embedder is not None:
        va, vb = sim.vectors([x for x, _ in a]), sim.vectors([x for x, _ in b])
        close = va @ vb.T
    else:
        close = [[sim.scores(x, [y])[0] for y, _ in b] for x, _ in a]
    pairs = sorted(((float(close[i][j]), i, j) for i in range(len(a)) for j in range(len(b))), reverse=True)
    named = _named(things, asked)
    counts = Counter(w for x, _ in a + b for w in set(tokens(x)))
    rows: list[tuple[str, list[tuple[str, dict] | None]]] = []
    used_a: set[int] = set()
    used_b: set[int] = set()
    labels: set[str] = set()
    for _, i, j in pairs:
        if i in used_a or j in used_b:
            continue
        if close[i][j] < MIN_PAIR:
            break
        label = _label(a[i][0], b[j][0], named | labels, counts, sim)
        if label is None:
            continue
        used_a.add(i)
        used_b.add(j)
        labels.add(label)
        rows.append((label, [a[i], b[j]] + [None] * (len(things) - 2)))
        if len(rows) == limit:
            break
    return rows


def brief_row(things: list[dict], evidence: list[dict], text_of) -> list[tuple[str, dict] | None]:
    """Each thing's lead line (the first of its sources that opens with one), or [] when one has none."""
    cells: list[tuple[str, dict] | None] = []
    for c in things:
        lead = next(
            (
                (x[0], s)
                for s in sources_for(c, evidence, text_of, limit=2)
                if (x := sentences_of(s, text_of)[:1]) and lead_line(x[0], s)
            ),
            None,
        )
        if lead is None:
            return []
        cells.append(lead)
    return cells


def _label(x: str, y: str, skip: set[str], counts: Counter, sim: Similarity) -> str | None:
    """A reader's word for what two sentences both speak of: a word both use (the one the things'
    sentences use least), else the word of the first closest in meaning to the second ("people",
    for "3,000 people live on Brann" and "Cor has a population of 800")."""

    def content(text: str) -> set[str]:
        return {w for w in tokens(text) if w not in STOP and w not in skip and len(w) > 3 and not w.isdigit()}

    shared = content(x) & content(y)
    if shared:
        return min(shared, key=lambda w: (counts[w], w))
    own = sorted(content(x))
    if not own or sim.embedder is None:
        return None
    scores = sim.scores(y, own)
    return own[max(range(len(own)), key=scores.__getitem__)]


def comparison_table(analysis: Analysis, concepts: list[dict], evidence: list[dict], text_of, sim: Similarity) -> str:
    """The Markdown table (with its heading), or "" when the question compares nothing."""
    things: list[dict] = [dict(c.data()) for c in analysis.compared]
    if len(things) < 2:
        return ""
    asked = frozenset(analysis.words)
    rows: list[tuple[str, list[tuple[str, dict] | None]]] = []
    kind = analysis.parts[0].kind if analysis.parts else analysis.focus.kind
    if kind in ("year", "number", "person", "place", "thing"):  # what the question asks of each thing
        cells = []
        for c in things:
            own = sources_for(c, evidence, text_of)
            p = best_sentence(own, text_of, analysis.read, kind, asked, sim, _unnamed(own, text_of), one=True)
            cells.append((p.sentence, p.source) if p and p.answers else None)
        if any(cells):
            rows.append((" ".join(analysis.focus.words[:3]), cells))
    if (brief := brief_row(things, evidence, text_of)) and not any(cells == brief for _, cells in rows):
        rows.append((BRIEF, brief))
    shown = {x[0] for _, cells in rows for x in cells if x}
    rows += shared_rows(things, evidence, text_of, sim, analysis.words, MAX_ROWS, shown)
    for _label, cells in rows:  # a third thing's cell: its sentence closest to the row's others
        for k, c in enumerate(things):
            if cells[k] is None and k >= 2:
                query = " ".join(x[0] for x in cells if x)
                own = sources_for(c, evidence, text_of)
                p = best_sentence(own, text_of, query, "other", asked, sim, _unnamed(own, text_of), one=True)
                cells[k] = (p.sentence, p.source) if p else None
    if not rows:
        return ""
    header = "| aspect | " + " | ".join(md_text(c["name"], 60).replace("|", "\\|") for c in things) + " |"
    lines = [COMPARISON_HEADING, "", header, "|" + "---|" * (len(things) + 1)]
    for label, cells in rows:
        texts = [_cell(*x) if x else NOT_FOUND for x in cells]
        lines.append(f"| {md_text(label, 40)} | " + " | ".join(texts) + " |")
    return "\n".join(lines)
