"""Leads: what the sentence nearest an unanswered question names, researched next.

"Who built the first wall of Vellmark?" retrieves the wall's text, whose sentence closest to what is
asked says "the first walls were joined in the reign of the Orm dynasty": no person, so nothing
answers yet, but the thing that sentence names may say who (retrieval led by the sentence that came
closest, as IRCoT interleaves retrieval with each step of reasoning). Its document becomes a concept
of the research, searched in the next round; one lead per run, so a question no source answers
does not wander.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.answer import lead_line, sentences_of
from deepresearch.research.asked import ANSWERED
from deepresearch.research.coverage import sources_for
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, tokens, without_words
from deepresearch.understanding.linking import concept, linker_for, mentions

MAX_SOURCES = 2  # of the subject's sources, the first ones read
TOP = 2  # the closest sentences whose names may lead: closeness in meaning does not tell near ones apart


def leads(
    unanswered: Sequence[Mapping[str, Any]],
    concepts: list[dict],
    evidence: list[dict],
    text_of,
    sim: Similarity,
    backend,
    question: str,
) -> list[dict]:
    """The thing named by the subject's sentence closest to an unanswered asked thing (`unanswered`:
    what the gap check left open), as a concept to research: a thing the sentence names as a name and
    the backend has a document on, not yet researched, not named by the question. Empty once a lead
    was followed, or when no sentence is close enough; a role whose filler is unanswered is led from
    the thing the question names."""
    linker = linker_for(backend) if backend is not None else None
    if linker is None or sim.embedder is None or any(c.get("origin") == "lead" for c in concepts):
        return []
    by_name = {c["name"]: c for c in concepts}
    known = {(c.get("title") or c["name"]).lower() for c in concepts}
    asked_words = set(tokens(question)) - STOP
    for asked in unanswered:
        # a role's filler no sentence names ("who built X" finds no one in X's text): led from X
        subject = by_name.get(asked.get("via") or "") if asked.get("role") else by_name.get(asked.get("subject") or "")
        if subject is None or (asked.get("role") and subject.get("origin") == "bridge"):
            continue
        own = set(tokens(subject["name"])) | set(tokens(bare_title(subject.get("title") or "")))
        sents = [
            x
            for s in sources_for(subject, evidence, text_of, limit=MAX_SOURCES)
            for x in sentences_of(s, text_of)
            if not lead_line(x, s)  # a "Title (description)." line says what the subject is, not more
        ]
        if not sents:
            continue
        query = without_words(asked.get("words") or asked.get("text") or "", frozenset(own))
        scores = sim.scores(query, [without_words(x, frozenset(own)) for x in sents])
        for best in sorted(range(len(sents)), key=lambda i: (-scores[i], i))[:TOP]:
            if scores[best] < ANSWERED:
                break
            for title in mentions(sents[best], linker, skip=known):
                if set(tokens(bare_title(title))) <= asked_words | own or not _named(title, sents[best]):
                    continue  # the question's own thing, the subject said again, or a common noun ("towers")
                lead = concept(title, " ".join(tokens(bare_title(title))), title, origin="lead")
                lead["via"] = subject["name"]
                lead["sentence"] = " ".join(sents[best].split())[:400]
                return [lead]
    return []


def _named(title: str, sentence: str) -> bool:
    """Is the title's name written as a name in the sentence (capitalized, not only as its first word)?"""
    first = re.escape(bare_title(title).split()[0]) if bare_title(title).split() else ""
    return bool(first) and any(
        m.start() > 0 and m.group(0)[:1].isupper() for m in re.finditer(rf"\b{first}", sentence, re.I)
    )
