"""Responders and drivers for the tests of issue 12 (clarify, templates, language)."""

from __future__ import annotations

import threading

from tests.deep_helpers import deep_responder
from tests.fakes import researcher


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
