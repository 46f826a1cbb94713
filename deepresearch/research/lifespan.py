"""A life's span in a description line ("Pell Varo (Venetian glassblower (1701–1760)).") answers when
the question asks for that life's birth or death year."""

from __future__ import annotations

import re

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.answer import lead_line

# "(1701–1760)", "(born 1950)", "(c. 573–664)": a year may be "circa" (c., ca.), either year or both
_LIFESPAN = re.compile(
    r"\((?:born |b\. )?(?:ca?\. ?)?(\d{3,4})(?: BC)?(?:\s*[–-]\s*(?:ca?\. ?)?(\d{3,4}))?(?: BC)?\)\)?\.?\s*$"
)
LIFE_EVENT = 0.35  # cosine: what is asked is this close to a lifespan's birth or death


def lifespan_says(query: str, found: list[tuple[str, dict]], sim: Similarity) -> str | None:
    """A description line that gives a life's span ("Pell Varo (Venetian glassblower (1701–1760))."),
    when what is asked is its birth or its death (closest in meaning of the two, and close enough):
    the years of that format are those two events."""
    if sim.embedder is None:
        return None
    for sent, source in found:
        span = _LIFESPAN.search(sent) if lead_line(sent, source) else None
        if span is None:
            continue
        born, died = sim.scores(query, ["was born", "died"])
        if max(born, died) >= LIFE_EVENT and (born > died or span.group(2)):
            return sent
    return None


def life_year(query: str, line: str, sim: Similarity) -> str | None:
    """The year of a life span's line ("... (1701–1760)).") that what is asked is closer to: its birth's
    or its death's (None when the line gives no year of that event)."""
    span = _LIFESPAN.search(line)
    if span is None or sim.embedder is None:
        return None
    born, died = sim.scores(query, ["was born", "died"])
    return span.group(1) if born >= died else span.group(2)
