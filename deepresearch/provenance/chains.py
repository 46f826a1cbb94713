"""Provenance: for every sentence of the report, the chain that produced it.

    question (and brief) -> concept or gap (a bridge concept: the sentence that named it)
      -> search (backend, query, round, section) -> source (id, title, URL)
      -> passage (the span the tracer matched, its score and verdict) -> sentence

`build(state)` works from what the run kept (no model call): the report, its sources and the
tracer's citation records, the retrieved sources (each records the query, round, gap and
deep section that found it: nodes/execute_tools.py), the question's concepts. It returns

    {"question", "brief", "sentences": [{index, text, section, citations, chains: [[step, ...], ...],
                                         same_as?: the index of the same sentence earlier (no chains of its own)}],
     "concepts": [{name, origin, covered, sources, sentence?}],
     "searches": [{backend, query, round, gap, section?, sources, cited}],
     "uncited": [{title, url, backend, query, why}]}

where each step is {"step": "question" | "concept" | "gap" | "search" | "source" | "passage"
| "sentence", ...}. A source a deep section used that another section retrieved (the
dependent style hands a section its dependencies' sources) names that section in the source
step's `borrowed_from`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from deepresearch.research.coverage import content_overlap, covers
from deepresearch.store import full_text
from deepresearch.text.citations import CITE, HEADING, UNVERIFIED, cited_numbers, support
from deepresearch.text.sentences import content_words, split_sentences
from deepresearch.text.urls import normalize_url

_FIGURE = re.compile(r"^\s*(?:!\[|\*Figure \d+:)")


def _plain(sentence: str) -> str:
    text = " ".join(CITE.sub("", sentence).replace(UNVERIFIED, "").split())
    return re.sub(r"\s+([.!?,;:])", r"\1", text)


def report_sentences(report: str) -> list[dict]:
    """The report's sentences (its body, before `## Sources`; headings and figures left out),
    each with the section it is in."""
    out, section = [], ""
    for line in report.split("\n## Sources", 1)[0].split("\n"):
        if HEADING.match(line):
            section = line.lstrip("#").strip()
            continue
        if not line.strip() or _FIGURE.match(line) or line.strip().startswith("_"):
            continue
        for s in split_sentences(line.strip()):
            if _plain(s):
                out.append({"text": s.strip(), "section": section})
    return out


PASSAGE_CHARS = 240  # the passage as kept: its first words (a flood of citations stays small)


def _cap(text: str, limit: int = 200) -> str:
    """`text` cut at a word boundary to at most `limit` characters (still a span of the original)."""
    text = str(text or "")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def _concept_step(concept: dict) -> dict:
    step = {"step": "concept", "name": concept.get("name", ""), "origin": concept.get("origin", "")}
    if concept.get("origin") == "bridge" and concept.get("sentence"):
        step["named_by"] = _cap(concept["sentence"], 300)
    return step


@functools.lru_cache(maxsize=4096)
def _snippet_words(snippet: str) -> frozenset:
    """A snippet's content words, once per snippet (each uncited source is compared with every
    cited one)."""
    return frozenset(content_words(snippet))


def _marks(cited: list[dict]) -> list[tuple[str, frozenset]]:
    """What an uncited source is compared with, worked out once per cited source: its title (as
    compared) and its snippet's content words."""
    return [((c.get("title") or "").strip().lower(), _snippet_words(c.get("snippet", ""))) for c in cited]


def _why_uncited(source: dict, cited: list[tuple[str, frozenset]], concepts: list[dict], question: str) -> str:
    """Why `source` is not cited, given the cited sources' `_marks`."""
    title = (source.get("title") or "").strip().lower()
    words = _snippet_words(source.get("snippet", ""))
    for other_title, other in cited:
        if title and title == other_title:
            return "duplicate"
        if words and len(words & other) >= 0.8 * len(words):
            return "duplicate"
    on_topic = any(covers(c, source) for c in concepts) or content_overlap(
        question, f"{source.get('title', '')} {source.get('snippet', '')}"
    )
    return "over the cap" if on_topic else "off-topic"


