"""Is a sentence's answer of the kind asked? "Which currency ..." is answered only by a sentence naming a
thing the search backend's descriptions call a currency (by meaning), or a name no document has whose
own words say that kind; a sentence naming only things of other kinds answers nothing."""

from __future__ import annotations

import re

from deepresearch.embeddings.similarity import Similarity
from deepresearch.research.sentences import QUOTED, names_in
from deepresearch.text.sentences import STOP
from deepresearch.text.words import bare_title, singular, stems, tokens
from deepresearch.understanding.analysis import Analysis
from deepresearch.understanding.linking import MAX_NGRAM, head_nouns, kinds_for, linker_for

NAMES = ("person", "place", "thing")  # kinds whose answer is a name

# a one-word name no document has, in more than this share of the documents, names no thing of its
# own ("Italian", "BC"); specific names ("Ottawa", "Tiber") are in far fewer
COMMON_NAME = 0.01
# what a sentence names: no thing of the kind asked, a thing whose kind nothing tells, a thing of that kind
NOT, UNTOLD, KNOWN = 0, 1, 2
KIND_FIT = 0.4  # cosine: a document whose description is less close to the kind asked is not of that kind


SAME_KIND = 0.65  # cosine of two kind nouns: "nation" is a country, "continent" is not (0.62)


def _described_as_kind(noun: str, description: str, kinds: frozenset[str], sim: Similarity) -> bool:
    """Does the description say its document is a `noun`? When it names a kind the backend knows
    ("Continent", "Marginal sea of the Pacific"), that kind must be the noun or nearly the same word
    ("corporation" for "company"), unless the description says the noun itself ("Mountain range");
    a description that names no kind is judged whole, by meaning."""
    heads = head_nouns(description) & kinds
    if noun in heads or stems([noun])[0] in stems(tokens(description)):
        return True  # it says the noun ("Mountain range in ..." is a mountain's)
    if heads:
        return max(sim.scores(noun, sorted(heads))) >= SAME_KIND
    return sim.scores(noun, [description])[0] >= KIND_FIT


def kind_check(analysis: Analysis, kind: str, role: str | None, subject: dict | None, backend, sim: Similarity):
    """A grade for a sentence: KNOWN when it names a thing of the kind the question asks for ("which
    currency": a document whose description is close in meaning to "currency", or a name no document
    has whose own words say that kind), UNTOLD when it names a thing no document has and nothing tells
    the kind of, else NOT. None when the kind is none the backend's documents are, or the answer is
    no name."""
    noun = analysis.focus.noun
    kinds = kinds_for(backend) if backend is not None and kind in NAMES and not role else None
    linker = linker_for(backend) if kinds else None
    if not noun or not kinds or noun not in kinds or linker is None or sim.embedder is None:
        return None
    own = (subject.get("title") or subject["name"]).lower() if subject else ""
    asked_words = set(analysis.words) | set(tokens(analysis.question))
    fit: dict[str, bool] = {}

    def of_kind(titles: list[str]) -> bool:
        for t in titles:
            if t not in fit:
                named = tokens(bare_title(t))
                # a kind's own article ("River") is no thing of that kind; a name that says the noun
                # ("... Sea") is one, whatever its description calls it
                common = len(named) == 1 and (singular(named[0]) in kinds or linker.written_as_name(named[0]) is False)
                fit[t] = not common and (
                    noun in {singular(w) for w in named}
                    or _described_as_kind(noun, backend.description(t) or t, kinds, sim)
                )
        return any(fit[t] for t in titles)

    def names_one(sentence: str) -> int:
        words = tokens(sentence)
        titles = {  # every title the sentence's words make, nested ones too ("the United States")
            t
            for n in range(1, min(MAX_NGRAM, len(words)) + 1)
            for i in range(len(words) - n + 1)
            for t in linker.exact_titles(words[i : i + n])
            if t.lower() != own
        }
        if titles and of_kind(sorted(titles)):
            return KNOWN
        # a phrase in quotation marks that no document has ("the expression "..."): nothing tells its kind
        quoted = [q for q in QUOTED.findall(sentence) if set(tokens(q)) - asked_words - STOP]
        if any(not linker.exact_titles(tokens(q)) for q in quoted):
            return UNTOLD
        return max(
            (
                unknown_fits(name, sentence[at + len(name) :])
                for at, name in names_in(sentence)
                if at > 0
                and not set(tokens(name)) <= asked_words  # a sentence's first words may be no name
                and not (name.isupper() and sentence[at - 1 : at] == "(")  # "(EU)": the name before, shortened
            ),
            default=NOT,
        )

    def unknown_fits(name: str, after: str) -> int:
        """A name no document has: of the kind asked unless its own words, or the kind word that
        follows it ("the Italian city"), say a kind ("the Eternal City"), when the name with that word
        must be close in meaning to the kind asked ("the Tiber Valley" is close to a river)."""
        words = tokens(name)
        if linker.exact_titles(words) or linker.partial_titles(words):
            return NOT
        if len(words) == 1 and linker.generic(words[0], COMMON_NAME):
            return NOT  # a word most documents use ("Italian", "BC"): a modifier or a mark, no thing
        follows = re.match(r"\s+([a-z]+)", after)
        if follows and singular(follows.group(1)) in kinds:
            name = f"{name} {follows.group(1)}"
        # a word of the name that is a kind, or that the documents write as a common noun ("Valley")
        if not any(singular(w) in kinds or linker.written_as_name(w) is False for w in tokens(name)):
            return UNTOLD  # nothing tells its kind ("Ottawa")
        return KNOWN if sim.scores(noun, [name])[0] >= KIND_FIT else NOT

    return names_one
