"""A quoted sentence keeps its source's subject.

Taken out of its document, "It can be typeset from source2e.tex" loses what "It" stands for.
The report may name it only when the source does: the pronoun's antecedent is the subject of
the nearest sentence before it in the source that does not itself open with a pronoun (a run
of "It ..." sentences speaks of one thing), and a name may replace the pronoun only when that
sentence opens with the name. Anything else is quoted as it stands.

`subject_change` is the check: a report sentence that reproduces a source sentence under
another subject, one the source does not name there. The citation check (report/verify.py)
and the grounding filter call it; `changed_subjects` runs it over a whole report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from deepresearch.report.grounding import MAX_SENTENCE, source_sentences, split_text
from deepresearch.text.citations import CITE, UNVERIFIED, cited_numbers
from deepresearch.text.sentences import is_table_row, split_sentences, table_cells

_OPENING_PRONOUN = re.compile(r"^(It|He|She|They|Its|His|Her|Their)\b(?!['’])")
_POSSESSIVE = ("Its", "His", "Her", "Their")


def opens_with_pronoun(sentence: str) -> bool:
    """Does the sentence open with a personal pronoun ("He was ...", "Its walls ...")?"""
    return bool(_OPENING_PRONOUN.match(sentence))


_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
MIN_SHARED = 4  # words a report sentence must share with a source sentence's end to be a quote of it
MAX_OPENING = 6  # words before the shared end that can be a subject (longer: another sentence)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _bare(title: str) -> str:
    """A title without its qualifier ("Mercury (planet)" -> "Mercury")."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip() or title.strip()


def antecedent_sentence(sentence: str, text: str) -> str | None:
    """The sentence of `text` whose subject an opening pronoun of `sentence` stands for: the
    nearest one before `sentence` in `text` not opening with a pronoun itself. None when
    `sentence` is not in `text` or nothing before it names anything."""
    flat, s = _flat(text), _flat(sentence)
    at = flat.find(s) if s else -1
    if at <= 0:
        return None
    for x in reversed(split_text(flat[:at])):
        x = x.strip()
        if x and not (_OPENING_PRONOUN.match(x) or _CLAUSE_PRONOUN.match(x) or _POINTING.match(x)):
            return x  # a sentence that itself speaks of "he" or "these" names no one
    return None


def opens_with(sentence: str, name: str) -> bool:
    """`sentence` begins with `name` as its own words (an article before either aside), or with a
    longer form of a name of several words: a run of capitalized words holding the name's words in
    order, its first word among the run's first two ("Ada Mirelle Brannock was ..." and "Mara Ada
    Brannock was ..." open with "Ada Brannock")."""
    s, n = _ARTICLE.sub("", sentence.strip()), _ARTICLE.sub("", name.strip())
    said, named = _words(s), _words(n)  # word by word: "Quartet No. 3" opens with "quartet no 3"
    if not named:
        return False
    if said[: len(named)] == named:
        return True
    opening = _WORD.findall(s)[: len(named) + MAX_MIDDLE]
    if len(named) < 2 or not opening:
        return False
    longer = [w.lower() for w in opening]
    if named[0] not in longer or named[-1] not in longer[1:]:
        return False
    cut = longer.index(named[-1], 1)
    # all of it capitalized, the name's words in order and its first among the first two
    return (
        all(w[:1].isupper() for w in opening[: cut + 1])
        and longer.index(named[0]) <= 1
        and _in_order(named, longer[: cut + 1])
    )


MAX_MIDDLE = 2  # middle names a longer form of a name may add ("Giovanni Battista ... Rossi")


def _in_order(short: list[str], long: list[str]) -> bool:
    it = iter(long)
    return all(w in it for w in short)


def with_subject(sentence: str, title: str, text: str) -> str:
    """`sentence` of `text` opening with the name its pronoun stands for, when `text` names it:
    in an encyclopedia article "India, officially ... It is the world's seventh-largest
    country" speaks of India. When the source's preceding sentence speaks of something else
    (a manual's "This very large document ... It can be typeset from ...") the sentence is
    returned as it stands. `title`'s qualifier is dropped ("Mercury (planet)")."""
    m = _OPENING_PRONOUN.match(sentence)
    if not m or not title:
        return sentence
    name = _bare(title)
    head = antecedent_sentence(sentence, text)
    if head is None or not opens_with(head, name):
        return sentence
    if m.group(1) in _PLURAL and not _said_as_many(head, name):
        return sentence  # "The Wall is a series of forts. They were built ...": the forts, not the Wall
    if m.group(1) in _POSSESSIVE:
        name = f"{name}'s" if not name.endswith("s") else f"{name}'"
    return name + sentence[m.end() :]


_PLURAL = ("They", "Their")
_PLURAL_VERB = re.compile(r"^(?:\s*,[^,]*,)?\s+(?:are|were|have)\b", re.IGNORECASE)


