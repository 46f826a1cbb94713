"""The shape of a report, read from its Markdown and its cited sources (issue 71's measures).

A report's own sections are its `##` sections besides the frame around them: the answer paragraph
(`## Answer`, or `## Overview` for a broad question), the comparison, the introduction, the
conclusion and the Sources list. For each report:

sections          its own sections
words, sources    the words of its body (the Sources list aside) and the distinct titles it cites
article sections  sections whose heading is only the title of one cited article ("Lanthanide",
                  "Mercury" for "Mercury (planet)"), where the question does not name that article
shared sentences  sentences (citations, case and spacing aside) that stand in two or more sections
thin sections     sections that cite fewer than two distinct sources
empty sections    sections with no sentence of their own (`empty`)
not found         whether the report says "Not found"

`summarize` gives the medians of sections, words and sources over a set of reports and the counts
of the rest; `table` prints them per run and kind.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from answers import report_body, words
from generate import name

from deepresearch.text.citations import CITE, cited_numbers
from deepresearch.text.sentences import split_sentences
from deepresearch.text.words import fold

FRAME = {"answer", "overview", "sources", "comparison", "introduction", "conclusion"}
ABBREVIATION = re.compile(r"\b(?:No|Op|St|Dr|Mr|Mrs|Ms|Jr|Sr|vs|ca|c|e\.g|i\.e|approx|Vol|pp?)\.$")
WORD = re.compile(r"[^\W_]+")


def _split(line: str) -> list[str]:
    """split_sentences, without splitting after an abbreviation ("Symphony No. 9", "Op. 125")."""
    out: list[str] = []
    for part in split_sentences(line):
        if out and ABBREVIATION.search(out[-1].rstrip()):
            out[-1] = f"{out[-1].rstrip()} {part.strip()}"
        else:
            out.append(part)
    return out


def sentences(text: str) -> list[str]:
    """The text's sentences: not headings, notes (> ...), tables, code or the verification line."""
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if not s or s.startswith(("#", ">", "_Verification", "|", "```")) or s.startswith("^unverified^"):
            continue
        s = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", s)
        out += [x for x in _split(s) if re.search(r"[A-Za-z]{3}", CITE.sub("", x))]
    return out


def body_sentences(report: str) -> list[str]:
    """The report's sentences, the Sources list aside."""
    return sentences(report.split("\n## Sources")[0])


def sections(report: str) -> list[tuple[str, str]]:
    """(heading, body) of each of the report's own sections, in order."""
    parts = re.split(r"^## (.+)$", report_body(report), flags=re.M)
    return [(head.strip(), text) for head, text in zip(parts[1::2], parts[2::2]) if head.strip().lower() not in FRAME]


def empty(section: str) -> bool:
    """A section with no sentence of its own: fewer than five words once citations and the
    report's notes ("> Nothing new here", "> **Gap:**") are set aside ("Venus (Planet) [2]."),
    or the writer's "No sources were found". Numbers are words ("a population of 800,871")."""
    text = "\n".join(line for line in section.split("\n") if not line.lstrip().startswith(">"))
    text = re.sub(r"\[\d+\]", "", text)
    return words(text) < 5 or "No sources were found" in text


def _key(text: str) -> str:
    """Words only, folded: "Mercury  (Planet)." and "mercury planet" are the same key."""
    return " ".join(WORD.findall(fold(text).lower()))


def names(title: str, question: str) -> bool:
    """Whether the question names the article (its title without the qualifier, as whole words)."""
    return f" {_key(name(title))} " in f" {_key(question)} "


def article_sections(heads: list[str], titles: set[str], question: str) -> int:
    """Headings that are only one cited article's title (or its name without the qualifier),
    an article the question does not name."""
    by_key: dict[str, str] = {}
    for t in titles:
        by_key.setdefault(_key(t), t)
        by_key.setdefault(_key(name(t)), t)
    return sum(1 for h in heads if (t := by_key.get(_key(h))) is not None and not names(t, question))


def shared_sentences(bodies: list[str]) -> int:
    """Sentences (citations, case and spacing aside) that stand in two or more sections."""
    where: dict[str, set[int]] = defaultdict(set)
    for i, body in enumerate(bodies):
        for s in sentences(body):
            if key := _key(CITE.sub("", s)):
                where[key].add(i)
    return sum(1 for found in where.values() if len(found) > 1)


def thin(section: str) -> bool:
    """A section whose sentences cite fewer than two distinct sources (its notes aside)."""
    return len({n for s in sentences(section) for n in cited_numbers(s)}) < 2


def shape(result: dict, question: str) -> dict:
    """The measures of one run's report (an empty result, a failed run, measures as an empty report)."""
    report = result.get("report") or ""
    body = report_body(report)
    titles = {s.get("title") for s in result.get("sources") or [] if s.get("title")}
    secs = sections(report)
    bodies = [text for _, text in secs]
    return {
        "sources": len(titles),
        "words": words(body),
        "not_found": "Not found" in body,
        "sections": len(secs),
        "empty_sections": sum(empty(b) for b in bodies),
        "article_sections": article_sections([h for h, _ in secs], titles, question),
        "shared_sentences": shared_sentences(bodies),
        "thin_sections": sum(thin(b) for b in bodies),
    }


def summarize(rows: list[dict]) -> dict:
    """The medians of sections, words and sources, and the counts of the rest, over the rows."""
    out: dict = {"questions": len(rows)}
    for key in ("sections", "words", "sources"):
        out[f"median_{key}"] = statistics.median(r.get(key, 0) for r in rows) if rows else 0
    for key in ("sections", "empty_sections", "article_sections", "shared_sentences", "thin_sections"):
        out[f"{key}_n"] = sum(r.get(key, 0) for r in rows)
    out["not_found_n"] = sum(1 for r in rows if r.get("not_found"))
    out["empty_reports_n"] = sum(1 for r in rows if r.get("empty_sections", 0) > 0)
    return out


def table(rows: list[tuple[str, str, dict]]) -> str:
    """One line per (run, kind, summary)."""
    lines = [
        "| run | kind | reports | median sections / words / sources | sections named after one article "
        "| sentences in two sections | sections with < 2 sources (of all) | reports with Not found "
        "| reports with an empty section |",
        "|" + "---|" * 9,
    ]
    for run, kind, s in rows:
        lines.append(
            f"| {run} | {kind} | {s['questions']} | {s['median_sections']:.0f} / {s['median_words']:.0f} / "
            f"{s['median_sources']:.0f} | {s['article_sections_n']} | {s['shared_sentences_n']} | "
            f"{s['thin_sections_n']} ({s['sections_n']}) | {s['not_found_n']} | {s['empty_reports_n']} |"
        )
    return "\n".join(lines)
