"""Outline review at the terminal (the CLI's `--review`).

The outline is shown as text:

    # Report title
    - Section title :: the key question of the section
    - Another section :: its key question (after: Section title)

(`(after: A; B)`: a dependent outline's section that builds on sections A and B.)

and the person answers `a` (accept), `c` (comment: the planner revises), or `e` (edit the
outline, in $EDITOR when set, else typed in ending with an empty line). When the input ends
before an answer (stdin closed, nobody there, or a line past 64 KB: input is read a bounded
line at a time), `ask` returns None: the run stays waiting and can be answered later with
`deepresearch resume THREAD_ID --answer JSON`. An outline typed in is at most 1 MB.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile

from deepresearch.files import read_line, read_text
from deepresearch.sections.dependencies import needed_titles
from deepresearch.text.safe import echoed

MAX_OUTLINE_BYTES = 1_000_000
_AFTER = re.compile(r"\s*\(after:\s*([^()]*)\)\s*$")


def outline_to_text(outline: dict) -> str:
    sections = outline.get("sections", [])

    def after(s: dict) -> str:
        names = needed_titles(sections, s)
        return f" (after: {'; '.join(names)})" if names else ""

    lines = [f"# {outline.get('title', '')}"]
    lines += [f"- {s['title']} :: {s.get('key_question', '')}{after(s)}" for s in sections]
    return "\n".join(lines) + "\n"


def text_to_outline(text: str) -> dict:
    """Parse the text form; raises ValueError saying what is wrong."""
    title, sections = "", []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("#"):
            title = line.lstrip("#").strip()
        elif line.startswith(("-", "*")):
            body = line[1:].strip()
            needs = None
            if m := _AFTER.search(body):
                body, needs = body[: m.start()], [x.strip() for x in m.group(1).split(";") if x.strip()]
            name, _, question = body.partition("::")
            if not name.strip():
                raise ValueError(f"a section needs a title: {echoed(raw)}")
            sections.append(
                {"title": name.strip(), "key_question": (question or name).strip()}
                | ({"depends_on": needs} if needs is not None else {})
            )
        else:
            raise ValueError(f"lines start with '# ' (title) or '- ' (section): {echoed(raw)}")
    if not title:
        raise ValueError("the outline needs a '# title' line")
    if not sections:
        raise ValueError("the outline needs at least one '- section :: question' line")
    return {"title": title, "sections": sections}


def _edit(text: str, editor: str) -> str:
    with tempfile.NamedTemporaryFile("w+", suffix=".md", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        subprocess.run([*shlex.split(editor), path], check=True)
        return read_text(path, MAX_OUTLINE_BYTES)  # FileReadError (an OSError): shown, asked again
    finally:
        os.unlink(path)


def ask(value: dict, *, stdin=None, stderr=None) -> dict | None:
    """Show the review request and return the person's answer as a resume value, or None
    when the input ends before an answer (the review is left waiting)."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    print(f"\nOutline (review round {value.get('round')}/{value.get('max_rounds')}):", file=stderr)
    if value.get("error"):
        print(f"  last answer not used: {value['error']}", file=stderr)
    if value.get("layers"):
        order = " -> ".join(
            " + ".join(value["outline"]["sections"][i]["title"] for i in layer) for layer in value["layers"]
        )
        print(f"  researched in layers: {order}", file=stderr)
    print(outline_to_text(value["outline"]), file=stderr)
    while True:
        print("[a]ccept, [c]omment (the planner revises), [e]dit the outline: ", end="", file=stderr, flush=True)
        line = read_line(stdin)
        if not line:  # end of input: nobody is there to answer; leave the review waiting
            print("", file=stderr)
            return None
        choice = line.strip().lower()
        if choice in ("a", "accept", "y", "yes", ""):
            return {"action": "accept"}
        if choice.startswith("c"):
            rest = line.strip()[1:]
            comment = (rest[6:] if rest.lower().startswith("omment") else rest).strip(" :")
            if not comment:
                print("Your comment: ", end="", file=stderr, flush=True)
                line = read_line(stdin)
                if not line:
                    print("", file=stderr)
                    return None
                comment = line.strip()
            if comment:
                return {"action": "revise", "comment": comment}
        elif choice.startswith("e"):
            editor = os.environ.get("EDITOR") or os.environ.get("VISUAL")
            try:
                if editor and stdin.isatty():
                    text = _edit(outline_to_text(value["outline"]), editor)
                else:
                    print(
                        "Type the outline ('# title', then '- section :: question' lines), end with an empty line:",
                        file=stderr,
                    )
                    rows, size = [], 0
                    while (row := read_line(stdin)).strip():
                        rows.append(row)
                        size += len(row)
                        if size > MAX_OUTLINE_BYTES:
                            raise ValueError(f"an outline is at most {MAX_OUTLINE_BYTES:,} characters")
                    text = "".join(rows)
                return {"action": "replace", "outline": text_to_outline(text)}
            except (ValueError, OSError, subprocess.CalledProcessError) as e:
                print(f"  not used: {e}", file=stderr)
