"""Which of two things, for a question that offers a choice by time (deepresearch.understanding.embedded.
forms.choice: "Who was born first, X or Y?", "Which opened earlier, X or Y?").

Each thing's year for what is asked is read from its own source: the life span of its "Title
(description)." line when the question asks a birth or a death (deepresearch.research.lifespan), else
the first year of its sentence closest in meaning to the question's words before the choice ("was
founded"). The earlier year answers "first", "earlier" and "older"; the later one "later", "newer"
and "younger". Nothing else is inferred: without a year for each, or with the same year, no verdict,
and the paragraph gives the sentences as for any comparison. The sentences the verdict rests on are
quoted after it, each cited.
"""

from __future__ import annotations

import re

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.answer import ANSWER_HEADING, Pick, lead_line, quoted, sentences_of
from deepresearch.research.coverage import sources_for
from deepresearch.research.lifespan import life_year, lifespan_says
from deepresearch.research.sentences import YEAR
from deepresearch.text.safe import inline_text
from deepresearch.text.sentences import STOP
from deepresearch.text.words import stems, tokens
from deepresearch.understanding.analysis import Analysis
from deepresearch.understanding.embedded.forms import EARLIER, choice

LATER = {"later", "newer", "younger"}  # of the time comparatives (forms.EARLIER), those the later year answers
SAID = 0.15  # cosine: a sentence less close than this to what is asked does not date it


def _year(thing: dict, asked: str, evidence: list[dict], text_of, sim: Similarity) -> tuple[int, Pick] | None:
    """The year the thing's own source gives for what is asked, with the sentence that gives it."""
    for source in sources_for(thing, evidence, text_of, limit=1):
        sents = sentences_of(source, text_of)
        found = [(x, source) for x in sents]
        if (line := lifespan_says(asked, found, sim)) is not None and (year := life_year(asked, line, sim)):
            return int(year), Pick(line, source, 1.0, True)
        dated = [x for x in sents if not lead_line(x, source) and YEAR.search(x)]
        if not dated:
            continue
        scores = sim.scores(f"{thing['name']} {asked}", dated)
        # a sentence that says what is asked in its words ("founded") before one merely near in meaning
        asked_stems = set(stems([w for w in tokens(asked) if w not in STOP]))
        best = max(range(len(dated)), key=lambda i: (bool(asked_stems & set(stems(tokens(dated[i])))), scores[i]))
        said = re.search(r"\b[12]\d{3}\b", dated[best])
        if scores[best] >= SAID and said:
            return int(said.group(0)), Pick(dated[best], source, scores[best], True)
    return None


def choice_paragraph(
    analysis: Analysis, evidence: list[dict], text_of, sim: Similarity
) -> tuple[str, list[Pick]] | None:
    """The answer paragraph of a question that offers a choice by time between the two things it
    compares, when each one's source dates what is asked."""
    q = " ".join(analysis.read.split()).strip(" ?")
    offered = choice(q)
    things = [dict(c.data()) for c in analysis.compared]
    if offered is None or len(things) != 2 or sim.embedder is None:
        return None
    before = tokens(q[: offered.start()])
    comparative = set(before) & EARLIER
    if not comparative:
        return None
    # what is dated: the question's words before the choice, without its question word and comparative
    asked = " ".join(w for w in before if w not in comparative and w not in ("who", "which", "what")) or "date"
    dated = [_year(t, asked, evidence, text_of, sim) for t in things]
    if any(d is None for d in dated):
        return None
    (first, first_pick), (second, second_pick) = dated  # type: ignore[misc]
    if first == second:
        return None
    later = bool(comparative & LATER)
    chosen = 0 if (first < second) != later else 1
    names = [inline_text(t["name"]) for t in things]
    said = f"{names[0]}: {first}; {names[1]}: {second}"
    note = f"> **{names[chosen]}**, by the years each source gives ({said})."
    picks = [first_pick, second_pick]
    return f"{ANSWER_HEADING}\n\n{note}\n\n{quoted(picks, text_of)}", picks
