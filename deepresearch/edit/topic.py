"""Sentences Expand adds to a paragraph stay on the paragraph's topic.

Expanding a sentence about the Eiffel Tower's engineer must not bring in a sentence about
Tower Bridge because both say "tower": the retrieved sources share words with the passage
without speaking of the same thing. Each added sentence is read as its source gives it (after
its source's title, which says what its pronouns stand for) and compared by meaning, with the
run's embedder, to the selected text and to its paragraph; one close to neither is left out.
Without an embedder nothing is judged by meaning and every supported sentence stays (word
overlap, all there is then, is what let the off-topic sentence in).
"""

from __future__ import annotations

from collections.abc import Mapping

from deepresearch.embeddings.similarity import Similarity
from deepresearch.text.citations import CITE, UNVERIFIED, cited_numbers
from deepresearch.text.sentences import content_words, split_sentences

# cosine (all-MiniLM-L6-v2): an added sentence, read after its source's title, less close than
# this to both the selection and its paragraph speaks of something else. Measured on a paragraph
# on an engineer: sentences from his own and his works' articles 0.47-0.69, sentences of
# articles that only share a word with it ("tower") 0.28-0.40.
ON_TOPIC = 0.45


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
        if _plain(s).lower() not in had and content_words(_plain(s)) and not s.lstrip().startswith("#")
    ]
    if not added:
        return text, []
    far = {s for s, x in zip(added, closeness(added, titles, old, paragraph, sim)) if x < ON_TOPIC}
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
