"""Broad questions explore: past the main article, to the things that explain it.

A question without a short answer ("How does X work?", "Tell me about X.", "What is the history
of X?") wants an overview, and an overview reads more than one article. Once the subject's own
text is retrieved, the candidates are the titles that text names (entity linking over its text,
`linking.mentions`) and the backend's best results for the question itself (its hybrid search: the
articles nearest the question in meaning), as STORM takes its perspectives from related topics. Each
is ranked by how close its own text is in meaning to the question and its subject
(deepresearch.embeddings.similarity), not by whether the subject's article happens to link it;
the subject's name counts half (a rare name, which the embedder reads only as word pieces, not at
all), and a candidate whose own summary names the subject is about it. The
best few become concepts of origin `related`, searched and covered like the question's own. A
backend without titles explores nothing here: its search results for the subject already are its
related documents.
"""

from __future__ import annotations

from collections.abc import Callable

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.asked_aspects import Asked, with_asked
from deepresearch.research.aspects import Aspect, Sentence, aspects
from deepresearch.research.coverage import sources_for
from deepresearch.research.nouns import word_use_for
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, tokens, without_words
from deepresearch.understanding.linking import SCAFFOLD, Linker, concept, linker_for, mentions

MAX_RELATED = 5
SEARCHED = 15  # the backend's results for the question that join the candidates
MIN_SIMILARITY = 0.25  # a candidate less close than this (cosine) to the question explains too little
MIN_SHARE = 0.2  # ... without an embedder: the share of the question's words its text must hold
NAMED = 0.15  # what the subject's own text names is about the subject: it counts for this much closeness more
NAMES_IT = 0.15  # a candidate whose own summary names the subject ("a style of jazz") is about it: this much more
GENERIC = 0.15  # a title of one word most of the corpus uses ("Music", "Medicine") explains little: this much less


GENERIC_DF = 0.01  # ... a word in more than this share of the corpus's documents


def _generic(title: str, linker: Linker) -> bool:
    words = tokens(bare_title(title))
    return len(words) == 1 and linker.generic(words[0], share=GENERIC_DF)


def related_titles(
    question: str,
    subject_title: str,
    text: str,
    backend,
    known: set[str],
    sim: Similarity,
    limit: int = MAX_RELATED,
    *,
    by_meaning: bool = False,
    floor: float | None = None,
) -> list[str]:
    """The titles closest in meaning to the question about the subject, among those the subject's
    own `text` names and the backend's results for the question; best first.

    `by_meaning` (a deep outline's pool): the backend's results for the subject's own opening join
    the candidates (the articles nearest the subject in meaning, which a short text may not name: a
    campaign beside the cities an activist served in), and a question that says nothing besides its
    subject ("Tell me about X") is read as the subject, not as a request whose words, the name left
    out, are close to nothing. `floor`: the least closeness kept (default by the embedder)."""
    linker = linker_for(backend) if backend is not None else None
    if linker is None:
        return []
    skip = {k.lower() for k in known} | {subject_title.lower()}
    named = set(mentions(text, linker, skip))
    found = list(named)
    lead = " ".join(text.split()[:60])
    for query in (question, lead) if by_meaning else (question,):
        try:
            found += [r.title for r in backend.search(query, SEARCHED)]
        except Exception:  # noqa: BLE001 - exploring is best effort: the named titles remain
            pass
    candidates = [t for t in dict.fromkeys(found) if t.lower() not in skip]
    if not candidates:
        return []
    query = question if subject_title.lower() in question.lower() else f"{question} ({subject_title})"
    summaries = [f"{t}. {(linker.text_of.get(t) or t)[:400]}" for t in candidates]
    # close to what was asked, and to what the subject is (its own opening): "Tell me about jazz" wants
    # the music's people and styles, not every title with "jazz" in it
    # the subject's name counts half, and a rare name, which the embedder reads as word pieces, not at
    # all: its pieces make look-alikes seem close ("Diogenes" and "Diode"); that a candidate's own
    # summary names the subject says it is about it instead
    name = frozenset(tokens(bare_title(subject_title)))
    pieces = sim.pieces_only(sorted(name))

    def closeness(text: str) -> list[float]:  # with the name and without it (rare names: never with)
        without = sim.scores(without_words(text, name), summaries)
        if pieces:
            return without
        return [(x + y) / 2 for x, y in zip(without, sim.scores(text, summaries))]

    to_subject = closeness(lead)
    to_question = to_subject if by_meaning and not _asks_more(question, name) else closeness(query)
    scores = [
        (a + b) / 2
        + (NAMED if t in named else 0.0)
        + (NAMES_IT if name and name <= set(tokens(x)) else 0.0)
        - (GENERIC if _generic(t, linker) else 0.0)
        for t, a, b, x in zip(candidates, to_question, to_subject, summaries)
    ]
    if floor is None:
        floor = MIN_SIMILARITY if sim.embedder is not None else MIN_SHARE
    # a search result the subject's text does not name must also be close to what the subject is: the
    # question's words alone bring "Diode" for "Diogenes"
    ranked = sorted(
        (
            (s, -i, t)
            for i, (s, t, b) in enumerate(zip(scores, candidates, to_subject))
            if s >= floor and (t in named or b >= floor)
        ),
        reverse=True,
    )
    return [t for _s, _i, t in ranked[:limit]]


