"""A finished run's report as safe HTML, for the web page and the HTML export.

Everything in a report came from a model or a source, so it is data: the body is rendered
from its Markdown with links, images, autolinks and raw HTML switched off (they show as
text), every text escaped, `[n]` citations turned into anchors to the Sources list, and the
tracer's `^unverified^` into a mark with its explanation. The Sources list is built from the
run's `sources`, not from the report's text: a source's title is text, and only an http(s) URL with a host becomes a link (`rel="noopener noreferrer
nofollow"`). Charts (node `charts`) become inline SVG drawn here from their numbers;
provenance is shown as a readable list (deepresearch/web/provenance.py). Nothing rendered
here can run a script.

On the page (`view`) the report is shown in the run's citation style (APA and the others: each
in-text citation a link to its sources' checks), each block of the body carries the lines of
the report's Markdown it came from (`data-lines`, so an edit finds the selected words where
they are), a sentence that cites nothing is marked, and every citation link is named for its
source.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from deepresearch.report.citation_style import delivered, styled_parts
from deepresearch.report.documents import locator_text
from deepresearch.text.citations import CITE, HEADING, SOURCES_HEADING, UNVERIFIED
from deepresearch.text.safe import one_line, render_reference, title_line, web_url
from deepresearch.text.sentences import split_sentences
from deepresearch.web.charts import chart_points, charts_html  # noqa: F401 - chart_points: the exports'
from deepresearch.web.panel import sources_panel, where_html
from deepresearch.web.provenance import provenance_html

# the tracer's mark after a citation its source does not clearly support, as the page shows it
UNVERIFIED_MARK = (
    '<mark class="unverified" title="The cited source does not clearly support this sentence.">unverified</mark>'
)
UNCITED_MARK = '<mark class="uncited" title="This sentence cites no source."></mark>'
CITE_HTML = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]")
ENTRY = re.compile(r"^\s*\[\d{1,4}\]\s")
# markers the page's rendering puts in the Markdown (private-use characters, removed from the
# report first): a citation in a style, `\ue000ids\ue001text\ue002`, and a sentence citing nothing
STYLED_OPEN, STYLED_MID, STYLED_CLOSE, UNCITED = "\ue000", "\ue001", "\ue002", "\ue003"
_MARKERS = dict.fromkeys(map(ord, STYLED_OPEN + STYLED_MID + STYLED_CLOSE + UNCITED))
_STYLED = re.compile("\ue000([\\d,]+)\ue001(.*?)\ue002")
BLOCKS = ("paragraph_open", "heading_open", "list_item_open", "tr_open")  # what a selection is found in


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    md.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"])

    def text(self, tokens, idx, options, env):
        escaped = html.escape(tokens[idx].content, quote=True)
        titles = (env or {}).get("titles") or {}
        out = _STYLED.sub(lambda m: _styled_anchor(m, titles), escaped)
        out = CITE_HTML.sub(lambda m: _cite_anchor(m, titles), out)
        return out.replace(UNVERIFIED, UNVERIFIED_MARK).replace(UNCITED, UNCITED_MARK)

    md.add_render_rule("text", text)
    return md


def _named(n: int, titles: dict) -> str:
    return html.escape(f"source {n}: {titles[n]}" if titles.get(n) else f"source {n}", quote=True)


def _cite_anchor(m: re.Match, titles: dict | None = None) -> str:
    ids = [int(n) for n in re.split(r"\s*[,;]\s*", m.group(1))]
    links = ", ".join(
        f'<a class="cite" href="#src-{n}" data-source="{n}" aria-label="{_named(n, titles or {})}">{n}</a>' for n in ids
    )
    return f'<sup class="cites">[{links}]</sup>'


def _styled_anchor(m: re.Match, titles: dict) -> str:
    """A citation in a style (APA's "(Moreau &amp; Okafor, 2024)"): one link to its sources' checks."""
    ids = [int(n) for n in m.group(1).split(",") if n]
    name = "; ".join(_named(n, titles) for n in ids)
    return (
        f'<a class="cite styled" href="#src-{ids[0]}" data-source="{ids[0]}" data-sources="{m.group(1)}" '
        f'aria-label="{name}">{m.group(2)}</a>'
    )


_MD = _markdown()


def _with_lines(tokens) -> None:
    """Each block says which lines of the Markdown it came from (`data-lines="first-end"`)."""
    for t in tokens:
        if t.type in BLOCKS and t.map:
            t.attrSet("data-lines", f"{t.map[0]}-{t.map[1]}")


def page_html(text: str, titles: dict[int, str] | None = None, lines: bool = False) -> str:
    """Markdown from a model or a source as the page shows it: `markdown_html`, with citation
    links named for their sources and, with `lines`, each block's lines of the Markdown."""
    env = {"titles": titles or {}}
    tokens = _MD.parse(text or "", env)
    if lines:
        _with_lines(tokens)
    return _MD.renderer.render(tokens, _MD.options, env)


def mark_uncited(body: str) -> str:
    """The body with a marker after each sentence of its prose that cites no source (headings,
    notes, tables, code and figures left as they are; the lines stay where they are)."""
    out, fenced = [], False
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        if (
            fenced
            or not stripped
            or HEADING.match(line)
            or stripped.startswith((">", "|", "_", "!", "*Figure", "```", "~~~"))
        ):
            out.append(line)
            continue
        at, marked = 0, []
        for sentence in split_sentences(line):
            i = line.find(sentence, at)
            if i < 0:
                break
            end = i + len(sentence.rstrip())
            marked.append(line[at:end])
            if not CITE.search(sentence) and UNVERIFIED not in sentence and re.search(r"[^\W\d_]{2}", sentence):
                marked.append(UNCITED)
            at = end
        out.append("".join(marked) + line[at:])
    return "\n".join(out)


def split_report(report: str) -> tuple[str, list[str]]:
    """(body, the lines after the Sources list: the unverified note and the verification line)."""
    found = list(SOURCES_HEADING.finditer(report or ""))
    if not found:
        return report or "", []
    last = found[-1]
    tail = [
        line
        for line in report[last.end() :].splitlines()
        if line.strip() and not ENTRY.match(line) and line.strip() != "(no sources cited)"
    ]
    return report[: last.start()].rstrip(), tail


def markdown_html(text: str) -> str:
    """Markdown from a model or a source, as HTML with no link, image or tag of its own."""
    return _MD.render(text or "")


def title_text(title, limit: int = 300) -> str:
    """A source's title as the report's Sources list shows it (safe_text.title_line: one line
    of plain words; the caller escapes it for its format)."""
    return title_line(title or "", limit) or "(untitled)"


def source_item(s: dict) -> str:
    sid = int(s.get("id", 0) or 0)
    title = html.escape(title_text(s.get("title")))
    return f'<li id="src-{sid}" value="{sid}"><span class="title">{title}</span> — {where_html(s)}</li>'


def sources_html(sources: list[dict]) -> str:
    items = "".join(source_item(s) for s in sources or [] if isinstance(s, dict))
    return f'<h2 id="sources">Sources</h2><ol class="sources">{items or "<li>(no sources cited)</li>"}</ol>'


def _cited_title(source: dict) -> str:
    """A cited source's title, and for a document's page or section where it is (`, p. 12`):
    the citation's passage (its `span`) is from that page's text."""
    where = locator_text(source.get("meta")) if str(source.get("url") or "").lower().startswith("file:") else ""
    return title_text(source.get("title")) + (f", {one_line(where, 160)}" if where else "")


def view(values: dict) -> dict:
    """What the page shows of a finished run: the HTML (in the run's citation style) and, for the
    citation popovers, each citation's source, passage and verdict; the report as delivered
    (for copying) and in its numbered form (what edits are made on); the last edit in words.
    All of it data: the page sets every field but `html` as text."""
    sources = {int(s["id"]): s for s in values.get("sources") or [] if isinstance(s, dict) and "id" in s}
    titles = {k: title_text(v.get("title")) for k, v in sources.items()}
    cites = []
    for c in values.get("citations") or []:
        if not isinstance(c, dict):
            continue
        sid = c.get("source_id")
        s = sources.get(sid) if isinstance(sid, int) else None
        cites.append(
            {
                "source_id": c.get("source_id"),
                "sentence": str(c.get("sentence", "")),
                "verdict": str(c.get("verdict", "")),
                "score": c.get("score"),
                "passage": str(c.get("span", "")),
                "title": _cited_title(s or {}),
            }
        )
    html_, markdown = page_report(values, titles)
    return {
        "html": html_,
        "citations": cites,
        "markdown": markdown,
        "sources": [{"id": k, "title": t} for k, t in titles.items()],
        "report": values.get("report") or "",
        "last_change": last_change(values, titles),
        "panel": sources_panel(values),
    }


STANDALONE_CSS = """
body{font-family:Georgia,serif;max-width:46em;margin:2em auto;padding:0 1em;line-height:1.5;color:#222}
sup.cites a{text-decoration:none} ol.sources li{margin:.3em 0} .verification{color:#555;font-style:italic}
mark.unverified{background:#fde8c8;font-size:.8em;padding:0 .2em;border-radius:3px} figure.chart{margin:1em 0} pre{white-space:pre-wrap} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:.2em .5em}
"""


def standalone_html(values: dict, title: str | None = None) -> str:
    """A whole HTML document of the report (no script; a policy that forbids any)."""
    title = html.escape(one_line(title or values.get("question") or "Research report", 200))
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>{title}</title><style>{STANDALONE_CSS}</style></head><body>{styled_report_html(values)}</body></html>\n"
    )


