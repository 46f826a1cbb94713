"""The words an aspect can be named by: a sentence's content words and pairs of adjacent ones, each
as a stem key ("immun system") and as the sentence writes it ("immune system"); and whether a name
is an article's title alone, which names the article, not an aspect of what was asked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, stems, tokens
from deepresearch.understanding.linking import SCAFFOLD

PUNCTUATION = ".,;:()\"'“”‘’[]!?"


def _inflected(word: str) -> bool:
    """An adverb or a past participle ("usually", "followed"): it says how, not what; no name's word."""
    return len(word) > 5 and word.endswith(("ly", "ed"))


def terms(text: str, skip: frozenset[str]) -> list[tuple[str, str]]:
    """(stem key, surface) of each content word and each pair of adjacent content words; words
    whose stem is in `skip` (the subject's own, said by every sentence about it) are none."""
    out: list[tuple[str, str]] = []
    prev: tuple[str, str] | None = None
    for raw in text.replace("-", " ").split():
        w = raw.strip(PUNCTUATION)
        if raw[:1] in PUNCTUATION:  # no pair across a comma or a bracket ("handwriting, phonographic")
            prev = None
        t = tokens(w)
        if len(t) != 1 or t[0] in STOP or t[0] in SCAFFOLD or not t[0].isalpha() or len(t[0]) < 3 or _inflected(t[0]):
            prev = None
            continue
        key = stems(t)[0]
        if key in skip:
            prev = None
            continue
        out.append((key, w))
        if prev is not None and prev[0] != key:
            out.append((f"{prev[0]} {key}", f"{prev[1]} {w}"))
        prev = None if raw[-1:] in PUNCTUATION else (key, w)
    return out


def written(forms: Counter[str]) -> list[str]:
    """A term's words as its sentences most often write them."""
    return forms.most_common(1)[0][0].split()


def shown(forms: Counter[str], texts: Iterable[str]) -> str:
    """A term as its sentences write it: lower case unless it is a name (capitalized inside them)."""
    word = forms.most_common(1)[0][0]
    first = word.split()[0]
    named = first[:1].isupper() and any(f" {first}" in t for t in texts)
    return word if named else word.lower()


def names_title(question: str, title: str) -> bool:
    """Whether the question says the article's name (its title without the qualifier) as whole words."""
    return f" {' '.join(tokens(bare_title(title)))} " in f" {' '.join(tokens(question))} "


def title_alone(
    name: str, question: str, titles: Iterable[str], titled: Callable[[list[str]], Iterable[str]] | None = None
) -> bool:
    """Whether `name` is only an article's title (or its name without the qualifier: "Mercury" of
    "Mercury (planet)"), among `titles` (by stems: "Birds" of "Bird") or, by `titled` (a title
    index: the titles its words are), among all the corpus's articles, and the question does not
    name that article. A section so named is that article's, not an aspect of what was asked."""
    key = stems(tokens(name))
    found = [t for t in titles if stems(tokens(bare_title(t))) == key]
    if titled is not None:
        found += titled(tokens(name))
    return any(not names_title(question, t) for t in found)
