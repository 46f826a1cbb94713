"""Sentences Expand adds to a paragraph stay on the paragraph's topic.

Expanding a sentence about the Eiffel Tower's engineer must not bring in a sentence about
Tower Bridge because both speak of towers and engineers: the retrieved sources share words, and
even sentence-by-sentence meaning, with the passage without being about what it is about. Two
checks, by meaning with the run's embedder:

- the source: one the paragraph neither cites nor names (its bare title, as written) whose title
  is clearly less close to the selection and the paragraph than the titles of the sources the
  paragraph cites speaks of something else, and adds nothing (`off_subject`);
- the sentence: one from a source the paragraph neither cites nor names, read after that
  source's title (which says what its pronouns stand for), must be close to the selection or
  to the paragraph (`closeness`, ON_TOPIC).

Without an embedder nothing is judged by meaning and every supported sentence stays (word
overlap, all there is then, is what let the off-topic sentence in).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from deepresearch.embeddings.similarity import Similarity
from deepresearch.text.citations import CITE, UNVERIFIED, cited_numbers
from deepresearch.text.sentences import content_words, split_sentences
from deepresearch.text.words import bare_title

# cosine (all-MiniLM-L6-v2): an added sentence, read after its source's title, less close than
# this to both the selection and its paragraph speaks of something else. Measured on a paragraph
# on an engineer: sentences from his own and his works' articles 0.47-0.69, sentences of
# articles that only share a word with it ("tower") 0.28-0.40.
ON_TOPIC = 0.45
# cosine: a source whose title is this much less close to the paragraph than the titles of the
# sources it cites is about something else ("Tower Bridge" 0.47 to a paragraph on Gustave Eiffel,
# whose own article's title is at 0.61), whatever its sentences share with the passage
SUBJECT_MARGIN = 0.1


def paragraph_around(body: str, start: int, end: int) -> str:
    """The paragraph(s) of `body` holding the span start-end (blank lines part paragraphs)."""
    first = body.rfind("\n\n", 0, start)
    last = body.find("\n\n", end)
    return body[first + 2 if first >= 0 else 0 : last if last >= 0 else len(body)].strip()


def _plain(sentence: str) -> str:
    return " ".join(CITE.sub("", sentence).replace(UNVERIFIED, "").split())


def closeness(
    sentences: list[str], titles: Mapping[int, str], selected: str, paragraph: str, sim: Similarity
) -> list[float]:
    """Each sentence's closeness in meaning to the selection or its paragraph (the closer of
    the two), read after the title of the first source it cites."""
    texts = []
    for s in sentences:
        title = next((titles[n] for n in cited_numbers(s) if n in titles), "")
        texts.append(f"{title}: {_plain(s)}" if title else _plain(s))
    near_selection = sim.scores(_plain(selected), texts)
    near_paragraph = sim.scores(_plain(paragraph), texts)
    return [max(a, b) for a, b in zip(near_selection, near_paragraph)]


def names(text: str, title: str) -> bool:
    """`text` names the subject of a source titled `title`: its bare title as written there,
    capitals included ("the Korvel radio tower" does not name a source titled "Tower")."""
    bare = bare_title(title).strip()
    return bool(bare) and re.search(rf"(?<!\w){re.escape(bare)}(?!\w)", text) is not None


def off_subject(offered: list[dict], selected: str, paragraph: str, sim: Similarity) -> set[int]:
    """The offered sources (by number) about something else than the paragraph: not cited by
    it, their subject not named in it, and their title less close in meaning to the selection
    and the paragraph than the titles of the sources it cites, by SUBJECT_MARGIN."""
    own = set(cited_numbers(paragraph))
    titles = {int(s["id"]): s.get("title", "") for s in offered}
    others = {n: t for n, t in titles.items() if n not in own and t and not names(paragraph, t)}
    if not others:
        return set()
    cited = [titles[n] for n in own if titles.get(n)]
    texts = [*cited, *others.values()]
    near = [max(a, b) for a, b in zip(sim.scores(_plain(selected), texts), sim.scores(_plain(paragraph), texts))]
    best = max(near[: len(cited)], default=None)
    if best is None:
        return set()
    return {n for n, x in zip(others, near[len(cited) :]) if x < best - SUBJECT_MARGIN}


def keep_on_topic(text: str, old: str, paragraph: str, offered: list[dict], sim: Similarity) -> tuple[str, list[dict]]:
    """`text` (new text for the span `old` of `paragraph`) without the sentences it adds, ones
    `old` has not, that are off the selection's and the paragraph's topic; and what was left
    out (as `removed` entries). The text's surrounding whitespace is kept. Without an embedder
    `text` is returned as it is."""
    if sim.embedder is None or not text.strip():
        return text, []
    had = {_plain(s).lower() for line in old.split("\n") for s in split_sentences(line.strip())}
    titles = {int(s["id"]): s.get("title", "") for s in offered}
    lines = text.split("\n")
    split = [split_sentences(line.strip()) if line.strip() else [] for line in lines]
    added = [
        s
        for sents in split
        for s in sents
        if cited_numbers(s) and _plain(s).lower() not in had and content_words(_plain(s))
    ]
    if not added:
        return text, []
    elsewhere = off_subject(offered, old, paragraph, sim)
    own = set(cited_numbers(paragraph)) | {n for n, t in titles.items() if t and names(paragraph, t)}

    def source_of(sentence: str) -> int | None:
        return next((n for n in cited_numbers(sentence) if n in titles), None)

    far = {
        s
        for s, x in zip(added, closeness(added, titles, old, paragraph, sim))
        if source_of(s) in elsewhere or (source_of(s) not in own and x < ON_TOPIC)
    }
    if not far:
        return text, []
    out = [
        " ".join(x.strip() for x in sents if x not in far) if line.strip() else line
        for line, sents in zip(lines, split)
    ]
    removed = [
        {"kind": "sentence", "value": _plain(s)[:200], "reason": "off the topic of the passage it would be added to"}
        for s in added
        if s in far
    ]
    kept = "\n".join(out)
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return (lead + kept.strip() + trail if kept.strip() else ""), removed
