"""Yes or no, for a question that asks it of two things (deepresearch.understanding.embedded.forms.polar).

"Are X and Y both opera composers?" is answered by what each thing's source says it is: its
"Title (description)." line and what its opening sentence defines it as, each up to its first
qualifier ("Italian composer", not "... of operas"): yes when each says the kind asked (its last
word, the head: "composers"), no when one that says what it is does not. "Were X and Y of the
same nationality?" (or in the same country) is answered by the names each says it is of: those
of its description line past its first word and of the opening sentence's defining clause ("an
American filmmaker", "the capital and largest city of France"): yes when they share one, no when
each gives names and they share none. Nothing else is inferred: without those sentences, no
verdict, and the paragraph gives the sentences as for any comparison. The sentences the verdict
rests on are quoted after it, each cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.research.answer import ANSWER_HEADING, Pick, lead_line, quoted, sentences_of
from deepresearch.research.coverage import sources_for
from deepresearch.research.sentences import names_in
from deepresearch.text.safe import inline_text
from deepresearch.text.words import fold, stems, tokens
from deepresearch.understanding.analysis import Analysis
from deepresearch.understanding.embedded.described import defined_as, head_of
from deepresearch.understanding.embedded.forms import polar


@dataclass
class Identity:
    kind: str  # what the source says the thing is: its description's and its definition's heads
    shown: str  # the one a reader is shown: the definition's, else the description's
    names: set[str]  # the names it says the thing is of ("American", "France")
    lead: Pick | None  # its "Title (description)." line
    first: Pick | None  # its opening sentence


def _identity(thing: dict, evidence: list[dict], text_of) -> Identity | None:
    for source in sources_for(thing, evidence, text_of, limit=2):
        sents = sentences_of(source, text_of)
        lead = sents[0] if sents and lead_line(sents[0], source) else None
        first = next((x for x in sents if not lead_line(x, source)), None)
        if lead is None and first is None:
            continue
        description = lead[len(source["title"]) + 2 : -2] if lead else ""
        defined = defined_as(first) if first else ""
        said = f"{description.split(' ', 1)[1] if ' ' in description else ''} {defined_as(first, whole=True) if first else ''}"
        shown = re.sub(r"^(?:an?|the|one of the)\s+", "", defined or head_of(description), flags=re.IGNORECASE)
        return Identity(
            kind=f"{head_of(description)} {defined}",
            shown=" ".join(shown.split()),
            names={n for _, n in names_in(said, skip_first=False)},
            lead=Pick(lead, source, 0.0, True) if lead else None,
            first=Pick(first, source, 0.0, True) if first else None,
        )
    return None


def verdict(question: str, things: list[dict], evidence: list[dict], text_of) -> tuple[str, list[Pick]] | None:
    """(the note that answers yes or no, the sentences it rests on), or None when the question asks
    neither or the sources do not tell."""
    asked = polar(question)
    if asked is None or len(things) < 2:
        return None
    form, what = asked
    if form == "both" and not what:  # "Are both X and Y genera?": the words after the last thing named
        q = " ".join(question.split()).rstrip(" ?")
        last = fold(things[-1].get("phrase") or things[-1]["name"])
        at = fold(q).rfind(last) if last else -1
        what = q[at + len(last) :].strip(" ,") if at >= 0 and len(fold(q)) == len(q) else ""
        if not what or len(what.split()) > 3:
            return None
    found = [_identity(c, evidence, text_of) for c in things]
    ids = [x for x in found if x is not None]
    if len(ids) < len(found):
        return None
    shown = [p for x in ids for p in (x.first or x.lead,) if p]
    names = [inline_text(c["name"]) for c in things]
    if form == "both":
        if not all(x.kind.strip() for x in ids):
            return None
        head = stems(tokens(what)[-1:])
        has = [bool(head) and head[0] in set(stems(tokens(x.kind))) for x in ids]
        if not all(has) and what[:1].isupper():
            return None  # "both Spanish": one said to be Catalan may be Spanish too; only a yes is told
        said = "; ".join(f"{n}: {inline_text(x.shown)}" for n, x in zip(names, ids))
        return f"> **{'Yes' if all(has) else 'No'}**, by what each source says it is ({said}).", shown
    asked_words = set(tokens(question))
    kept = [sorted(n for n in x.names if not set(tokens(n)) <= asked_words) for x in ids]
    if not all(kept):
        return None
    shared = set.intersection(*({fold(n) for n in k} for k in kept))
    said = "; ".join(f"{n}: {inline_text(', '.join(k))}" for n, k in zip(names, kept))
    return f"> **{'Yes' if shared else 'No'}**, by the names each source gives ({said}).", shown


def polar_paragraph(analysis: Analysis, evidence: list[dict], text_of) -> tuple[str, list[Pick]] | None:
    """The answer paragraph of a yes-or-no question about the things it compares, when the sources tell."""
    found = verdict(analysis.read, [dict(c.data()) for c in analysis.compared], evidence, text_of)
    if found is None:
        return None
    note, picks = found
    return f"{ANSWER_HEADING}\n\n{note}\n\n{quoted(picks, text_of)}", picks
