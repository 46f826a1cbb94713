"""Responders and drivers for the tests of clarify, templates, language)."""

from __future__ import annotations

import re
import threading

from tests.deep_helpers import deep_responder
from tests.fakes import researcher, sources_in


def clarifier(rounds, base=None):
    """A responder whose Clarification replies are `rounds` (one per call, the last repeated):
    a list of questions (unclear), [] (clear), or an Exception (the call fails). Everything
    else is answered by `base` (the iterative researcher by default)."""
    base = base or researcher(complete_after=1)
    state = {"n": 0}
    lock = threading.Lock()

    def respond(kind, prompt, n):
        if kind == "Clarification":
            with lock:
                i = state["n"]
                state["n"] += 1
            out = rounds[min(i, len(rounds) - 1)]
            if isinstance(out, BaseException):
                return out
            return {"clear": not out, "questions": list(out)}
        return base(kind, prompt, n)

    return respond


def deep_clarifier(rounds, sections=2, **kwargs):
    return clarifier(rounds, deep_responder(sections, **kwargs))


def prompts(model, kind):
    return [c["prompt"] for c in model.calls if c["kind"] == kind]


def sentences(prompt, i, k=3):
    """The first `k` sentences of source `i`'s block in a prompt."""
    m = re.search(rf'<source id="{i}"[^>]*>\n(.*?)</source>', prompt, re.DOTALL)
    text = " ".join((m.group(1) if m else "").split())
    return [s.rstrip(".!? ") for s in re.split(r"(?<=[.!?])\s", text)[:k] if len(s) > 20]


def long_writer(base):
    """`base`, with section writers that state several sentences of every source, cited (so
    sections are long enough for the proofreader to polish)."""

    def respond(kind, prompt, n):
        if kind == "text" and "Write the section body" in prompt:
            return " ".join(f"{s} [{i}]." for i in sources_in(prompt) for s in sentences(prompt, i)) or "Nothing."
        return base(kind, prompt, n)

    return respond
