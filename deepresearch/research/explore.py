"""Broad questions explore: past the main article, to the things it names.

A question without a short answer ("How does X work?", "Tell me about X.", "What is the history
of X?") wants an overview, and an overview reads more than one article. Once the subject's own
text is retrieved, the titles it names (entity linking over its text, `linking.mentions`) are
the candidates, as STORM takes its perspectives from related topics; each is ranked by how much
its own text shares with the subject's (rare words count more), so "Ragtime" comes before
"Community" for jazz. The best few become concepts of origin `related`, searched and covered
like the question's own. A backend without titles explores nothing here: its search results
for the subject already are its related documents.
"""

from __future__ import annotations

from deepresearch.research.coverage import sources_for
from deepresearch.text.words import tokens
from deepresearch.understanding.linking import concept, linker_for, mentions

MAX_RELATED = 5
MIN_RELATEDNESS = 0.5  # below this, a named thing shares too little with the subject to explain it


def related_titles(subject_title: str, text: str, backend, known: set[str], limit: int = MAX_RELATED) -> list[str]:
    """The titles `text` (the subject's own) names that say most about the subject, best first."""
    linker = linker_for(backend) if backend is not None else None
    if linker is None:
        return []
    skip = {k.lower() for k in known} | {subject_title.lower()}
    found = mentions(text, linker, skip)
    scored = []
    for order, title in enumerate(found):
        other = linker.text_of.get(title) or title
        score = linker.relatedness(text, other)
        if score >= MIN_RELATEDNESS:
            scored.append((score, -order, title))
    return [t for _s, _o, t in sorted(scored, reverse=True)[:limit]]


def related_concepts(subject: dict, text: str, backend, known: set[str], limit: int = MAX_RELATED) -> list[dict]:
    out = []
    for title in related_titles(subject.get("title") or subject["name"], text, backend, known, limit):
        c = concept(title, " ".join(tokens(title)), title, origin="related")
        c["via"] = subject["name"]
        out.append(c)
    return out


def explore(concepts: list[dict], evidence: list[dict], text_of, backend, limit: int = MAX_RELATED) -> list[dict]:
    """The related concepts of the question's first subject whose own source was retrieved, once
    (none when the question already has related concepts)."""
    if any(c.get("origin") == "related" for c in concepts):
        return []
    known = {(c.get("title") or c["name"]) for c in concepts}
    for c in concepts:
        if not c.get("title") or c.get("origin") == "related":
            continue
        own = sources_for(c, evidence, text_of)
        if own:
            return related_concepts(c, text_of(own[0]), backend, known, limit)
    return []


def subject_text(subject: dict, backend) -> str:
    """The subject's own document, looked up by its title before any research has run (the deep
    graph's outline is drawn from it)."""
    title = subject.get("title")
    if not title or backend is None:
        return ""
    try:
        results = backend.search(title, 1)
    except Exception:  # noqa: BLE001 - an outline without exploration is still an outline
        return ""
    return results[0].text if results and results[0].title == title else ""


def explored_outline(question: str, subject: dict, backend, known: set[str], sections: int) -> list[dict]:
    """A one-subject question's sections, from the research itself: the subject, then the
    things its own document names that say most about it (as STORM draws an outline from
    related topics). Each section carries its concept, so it has sources of its own."""
    q = " ".join(question.split()).rstrip(" ?.")
    name = subject["name"]
    out = [{"title": name, "concepts": [subject], "key_question": f"{q}?"[:300]}]
    text = subject_text(subject, backend)
    if not text:
        return out
    for c in related_concepts(subject, text, backend, known, limit=max(0, sections - 1)):
        out.append(
            {
                "title": c["name"],
                "concepts": [c],
                "key_question": f"What is {c['name']}, and what is its part in {name}?"[:300],
            }
        )
    return out
