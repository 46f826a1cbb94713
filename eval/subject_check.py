"""Every report the evaluation writes is checked for sentences that quote a source under a
subject the source does not give them (deepresearch.report.subjects.changed_subjects: "It can
be typeset from ..." printed as "LaTeX2e font selection can be typeset from ...").

`research` runs a question as deepresearch.runtime.runner.research does, keeping the run's store
so that each cited source's retrieved text can be read after the run, and adds the sentences
found to the result as `changed_subjects`. The runners put their count in each row
(`changed_subjects`) and run.py prints the total: "sentences with a changed subject: N". It
should be 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from deepresearch.report.subjects import changed_subjects
from deepresearch.runtime import runner
from deepresearch.store import TEXTS_NAMESPACE
from deepresearch.text.urls import source_key

LINE = "sentences with a changed subject: {n}"


def texts_of(result: dict, store: BaseStore) -> dict[int, str]:
    """Each cited source's retrieved text, by its number in the report, from the run's store."""
    wanted = {source_key(s["url"]): int(s["id"]) for s in result.get("sources") or [] if s.get("url")}
    out: dict[int, str] = {}
    for ns in store.list_namespaces(prefix=TEXTS_NAMESPACE, limit=100_000):
        for key, n in wanted.items():
            if n in out:
                continue
            item = store.get(ns, key)
            text = (item.value or {}).get("text") if item is not None else None
            if isinstance(text, str):
                out[n] = text
    return out


def changed(result: dict, texts: dict[int, str]) -> list[dict]:
    """The report's sentences that quote a cited source (`texts`: by number) under another subject."""
    return changed_subjects(result.get("report") or "", texts)


def research(question: str, context: dict, mode: str | None = None) -> dict:
    """runner.research, with the result's `changed_subjects` (the check's findings) and
    `subject_texts` (how many cited sources' texts it read: a check that read none found
    nothing by not looking)."""
    store = InMemoryStore()
    result = runner.research(question, context, mode=mode, checkpointer=InMemorySaver(), store=store)
    texts = texts_of(result, store)
    result["changed_subjects"] = changed(result, texts)
    result["subject_texts"] = len(texts)
    return result


def row_fields(result: dict, *, hidden: bool = False) -> dict:
    """What a row keeps: the count, and (for a question that may be shown) the sentences."""
    found = result.get("changed_subjects") or []
    out: dict = {"changed_subjects": len(found)}
    if found and not hidden:
        out["changed_subject_sentences"] = [
            {"sentence": f["sentence"], "source_sentence": f["source_sentence"]} for f in found
        ]
    return out


def total(row_lists: Iterable[list[dict]]) -> int:
    return sum(r.get("changed_subjects", 0) for rows in row_lists for r in rows)


def shown(row_lists: Iterable[list[dict]]) -> list[str]:
    """A line per sentence found in a row that may be shown."""
    return [
        f"changed subject: {f['sentence']!r} (the source: {f['source_sentence']!r})"
        for rows in row_lists
        for r in rows
        for f in r.get("changed_subject_sentences", [])
    ]