def _asks_more(question: str, name: frozenset[str]) -> bool:
    """Whether the question says anything besides its subject's name and a request's scaffolding
    ("Tell me about X" does not; "How does X affect farming?" does)."""
    return any(w not in STOP and w not in SCAFFOLD and w not in name for w in tokens(question))


def related_concepts(
    question: str, subject: dict, text: str, backend, known: set[str], sim: Similarity, limit: int = MAX_RELATED
) -> list[dict]:
    out = []
    for title in related_titles(question, subject.get("title") or subject["name"], text, backend, known, sim, limit):
        c = concept(title, " ".join(tokens(title)), title, origin="related")
        c["via"] = subject["name"]
        out.append(c)
    return out


def explore(
    question: str,
    concepts: list[dict],
    evidence: list[dict],
    text_of,
    backend,
    sim: Similarity,
    limit: int = MAX_RELATED,
) -> list[dict]:
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
            return related_concepts(question, c, text_of(own[0]), backend, known, sim, limit)
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


def explored_outline(
    question: str, subject: dict, backend, known: set[str], sections: int, sim: Similarity
) -> list[dict]:
    """A one-subject question's outline when its material is too thin for aspects: one section on
    the subject, which searches for it and for the things closest in meaning to it (as STORM draws
    on related topics); a related article is cited where it adds a fact to that section, never a
    section by itself (its title is no aspect of what was asked)."""
    q = " ".join(question.split()).rstrip(" ?.")
    concepts = [subject]
    if text := subject_text(subject, backend):
        concepts += related_concepts(question, subject, text, backend, known, sim, limit=max(0, sections - 1))
    return [{"title": subject["name"], "concepts": concepts, "key_question": f"{q}?"[:300]}]


POOL = 14  # the articles an aspect outline is drawn from: the subject's and the closest related ones
MAX_SECTION_SOURCES = 6  # the articles a section searches for by title (its first round's searches)
ASKED_RELATED = 3  # the documents closest to a named aspect's own question that join the pool
THIN_FLOOR = 0.0  # a pool too thin for two aspects takes every candidate at least this close


def article_text(title: str, backend) -> str:
    """A document's text, looked up by its title ("" when the backend has no document of that title)."""
    return subject_text({"title": title}, backend)