def dangling(sentence: str, title: str, text: str) -> bool:
    """Does `sentence` open with a pronoun the report cannot name ("They are ...", where its source
    does not say what "they" are in words the report can give), or is a pronoun the subject of its
    first clause ("In 1990, he ...")? Such a sentence reads rightly only right after the sentence of
    its own source that it continues."""
    if _CLAUSE_PRONOUN.match(sentence) or _POINTING.match(sentence):  # "..., he served", "These islands ..."
        return True
    return bool(_OPENING_PRONOUN.match(sentence)) and with_subject(sentence, title, text) == sentence


# a demonstrative, or a share of "it" or "them", points back at what the source's sentence before said
_POINTING = re.compile(
    r"^(?:(?:This|These|Those|Such)\b(?!['’])|(?:Most|Much|Many|Some|All|Part|Each|None|Both|One) of (?:it|them)\b)"
)
_CLAUSE_PRONOUN = re.compile(r"^[^,.;]{1,80},\s+(?:he|she|it|they|his|her|its|their)\b(?!['’])")


def reads_alone(sentence: str) -> bool:
    """Does `sentence` say what it speaks of in its own words: no pronoun or pointer opening it or
    its first clause ("It is ...", "These ...", "In 1990, he ...")? Only such a sentence can stand
    where nothing before it says what a pronoun is, and be quoted as it stands: a table's cell."""
    return not (_OPENING_PRONOUN.match(sentence) or _CLAUSE_PRONOUN.match(sentence) or _POINTING.match(sentence))


def _said_as_many(head: str, name: str) -> bool:
    """Does the sentence that opens with `name` speak of it as of many ("The Orla Falls are ...")?"""
    s, n = _ARTICLE.sub("", head.strip()), _ARTICLE.sub("", name.strip())
    return bool(_PLURAL_VERB.match(s[len(n) :]))


def _plain(sentence: str) -> str:
    """A report's sentence as its source would say it: no citations, marks or Markdown escapes."""
    s = CITE.sub("", sentence).replace(UNVERIFIED, "")
    s = re.sub(r"\\(.)", r"\1", s)
    return _flat(re.sub(r"\s+([.!?,;:])", r"\1", s))


def _words(s: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(s)]


def _subject(opening: list[str]) -> str:
    """The name a report sentence's opening words give (a possessive's mark dropped)."""
    name = " ".join(opening)
    return re.sub(r"['’]s?$", "", name)


def subject_change(sentence: str, text: str) -> dict | None:
    """Where `sentence` (a report's) quotes a sentence of `text` with another opening, one
    `text` does not name as the quoted sentence's subject there: {"source_sentence",
    "subject" (the report's), "source_subject"}. None when it quotes none under another
    subject (or is no quote: a sentence in the report's own words is judged by its support)."""
    said = _plain(sentence)
    words = _words(said)
    if len(words) < MIN_SHARED + 1:
        return None
    sentences = source_sentences(text, 3 * MAX_SENTENCE)
    if any(_words(src) == words for src in sentences):
        # the source says it as it stands: another of its sentences with the same end (an
        # encyclopedia's "Sofia (Capital of Bulgaria)." lead line beside "Sofia is the capital
        # of Bulgaria.") is not the one quoted
        return None
    changed = None
    for src in sentences:
        theirs = _words(src)
        k = 0
        while k < min(len(words), len(theirs)) and words[-1 - k] == theirs[-1 - k]:
            k += 1
        mine_open, their_open = words[: len(words) - k], theirs[: len(theirs) - k]
        if k < MIN_SHARED or k < 0.6 * len(theirs) or not mine_open or not their_open:
            continue
        if len(mine_open) > MAX_OPENING or len(their_open) > MAX_OPENING:
            continue
        if _OPENING_PRONOUN.match(src) and len(their_open) == 1:
            head = antecedent_sentence(src, text)
            if head is not None and opens_with(head, _subject(mine_open)):
                return None  # the source names it: the sentence before says what "it" is
        if _LINKING.sub("", " ".join(mine_open)) == " ".join(their_open):
            return None  # the same subject, said as a sentence ("Orla (Harbour town)." -> "Orla is a ...")
        changed = changed or {
            "source_sentence": src,
            "subject": " ".join(mine_open),
            "source_subject": " ".join(their_open),
        }
    return changed


_LINKING = re.compile(r"(?:\s+(?:is|are|was|were|the|an?))+$")  # a subject's verb and article, said after it


def changed_subjects(report: str, texts: Mapping[int, str]) -> list[dict]:
    """Every cited sentence of `report` that quotes a sentence of a source it cites under a
    subject the source does not give it: {"sentence", "source_id", ...subject_change}.
    `texts`: each cited source's retrieved text by its number in the report. The evaluation
    runs it over every report it writes: it should find nothing."""
    out = []
    for line in report.split("\n"):
        if line.lstrip().startswith("#") or not CITE.search(line):
            continue
        # a table row's cells are each one quote, never split into sentences ("Lillie P. Bliss")
        units = table_cells(line) if is_table_row(line) else split_sentences(line.strip())
        for sent in units:
            for n in dict.fromkeys(cited_numbers(sent)):
                if n in texts and (found := subject_change(sent, texts[n])):
                    out.append({"sentence": _plain(sent), "source_id": n, **found})
    return out