def build(state: Mapping[str, Any]) -> dict[str, Any]:
    question = state.get("question", "")
    brief = state.get("brief") or ""
    concepts = list(state.get("concepts") or [])
    covered = set(state.get("covered") or [])
    evidence = list(state.get("evidence") or [])
    by_url = {normalize_url(s["url"]): s for s in evidence}
    sources = {int(s["id"]): s for s in state.get("sources") or []}
    records: dict[tuple[str, int], dict] = {}
    for c in state.get("citations") or []:
        records.setdefault((_plain(c.get("sentence", "")), int(c.get("source_id", 0))), c)

    def origin(n: int) -> dict | None:
        s = sources.get(n)
        return by_url.get(normalize_url(s["url"])) if s else None

    def concept_for(src: dict) -> dict | None:
        query = (src.get("query") or "").lower()
        for c in concepts:  # the concept whose search found it
            if c.get("query") and c["query"].lower() == query:
                return c
        return next((c for c in concepts if covers(c, src)), None)

    sentences: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, tuple[int, ...]], int] = {}
    for i, item in enumerate(report_sentences(state.get("report", "")), 1):
        plain = _plain(item["text"])
        numbers = list(dict.fromkeys(cited_numbers(item["text"])))
        again = seen.setdefault((plain, item["section"], tuple(numbers)), i)
        if again != i:  # the same sentence again (a flood repeats itself): its chains are the first one's
            sentences.append(
                {
                    "index": i,
                    "text": plain,
                    "section": item["section"],
                    "citations": numbers,
                    "same_as": again,
                    "chains": [],
                }
            )
            continue
        chains = []
        for n in dict.fromkeys(cited_numbers(item["text"])):
            shown, src = sources.get(n), origin(n)
            if shown is None:
                continue
            rec = records.get((plain, n))
            if rec is None:  # an edited sentence the tracer has no record of: score it now
                score, span = support(plain, full_text(src) if src else "")
                rec = {"score": score, "span": span, "verdict": "unscored"}
            chain: list[dict[str, Any]] = [
                {"step": "question"}
            ]  # its text (and the brief) once, at the top of the record
            src = src or {}
            concept = concept_for(src) if src else None
            if concept:
                chain.append(_concept_step(concept))
            elif src.get("gap") and src["gap"] != question:
                chain.append({"step": "gap", "text": _cap(src["gap"])})
            chain.append(
                {
                    "step": "search",
                    "backend": src.get("backend") or shown.get("backend") or "",
                    "query": _cap(src.get("query", "")),
                    "round": src.get("round"),
                    **({"section": src["section"]} if src.get("section") else {}),
                }
            )
            step: dict[str, Any] = {
                "step": "source",
                "id": n,
                "title": _cap(shown.get("title", "")),
                "url": shown.get("url", ""),
            }
            if (
                src.get("section")
                and item["section"]
                and item["section"] not in (src.get("found_by") or [src["section"]])
            ):
                step["borrowed_from"] = src["section"]
            chain.append(step)
            chain.append(
                {
                    "step": "passage",
                    "text": _cap(rec.get("span", ""), PASSAGE_CHARS),
                    "score": rec.get("score"),
                    "verdict": rec.get("verdict"),
                }
            )
            chain.append({"step": "sentence", "index": i})  # its text: the sentence record's
            chains.append(chain)
        sentences.append(
            {"index": i, "text": plain, "section": item["section"], "citations": numbers, "chains": chains}
        )

    origins = {n: o for n in sources if (o := origin(n))}
    cited_keys = {o["key"] for o in origins.values()}
    number_of = {o["key"]: n for n, o in origins.items()}
    searches: dict[tuple, dict] = {}
    for s in evidence:
        key = (s.get("section") or "", s.get("round"), s.get("backend") or "", s.get("query") or "")
        entry = searches.setdefault(
            key,
            {
                "backend": key[2],
                "query": key[3],
                "round": key[1],
                "gap": s.get("gap", ""),
                **({"section": key[0]} if key[0] else {}),
                "sources": [],
                "cited": False,
            },
        )
        entry["sources"].append(number_of.get(s["key"], f"uncited:{s['key']}"))
        entry["cited"] = entry["cited"] or s["key"] in cited_keys
    cited_marks = _marks([s for s in evidence if s["key"] in cited_keys])
    return {
        "question": question,
        "brief": brief,
        "sentences": sentences,
        "concepts": [
            {
                "name": c.get("name", ""),
                "origin": c.get("origin", ""),
                "covered": c.get("name") in covered if covered else any(covers(c, s) for s in evidence),
                "sources": [number_of[s["key"]] for s in evidence if s["key"] in number_of and covers(c, s)],
                **({"sentence": c["sentence"]} if c.get("origin") == "bridge" and c.get("sentence") else {}),
            }
            for c in concepts
        ],
        "searches": list(searches.values()),
        "uncited": [
            {
                "title": s.get("title", ""),
                "url": s.get("url", ""),
                "backend": s.get("backend", ""),
                "query": s.get("query", ""),
                "why": _why_uncited(s, cited_marks, concepts, question),
            }
            for s in evidence
            if s["key"] not in cited_keys
        ],
    }
