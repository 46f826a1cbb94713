"""No line of product code carries a phrase of an evaluation question.

The evaluation's questions (eval/questions.json and the public sets in eval/data/) measure the research
only while the research knows nothing of them: a rule, pattern, comment or example written around one
of them measures the fit, not the research. A line of deepresearch/, nodes/ or tools/ that shares
five words in a row with any of those questions fails this test. Case is ignored; words are runs of
letters and digits, an apostrophe between them ("Galileo's" is two words, the same in the question and
the code), so the quotes around a string literal ('the ...') do not hide its words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.no_index  # searches nothing: runs while the session builds the index (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("deepresearch", "nodes", "tools")
RUN = 5
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def runs(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    """Every run of n words in a row in the text."""
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def questions_in(data: object) -> Iterator[str]:
    """The questions a set holds: every string under a key `q` (and a question's typo'd copy, `typo`)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("q", "typo") and isinstance(value, str):
                yield value
            else:
                yield from questions_in(value)
    elif isinstance(data, list):
        for value in data:
            yield from questions_in(value)


def eval_questions(root: Path = ROOT) -> list[str]:
    files = [root / "eval" / "questions.json", *sorted((root / "eval" / "data").glob("*.json"))]
    out: list[str] = []
    for f in files:
        if f.exists():
            out += questions_in(json.loads(f.read_text(encoding="utf-8")))
    return out


def product_lines(root: Path = ROOT, dirs: Iterable[str] = PRODUCT) -> Iterator[tuple[Path, int, str]]:
    """Each text line of the product's files (binary files and caches aside)."""
    for d in dirs:
        for f in sorted((root / d).rglob("*")):
            if not f.is_file() or "__pycache__" in f.parts:
                continue
            try:
                text = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for i, line in enumerate(text.splitlines(), 1):
                yield f, i, line


def shared(lines: Iterable[tuple[Path, int, str]], questions: Iterable[str]) -> list[str]:
    """`file:line: the run` for each line that shares a run of five words with a question."""
    asked: set[tuple[str, ...]] = set()
    for q in questions:
        asked |= runs(q)
    out = []
    for f, i, line in lines:
        if found := runs(line) & asked:
            out.append(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}:{i}: {' '.join(sorted(found)[0])}")
    return out


def test_the_check_finds_a_shared_run_across_case_and_punctuation(tmp_path: Path) -> None:
    code = tmp_path / "rule.py"
    code.write_text(
        "x = 1\nPATTERN = r'the Glass Heron Lighthouse was painted'  # five words of the question\n"
        "# the Glass Heron lighthouse, painted\n",
        encoding="utf-8",
    )
    found = shared(product_lines(tmp_path, ["."]), ["When was the glass heron lighthouse was painted blue?"])
    assert len(found) == 1 and found[0].startswith(f"{code}:2: ")  # line 3 breaks the run ("lighthouse, painted")
    # four words in a row are not a phrase of the question
    assert shared(product_lines(tmp_path, ["."]), ["Which glass heron lighthouse stands?"]) == []


def test_the_questions_are_read_from_every_set() -> None:
    qs = eval_questions()
    data = json.loads((ROOT / "eval" / "questions.json").read_text(encoding="utf-8"))
    assert {x["q"] for k in ("iterative", "deep", "answers") for x in data[k]} <= set(qs)
    for f in sorted((ROOT / "eval" / "data").glob("*.json")):
        assert {x["q"] for x in json.loads(f.read_text(encoding="utf-8"))["questions"]} <= set(qs)


def test_no_product_line_shares_five_words_in_a_row_with_an_evaluation_question() -> None:
    found = shared(product_lines(), eval_questions())
    assert not found, f"{len(found)} product lines carry an evaluation question's phrase:\n" + "\n".join(found)


QUOTE = 8  # words in a row of an evaluation question that make a quote of it


def quoted(lines: Iterable[tuple[Path, int, str]], questions: Iterable[str]) -> list[str]:
    """`file:line: the question` for each line that holds a whole question or QUOTE words in a row of one."""
    whole = {tuple(words(q)) for q in questions}
    long_runs: dict[tuple[str, ...], str] = {}
    for q in questions:
        for r in runs(q, QUOTE):
            long_runs.setdefault(r, q)
    out = []
    for f, i, line in lines:
        w = words(line)
        hit = next((" ".join(q) for q in whole if q and len(q) < QUOTE and _holds(w, q)), None)
        hit = hit or next((long_runs[r] for r in runs(line, QUOTE) if r in long_runs), None)
        if hit:
            out.append(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}:{i}: {hit}")
    return out


def _holds(w: list[str], q: tuple[str, ...]) -> bool:
    return any(tuple(w[i : i + len(q)]) == q for i in range(len(w) - len(q) + 1))


def test_the_quote_check_finds_a_whole_question_and_a_long_run(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        'Q = "Who painted the Glass Heron?"\n'  # a whole (short) question
        'P = "asked: the keeper of the Glass Heron lighthouse paint it"\n'  # eight words of the long one
        'R = "the keeper of the glass heron lighthouse"\n',  # seven words: not a quote
        encoding="utf-8",
    )
    qs = ["Who painted the Glass Heron?", "Why did the keeper of the glass heron lighthouse paint it blue?"]
    found = quoted(product_lines(tmp_path, ["."]), qs)
    assert [x.split(": ")[0].rsplit(":", 1)[1] for x in found] == ["1", "2"], found


def test_no_test_line_shares_five_words_in_a_row_with_an_evaluation_question() -> None:
    """Tests use invented text (or real articles asked about in other words): a unit test that carries an
    evaluation question's phrase tunes the product to that question. This file (its own invented examples
    aside) and the installed browser artifacts are left out."""
    lines = (
        (f, i, line)
        for f, i, line in product_lines(ROOT, ["tests"])
        if f.name != Path(__file__).name and "artifacts" not in f.relative_to(ROOT).parts
    )
    found = shared(lines, eval_questions())
    assert not found, f"{len(found)} test lines carry an evaluation question's phrase:\n" + "\n".join(found)