def styled_report_html(values: dict) -> str:
    """The report of a run's output `values` as an HTML fragment in the run's citation style: body,
    charts, Sources, the verification line, provenance (the HTML export)."""
    sources = {int(s["id"]): s for s in values.get("sources") or [] if isinstance(s, dict) and "id" in s}
    return page_report(values, {k: title_text(v.get("title")) for k, v in sources.items()}, page=False)[0]


# --- the report as the page shows it -------------------------------------------------------

# the edits in words (the graph's action names are identifiers)
LABELS = {
    "expand": "expand",
    "shorten": "shorten",
    "polish": "polish",
    "fact_check": "fact check",
    "supplementary_search": "search more",
    "sync": "your own edit",
    "finish": "finish editing",
}


def _styled_sources(entries: list[tuple[str, str, str]], sources: list[dict]) -> str:
    """The Sources list in a style: each entry as the style writes it, then where the source is."""
    by_id = {str(s.get("id")): s for s in sources if isinstance(s, dict)}
    items = []
    for key, label, text in entries:
        where = where_html(by_id.get(key) or {})
        entry = page_html(text).strip().removeprefix("<p>").removesuffix("</p>")
        items.append(
            f'<li id="src-{html.escape(key, quote=True)}">{html.escape(label + " ") if label else ""}'
            f'<span class="title">{entry}</span> — {where}</li>'
        )
    return f'<h2 id="sources">Sources</h2><ul class="sources">{"".join(items) or "<li>(no sources cited)</li>"}</ul>'


