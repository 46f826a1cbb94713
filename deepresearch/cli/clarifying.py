"""Clarifying questions at the terminal (the CLI's `--clarify`).

The questions are shown numbered and the person answers `a` (answer each question in turn;
an empty line leaves one unanswered), `s` (skip: research the question as asked) or `f`
(finish: stop now, no report). When the input ends before an answer (stdin closed, nobody
there, or a line past 64 KB: input is read a bounded line at a time), `ask_clarify` returns
None: the run stays waiting and can be answered later with
`deepresearch resume THREAD_ID --answer JSON`.
"""

from __future__ import annotations

import sys

from deepresearch.files import read_line


def ask_clarify(value: dict, *, stdin=None, stderr=None) -> dict | None:
    """Show the clarifying questions and return the resume value, or None at end of input."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    questions = list(value.get("questions") or [])
    print(f"\nClarifying questions (round {value.get('round')}/{value.get('max_rounds')}):", file=stderr)
    if value.get("error"):
        print(f"  last answer not used: {value['error']}", file=stderr)
    for i, q in enumerate(questions, 1):
        print(f"  {i}. {q}", file=stderr)
    while True:
        print(
            "[a]nswer, [s]kip (research the question as asked), [f]inish (stop, no report): ",
            end="",
            file=stderr,
            flush=True,
        )
        line = read_line(stdin)
        if not line:  # end of input: nobody is there to answer; leave the run waiting
            print("", file=stderr)
            return None
        choice = line.strip().lower()
        if choice in ("s", "skip"):
            return {"action": "skip"}
        if choice in ("f", "finish"):
            return {"action": "finish"}
        if choice in ("a", "answer", ""):
            answers = []
            for i, q in enumerate(questions, 1):
                print(f"{i}. {q}\n   > ", end="", file=stderr, flush=True)
                line = read_line(stdin)
                if not line:
                    print("", file=stderr)
                    return None
                answers.append(line.strip())
            if any(answers):
                return {"action": "answer", "answers": answers}
            print("  no answer given; answer at least one question, or skip", file=stderr)
