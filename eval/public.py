"""The public evaluation set: questions from public QA datasets that the offline encyclopedia can
answer, built by eval/public_build.py from the datasets' own files.

The set lives in eval/data/public.json, beside each dataset's licence and attribution (eval/data/README.md);
DEEPRESEARCH_PUBLIC_SET or `--public-set` reads another file. docs/evaluation-public.md says how it is built.

This module holds what the set and its measures share: the split of a question into the
development or the held-out half (a hash of the question), its typo'd copy (two typos, from a
seed), and the loading of the set. The measures are in eval/public_eval.py.

It reads no research code of the project: the set does not share the agent's rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import unicodedata
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PUBLIC = Path(os.environ.get("DEEPRESEARCH_PUBLIC_SET") or DATA / "public.json")
HALVES = ("dev", "heldout")
# grammar, not subjects: words of four letters or more that any question may say (typos go elsewhere;
# the build's context test ignores them)
FUNCTION_WORDS = {
    "what",
    "when",
    "where",
    "which",
    "whom",
    "whose",
    "does",
    "have",
    "that",
    "this",
    "with",
    "from",
    "were",
    "there",
    "their",
    "they",
    "into",
    "been",
    "about",
    "many",
    "much",
    "name",
    "called",
    "also",
    "other",
    "most",
    "some",
    "than",
    "then",
    "them",
    "these",
    "those",
    "would",
    "could",
}
TYPO_SEED = 59
# the keys around each letter of a QWERTY keyboard: a slip of the finger
NEIGHBOURS = {
    "q": "wa",
    "w": "qes",
    "e": "wrd",
    "r": "etf",
    "t": "ryg",
    "y": "tuh",
    "u": "yij",
    "i": "uok",
    "o": "ipl",
    "p": "ol",
    "a": "qsz",
    "s": "adwx",
    "d": "sfec",
    "f": "dgrv",
    "g": "fhtb",
    "h": "gjyn",
    "j": "hkum",
    "k": "jli",
    "l": "ko",
    "z": "xa",
    "x": "zcs",
    "c": "xvd",
    "v": "cbf",
    "b": "vng",
    "n": "bmh",
    "m": "nj",
}


def fold(text: str) -> str:
    """Lower case without accents, spaces collapsed: 'Hernán  Cortés' -> 'hernan cortes'."""
    text = unicodedata.normalize("NFKD", " ".join(text.split()))
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def half_of(question: str) -> str:
    """The half a question belongs to: 'dev' (look at it, tune on it) or 'heldout' (report it only).
    The first byte of the SHA-256 of the folded question, even or odd: the same question always
    falls in the same half, whatever else the set holds."""
    return HALVES[hashlib.sha256(fold(question).encode("utf-8")).digest()[0] % 2]


def _slip(word: str, rng: random.Random) -> str:
    """One typo inside a word (its first letter kept, as people keep it): two letters swapped,
    one dropped, one doubled, or one replaced by a key beside it."""
    for _ in range(20):
        i = rng.randrange(1, len(word) - 1)
        kind = rng.choice(("swap", "drop", "double", "key"))
        if kind == "swap":
            out = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif kind == "drop":
            out = word[:i] + word[i + 1 :]
        elif kind == "double":
            out = word[:i] + word[i] + word[i:]
        else:
            keys = NEIGHBOURS.get(word[i].lower())
            if not keys:
                continue
            key = rng.choice(keys)
            out = word[:i] + (key.upper() if word[i].isupper() else key) + word[i + 1 :]
        if out != word:
            return out
    return word[:1] + word[2:] + word[1]  # never reached for a word of three letters or more


def typo(question: str, seed: int = TYPO_SEED) -> str:
    """The question with two typos, the same ones for the same question and seed: one in each of
    two words of four letters or more, not question words ("what", "where"): two of the four longest
    (the names a question turns on), or two in one word when it has only one such word."""
    rng = random.Random(f"{seed}:{question}")
    words = [m for m in re.finditer(r"[A-Za-z]{3,}", question) if m.group().lower() not in FUNCTION_WORDS]
    spans = [m.span() for m in words if len(m.group()) >= 4] or [m.span() for m in words]
    if not spans:
        return question
    long = sorted(spans, key=lambda s: -(s[1] - s[0]))[:4]  # among the four longest words
    chosen = rng.sample(long, 2) if len(long) >= 2 else [long[0], long[0]]
    out = question
    for start, end in sorted(set(chosen), reverse=True):
        word = out[start:end]
        word = _slip(word, rng)
        if chosen[0] == chosen[1]:
            word = _slip(word, rng)
        out = out[:start] + word + out[end:]
    return out


def load(path: Path = PUBLIC) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def items(data: dict, half: str, *, typos: bool = False) -> list[dict]:
    """The half's questions as the evaluation asks them: as the dataset wrote them, or the typo'd copy."""
    out = []
    for x in data["questions"]:
        if x["half"] == half:
            out.append({**x, "q": x["typo"] if typos else x["q"], "spelling": "typos" if typos else "as asked"})
    return out
