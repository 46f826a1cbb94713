"""Which words a corpus uses as nouns: an aspect's name is a noun phrase ("Brazil nut and seeds"),
not a verb or a fragment ("Brazil nut and refers", "Largest and known").

No tagger model: a word's part of speech is read from how the backend's own documents use it, by
the grammar words around it (distributional tagging, as Schütze's and Brill's taggers start from
closed-class contexts). A word is a noun phrase's head where it follows a determiner or a
preposition and no content word follows it ("the seat.", "of prey and"); a verb where it follows a
subject pronoun, a relative pronoun or a modal ("it refers", "which became"); a modifier where a
content word of the same case follows it ("African Union", "largest city"); an adjective's "-est" form
and a possessive go before a noun, none is one. A word the documents use too rarely
to say is given the benefit of the doubt.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from deepresearch.text.sentences import STOP

# closed classes of English grammar words, not a list for any question
BEFORE_NOUN = frozenset(
    "the a an its their his her this these those our each every of in by with for from on at among into".split()
)
BEFORE_VERB = frozenset("it he she they which who that can could may might will would should must not".split())
WORD = re.compile(r"[^\W_][\w'’-]*|[^\w\s]")
MIN_USES = 3  # a word used fewer times than this says nothing of its part of speech
FREQUENT = 20  # a word used this often that never heads a noun phrase is no noun ("until")
HEAD_SHARE = 0.15  # a head noun heads a noun phrase at least this often for each time it modifies another word


@dataclass(frozen=True)
class WordUse:
    """Counts of how the documents use each word (lower case)."""

    uses: Counter[str]
    heads: Counter[str]
    modifies: Counter[str]
    verbs: Counter[str]

    def head_noun(self, word: str) -> bool | None:
        """Whether `word` heads noun phrases in the documents (None: used too rarely to say)."""
        w = word.lower()
        if w.endswith(("'s", "’s")) or self.superlative(w):  # "Pirandello's", "greatest": before a noun
            return False
        if self.uses[w] < MIN_USES:
            return None
        heads, modifies = self.heads[w], self.modifies[w]
        if self.verb(w) or modifies >= MIN_USES and heads < HEAD_SHARE * modifies:
            return False
        return True if heads else None if self.uses[w] < FREQUENT else False

    def superlative(self, word: str) -> bool:
        """Whether `word` is an adjective's "-est" form whose "-er" form the documents use too
        ("greatest" beside "greater", "largest" beside "larger"; not "forest" or "harvest")."""
        w = word.lower()
        return w.endswith("est") and (self.uses[w[:-3] + "er"] > 0 or self.uses[w[:-2] + "r"] > 0)

    def verb(self, word: str) -> bool:
        """Whether the documents use `word` as a verb at least as often as as a noun phrase's head."""
        w = word.lower()
        return self.verbs[w] > 0 and self.verbs[w] >= self.heads[w]

    def noun_phrase(self, words: list[str]) -> bool:
        """Whether the words read as a noun phrase: the last heads one, none before it is a verb."""
        return bool(words) and self.head_noun(words[-1]) is not False and not any(self.verb(w) for w in words)


def word_use(texts: Iterable[str]) -> WordUse:
    raw = [w for text in texts for w in [*WORD.findall(text), "."]]
    low = [w.lower() for w in raw]
    content = [w[:1].isalpha() and w not in STOP for w in low]
    upper = [w[:1].isupper() for w in raw]
    # a word modifies the next when both are common words ("largest city") or both names ("Edward
    # III"); a name before a common word is a subject before its verb ("Brenn tested")
    after = content[1:] + [False]
    alike = [a and u == v for a, u, v in zip(after, upper, upper[1:] + [False])]
    prev = ["", *low[:-1]]
    return WordUse(
        uses=Counter(low),
        heads=Counter(w for w, p, a in zip(low, prev, after) if p in BEFORE_NOUN and not a),
        modifies=Counter(w for w, a in zip(low, alike) if a),
        verbs=Counter(w for w, p in zip(low, prev) if p in BEFORE_VERB),
    )


_made: dict[int, tuple[object, WordUse]] = {}
_lock = threading.Lock()


def word_use_for(linker) -> WordUse | None:
    """The word use of a linker's documents, counted once per linker (None without documents)."""
    texts = getattr(linker, "text_of", None)
    if not texts:
        return None
    with _lock:
        if id(linker) not in _made:
            _made[id(linker)] = (linker, word_use(texts.values()))  # the linker held: its id stays its own
        return _made[id(linker)][1]