def aspect_outline(
    question: str,
    subject: dict,
    backend,
    known: set[str],
    sections: int,
    sim: Similarity,
    pool: int = POOL,
    asked: list[Asked] | None = None,
) -> list[dict]:
    """A one-subject question's sections as aspects of it (deepresearch.research.aspects): the
    sentences of the subject's document and of the documents closest in meaning to the question
    about it (`related_titles`), grouped by meaning and named by their shared words. Each section
    searches for its aspect (the subject with the aspect's words) and for the documents its
    sentences come from. Empty when the material is too thin for two aspects.

    `asked`: the aspects the question names itself (deepresearch.research.asked_aspects), each a
    section on its own question, its material drawn also from the documents closest to that question,
    before the aspects the material holds."""
    text = subject_text(subject, backend)
    if not text:
        return []
    title = subject.get("title") or subject["name"]
    linker = linker_for(backend)
    use = word_use_for(linker)
    found: list = []
    for floor in (None, THIN_FLOOR):  # too thin for two aspects: the pool takes the less close too
        articles = [(title, text)]
        wanted = related_titles(
            question, title, text, backend, known, sim, limit=pool - 1, by_meaning=True, floor=floor
        )
        for a in asked or []:  # each named aspect's own question finds the documents closest to it
            wanted += related_titles(a.question, title, text, backend, known, sim, limit=ASKED_RELATED, floor=floor)
        for t in dict.fromkeys(wanted):
            if body := article_text(t, backend):
                articles.append((t, body))
        if len(articles) >= 3:
            words = (
                linker.weight if linker else None,
                use.noun_phrase if use else None,
                linker.exact_titles if linker else None,
            )
            if asked:
                found, sentences = with_asked(question, subject["name"], articles, sim, sections, asked, *words)
            else:
                found, sentences = aspects(question, subject["name"], articles, sim, sections, *words)
        if len(found) >= 2:
            break
    if len(found) < 2:
        return []
    asked_questions = {x.question for x in asked or []}

    def key_question(a: Aspect) -> str:  # a named aspect's section asks its own question
        if a.name in asked_questions:
            return a.name
        return f"What is there to know about {' and '.join(a.terms)} in {subject['name']}?"

    out = aspect_sections(found, sentences, [t for t, _ in articles], {title: subject}, subject, key_question)
    named = {x.question: x.word for x in asked or []}
    for section, a in zip(out, found):
        if a.name in named:  # the aspect the question names ("causes"): what a dependent outline orders by
            section["aspect"]["asked"] = named[a.name]
    return out


def aspect_sections(
    found: list[Aspect],
    sentences: list[Sentence],
    titles: list[str],
    subjects: dict[str, dict],
    via: dict,
    key_question: Callable[[Aspect], str],
    extra: dict | None = None,
) -> list[dict]:
    """The outline's sections of `found` (aspects of `sentences`, of the articles `titles`): each
    searches for the articles its sentences come from, every article being the section's that holds
    most of its sentences; an article of `subjects` (by title) is that concept, any other a related
    concept reached `via` the subject. `extra`: more of each section's "aspect" data."""
    home: dict[str, int] = {}
    for t in titles:
        counts = [sum(sentences[i].source == t for i in a.members) for a in found]
        if max(counts, default=0):
            home[t] = counts.index(max(counts))
    out = []
    for j, a in enumerate(found):
        mine = [t for t in a.sources if home.get(t) == j]
        shared = [t for t in a.sources if t not in mine]
        searched = (mine + shared)[: max(MAX_SECTION_SOURCES, len(mine))]
        concepts = [subjects[t] if t in subjects else _related(t, via) for t in searched]
        out.append(
            {
                "title": a.name,
                "key_question": key_question(a)[:300],
                "concepts": concepts,
                "aspect": {
                    "terms": a.terms,
                    "subject": via["name"],
                    "members": [[sentences[i].source, sentences[i].pos] for i in a.members],
                    **(extra or {}),
                },
            }
        )
    return out


def _related(title: str, subject: dict) -> dict:
    c = concept(title, " ".join(tokens(title)), title, origin="related")
    c["via"] = subject["name"]
    return c