def page_report(values: dict, titles: dict[int, str], page: bool = True) -> tuple[str, str]:
    """(the report's HTML for the page, the report's Markdown as delivered, for copying).
    `page=False`: without the page's lines and uncited marks (the HTML export)."""
    report = (values.get("report") or "").translate(_MARKERS)
    sources = [s for s in values.get("sources") or [] if isinstance(s, dict)]
    body, tail = split_report(report)
    marked = (mark_uncited(body) if page else body) + report[len(body) :]
    parts = styled_parts(
        marked,
        sources,
        values.get("citation_style"),
        mark=lambda ids, text: f"{STYLED_OPEN}{','.join(ids)}{STYLED_MID}{text}{STYLED_CLOSE}",
    )
    if parts:
        body, entries, tail = parts
        listed = _styled_sources(entries, sources)
    else:
        body, listed = split_report(marked)[0], sources_html(sources)
    out = [
        f'<article class="report-body">{page_html(body, titles, lines=page)}</article>',
        charts_html(values.get("charts")),
        listed,
    ]
    if tail:
        out.append(f'<div class="verification">{markdown_html(chr(10).join(tail))}</div>')
    if not page:  # on the page the sources panel beside the report shows it (web/panel.py)
        out.append(provenance_html(values.get("provenance"), sources))
    return "".join(out), delivered({**values, "report": report})


def last_change(values: dict, titles: dict[int, str]) -> dict | None:
    """The last edit in words: what it was, the new text (rendered), and for a fact check each
    claim's verdict with the source and the quote behind it."""
    c = values.get("last_change")
    if not isinstance(c, dict) or not c.get("action"):
        return None
    report = values.get("report") or ""
    out: dict = {"label": LABELS.get(c["action"], str(c["action"]).replace("_", " "))}
    if c.get("fallback"):
        out["fallback"] = str(c["fallback"])
    start, end = c.get("start"), c.get("new_end")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(report):
        out["html"] = page_html(mark_uncited(report[start:end].translate(_MARKERS)), titles)
    elif c["action"] == "sync" and c.get("changed") is False:
        out["fallback"] = "your text was the same as the report's: nothing changed"
    claims = []
    for claim in c.get("claims") or []:
        if not isinstance(claim, dict):
            continue
        src = claim.get("source") if isinstance(claim.get("source"), dict) else None
        where = None
        if src:
            where = f"[{src['id']}] " if isinstance(src.get("id"), int) else ""
            where += title_text(src.get("title"))
            if web_url(str(src.get("url") or "")):
                where += f" — {render_reference(str(src['url']), 'web')}"
        claims.append(
            {
                "claim": str(claim.get("claim", "")),
                "verdict": str(claim.get("verdict", "")),
                "source": where,
                "quote": str(claim.get("quote") or ""),
            }
        )
    if claims:
        out["claims"] = claims
    return out
