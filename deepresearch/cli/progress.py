"""Progress display for the CLI: a live status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import os
import sys
import time

from rich.console import Console, RenderableType
from rich.progress_bar import ProgressBar
from rich.status import Status
from rich.table import Table
from rich.text import Text

from deepresearch.text.safe import one_line


def describe_event(e: dict) -> str:
    """One line for an event. Its fields may come from a source or a model (a title, a query):
    control characters (newlines, terminal escapes) never reach the terminal."""
    return one_line(_describe(e) + _cost(e), 400)


def _cost(e: dict) -> str:
    """What the run has cost so far, on the lines of events that carry its usage (a model with
    a price: nothing for the embedded model, nothing for a model whose price is not known)."""
    usage = e.get("usage")
    cost = (usage.get("cost_usd") or 0) if isinstance(usage, dict) else 0
    return f" · ${cost:.4f}" if cost > 0 else ""


def _describe(e: dict) -> str:
    t = e.get("type")
    sec = f"[section {e['section'] + 1}] " if isinstance(e.get("section"), int) else ""
    if t == "clarify":
        if e.get("status") == "not_asked":
            return f"no clarifying questions: {e.get('note', e.get('reason'))}"
        if e.get("status") == "asking":
            return f"{len(e.get('questions') or [])} clarifying question(s), round {e.get('round')}"
        return f"clarifying questions {e.get('status')}"
    if t == "started":
        return f"{sec}started: {e.get('question', '')[:80]}"
    if t == "concepts":
        return f"{sec}concepts: {', '.join(e.get('concepts', []))[:100] or '(none found)'}"
    if t == "grounding":
        return f"{sec}dropped {e.get('dropped')} sentence(s) no retrieved source supports"
    if t == "searching":
        return f"{sec}searching ({e.get('tool')}): {e.get('query', '')[:80]}"
    if t == "search_complete":
        return f"{sec}found {e.get('results')} result(s) for: {e.get('query', '')[:60]}"
    if t == "indexing" and e.get("status") == "reading":
        return f"reading {e.get('index')}: {e.get('files')}/{e.get('of')} files, {e.get('pages')} pages"
    if t == "indexing" and e.get("status") == "encoding":
        return f"encoding {e.get('index')}: {e.get('done')}/{e.get('items')} texts"
    if t == "indexing" and e.get("status") == "building":
        return f"building {e.get('index')} ({e.get('items')} texts): once, later runs reuse them"
    if t == "indexing":
        return f"built {e.get('index')}: {e.get('items')} texts in {e.get('seconds')} s"
    if t == "judging":
        return f"{sec}judging what is still missing (iteration {e.get('iteration')})"
    if t == "looping":
        return f"{sec}gaps: {'; '.join(e.get('gaps', []))[:100]}"
    if t == "writing":
        return f"{sec}writing from {e.get('sources')} source(s)"
    if t == "budget":
        return f"{sec}budget reached: {e.get('reason')}"
    if t == "model_mode" and e.get("mode") == "cap ignored":
        return f"{e.get('model')}: {e.get('note')}"
    if t == "model_mode":
        return f"structured outputs of {e.get('model')}: {e.get('mode')}" + (f" ({e['note']})" if e.get("note") else "")
    if t == "error" and e.get("warning"):  # something left out, the run going on (an unreadable file)
        return f"{sec}warning ({e.get('tool')}): {e.get('cause')}"
    if t == "error":
        return f"{sec}error in {e.get('node')}: {e.get('cause')}"
    if t == "planning":
        return "planning the outline" + (f" (revising: {e['comment'][:60]})" if e.get("comment") else "")
    if t == "outline":
        titles = ", ".join(s["title"] for s in e.get("outline", {}).get("sections", []))
        layers = " -> ".join("+".join(str(i + 1) for i in layer) for layer in e.get("layers") or [])
        return (
            f"outline: {titles}"
            + (f"; layers {layers}" if layers else "")
            + (f" ({e['note']})" if e.get("note") else "")
        )
    if t == "section_started":
        after = ", ".join(str(d + 1) for d in e.get("depends_on") or [])
        return f"section {e.get('index', 0) + 1} started: {e.get('title')}" + (f" (builds on {after})" if after else "")
    if t == "section_researched":
        return f"section {e.get('index', 0) + 1} researched: {e.get('title')}"
    if t == "dependency_dropped":
        return f"dependency dropped: {e.get('note')}"
    if t == "section_complete":
        extra = f" ({e.get('reason')})" if e.get("status") == "failed" else f" ({e.get('stopped_by')})"
        return f"section {e.get('index', 0) + 1} {e.get('status')}: {e.get('title')}{extra}"
    if t == "synthesizing":
        return f"synthesizing {e.get('sections')} section(s)"
    if t == "verifying":
        return "checking citations"
    if t == "chart":
        if e.get("skipped"):
            return f"charts: none drawn ({e['skipped']})"
        if e.get("dropped") is not None:
            return f"charts: dropped {e['dropped']} point(s) whose value or label is not in the cited source"
        return (
            f"chart drawn: {e.get('title')} ({e.get('kind')}, {e.get('points')} points, "
            f"{e.get('iterations')} revision(s))"
        )
    if t == "edit":
        if e.get("status") == "started":
            return f"editing: {e.get('action')}"
        if e.get("status") in ("invalid", "refused"):
            return f"edit {e.get('status')}: {e.get('reason')}"
        return f"edit {e.get('action')} done"
    if t == "complete":
        return f"done ({e.get('stopped_by')}): {e.get('sources')} source(s) cited"
    return str(e)


def counted(e: dict) -> tuple[int, int] | None:
    """(done, total) of an event that counts its way to a total: a docs folder's files read, its
    texts encoded. The live display draws it as a bar."""
    if e.get("type") != "indexing":
        return None
    done, total = {"reading": ("files", "of"), "encoding": ("done", "items")}.get(e.get("status") or "", ("", ""))
    if isinstance(e.get(done), int) and isinstance(e.get(total), int) and e[total] > 0:
        return e[done], e[total]
    return None


def shown(line: str, event: dict) -> RenderableType:
    """What the live status shows for `event`: its line, and a bar when it counts to a total."""
    count = counted(event)
    if count is None:
        return Text(line)  # as it is: a title's brackets are no markup
    row = Table.grid(padding=(0, 1))
    row.add_row(
        ProgressBar(total=count[1], completed=count[0], width=24), Text(line, overflow="ellipsis", no_wrap=True)
    )
    return row


class Progress:
    """Render events on stderr. Quiet mode shows only notices (the one line that says how to
    resume the run, or what `resume` does): no events, no other messages."""

    def __init__(self, quiet: bool = False, stream=None):
        self.stream = stream or sys.stderr or open(os.devnull, "w")  # noqa: SIM115 - stderr closed
        self.quiet = quiet
        self.start = time.monotonic()
        self.live = self.stream.isatty() and not quiet
        self.console = Console(file=self.stream, stderr=True)
        self._status: Status | None = None

    def __enter__(self):
        if self.live:
            self._status = self.console.status("starting…")
            self._status.__enter__()
        return self

    def __exit__(self, *exc):
        if self._status is not None:
            self._status.__exit__(*exc)
            self._status = None

    def message(self, text: str) -> None:
        if not self.quiet:
            self.notice(text)

    def notice(self, text: str) -> None:
        """A line shown even in quiet mode."""
        text = one_line(text, 2000)
        if self.live:
            self.console.print(text, highlight=False, markup=False)
        else:
            print(text, file=self.stream, flush=True)

    def __call__(self, event: dict) -> None:
        if self.quiet:
            return
        line = f"[{time.monotonic() - self.start:6.1f}s] {describe_event(event)}"
        if self.live and self._status is not None:
            if event.get("type") in ("error", "budget", "outline", "section_complete", "complete"):
                self.console.print(line, highlight=False, markup=False)
            self._status.update(shown(line, event))
        else:
            print(line, file=self.stream, flush=True)

    def pause(self):
        """Stop the live line while the person answers a prompt."""
        if self._status is not None:
            self._status.stop()

    def resume(self):
        if self._status is not None:
            self._status.start()
