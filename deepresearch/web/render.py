"""A finished run's report as safe HTML, for the web page and the HTML export.

Everything in a report came from a model or a source, so it is data: the body is rendered
from its Markdown with links, images, autolinks and raw HTML switched off (they show as
text), every text escaped, `[n]` citations turned into anchors to the Sources list, and the
tracer's `^unverified^` into a mark with its explanation. The Sources list is built from the
run's `sources`, not from the report's text: a source's title is text, and only an http(s) URL with a host becomes a link (`rel="noopener noreferrer
nofollow"`). Charts (node `charts`) become inline SVG drawn here from their numbers;
provenance is shown as text. Nothing rendered here can run a script.
"""

from __future__ import annotations

import html
import json
import math
import re

from markdown_it import MarkdownIt

from deepresearch.text.citations import SOURCES_HEADING, UNVERIFIED
from deepresearch.report.documents import locator_text, reference_text
from deepresearch.text.safe import one_line, render_reference, title_line, web_url

# the tracer's mark after a citation its source does not clearly support, as the page shows it
UNVERIFIED_MARK = ('<mark class="unverified" title="The cited source does not clearly support this sentence.">'
                   'unverified</mark>')
CITE_HTML = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]")
ENTRY = re.compile(r"^\s*\[\d{1,4}\]\s")


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    md.disable(["link", "image", "autolink", "html_inline", "html_block", "reference"])

    def text(self, tokens, idx, options, env):
        escaped = html.escape(tokens[idx].content, quote=True)
        return CITE_HTML.sub(_cite_anchor, escaped).replace(UNVERIFIED, UNVERIFIED_MARK)

    md.add_render_rule("text", text)
    return md


def _cite_anchor(m: re.Match) -> str:
    ids = [int(n) for n in re.split(r"\s*[,;]\s*", m.group(1))]
    links = ", ".join(f'<a class="cite" href="#src-{n}" data-source="{n}">{n}</a>' for n in ids)
    return f'<sup class="cites">[{links}]</sup>'


_MD = _markdown()


def split_report(report: str) -> tuple[str, list[str]]:
    """(body, the lines after the Sources list: the unverified note and the verification line)."""
    found = list(SOURCES_HEADING.finditer(report or ""))
    if not found:
        return report or "", []
    last = found[-1]
    tail = [line for line in report[last.end():].splitlines() if line.strip() and not ENTRY.match(line)]
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
    url = str(s.get("url") or "")
    if web_url(url):
        ref = render_reference(url, "web")
        where = (f'<a href="{html.escape(ref, quote=True)}" rel="noopener noreferrer nofollow" '
                 f'target="_blank">{html.escape(ref)}</a>')
    elif url.lower().startswith("file:"):  # a document's real path and page, as text
        where = html.escape(reference_text(s))
    else:
        where = html.escape(one_line(render_reference(url), 300).replace("\\", ""))
    return f'<li id="src-{sid}" value="{sid}"><span class="title">{title}</span> — {where}</li>'


def sources_html(sources: list[dict]) -> str:
    items = "".join(source_item(s) for s in sources or [] if isinstance(s, dict))
    return f'<h2 id="sources">Sources</h2><ol class="sources">{items or "<li>(no sources cited)</li>"}</ol>'


def _number(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def chart_points(chart: dict) -> list[tuple[str, float]]:
    """A chart's points as (label, value): `[[x, y], ...]`, `[{label|x|name, value|y}, ...]`
    or `{label: value}`; what is not a number is left out."""
    raw = chart.get("points") or []
    if isinstance(raw, dict):
        raw = list(raw.items())
    out = []
    for p in raw if isinstance(raw, list) else []:
        if isinstance(p, dict):
            label = p.get("label", p.get("x", p.get("name", "")))
            value = p.get("value", p.get("y"))
        elif isinstance(p, (list, tuple)) and len(p) >= 2:
            label, value = p[0], p[1]
        else:
            continue
        v = _number(value)
        if v is not None:
            out.append((one_line(str(label), 40), v))
    return out[:60]


def chart_svg(chart: dict, width: int = 560, height: int = 240) -> str:
    """A bar chart of the chart's points as inline SVG (labels escaped)."""
    points = chart_points(chart)
    title = html.escape(one_line(chart.get("title") or "Chart", 200))
    if not points:
        return f'<figure class="chart"><figcaption>{title}</figcaption><p>(no numeric points)</p></figure>'
    top = max(max(v for _, v in points), 0.0)
    low = min(min(v for _, v in points), 0.0)
    span = (top - low) or 1.0
    pad, base_h = 30, height - 50
    bar_w = (width - 2 * pad) / len(points)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{title}"><rect width="100%" height="100%" fill="#fff"/>']
    zero_y = 10 + base_h * (top / span)
    for i, (label, v) in enumerate(points):
        x = pad + i * bar_w
        h = base_h * abs(v) / span
        y = zero_y - h if v >= 0 else zero_y
        parts.append(f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{max(bar_w - 4, 1):.1f}" height="{h:.1f}" '
                     f'fill="#4a78b5"><title>{html.escape(label)}: {v:g}</title></rect>')
        parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{height - 22}" font-size="10" text-anchor="middle">'
                     f'{html.escape(label[:14])}</text>')
    parts.append(f'<line x1="{pad}" x2="{width - pad}" y1="{zero_y:.1f}" y2="{zero_y:.1f}" stroke="#333"/>')
    parts.append(f'<text x="4" y="14" font-size="10">{top:g}</text></svg>')
    return f'<figure class="chart"><figcaption>{title}</figcaption>{"".join(parts)}</figure>'


def charts_html(charts) -> str:
    if not isinstance(charts, list) or not charts:
        return ""
    return '<section class="charts"><h2>Charts</h2>' + "".join(chart_svg(c) for c in charts
                                                                if isinstance(c, dict)) + "</section>"


def provenance_html(provenance) -> str:
    if not provenance:
        return ""
    text = html.escape(json.dumps(provenance, indent=1, ensure_ascii=False, default=str)[:20000])
    return f'<details class="provenance"><summary>Provenance</summary><pre>{text}</pre></details>'


def report_html(values: dict) -> str:
    """The report of a run's output `values` as an HTML fragment: body, charts, Sources, the
    verification line, provenance."""
    body, tail = split_report(values.get("report") or "")
    parts = [f'<article class="report-body">{markdown_html(body)}</article>', charts_html(values.get("charts")),
             sources_html(values.get("sources") or [])]
    if tail:
        parts.append(f'<div class="verification">{markdown_html(chr(10).join(tail))}</div>')
    parts.append(provenance_html(values.get("provenance")))
    return "".join(parts)


def _cited_title(source: dict) -> str:
    """A cited source's title, and for a document's page or section where it is (`, p. 12`):
    the citation's passage (its `span`) is from that page's text."""
    where = locator_text(source.get("meta")) if str(source.get("url") or "").lower().startswith("file:") else ""
    return title_text(source.get("title")) + (f", {one_line(where, 160)}" if where else "")


def view(values: dict) -> dict:
    """What the page shows of a finished run: the HTML and, for the citation popovers, each
    citation's source, passage and verdict (all as data: the page sets them as text)."""
    sources = {int(s["id"]): s for s in values.get("sources") or [] if isinstance(s, dict) and "id" in s}
    cites = []
    for c in values.get("citations") or []:
        if not isinstance(c, dict):
            continue
        s = sources.get(c.get("source_id"))
        cites.append({"source_id": c.get("source_id"), "sentence": str(c.get("sentence", "")),
                      "verdict": str(c.get("verdict", "")), "score": c.get("score"),
                      "passage": str(c.get("span", "")), "title": _cited_title(s or {})})
    return {"html": report_html(values), "citations": cites,
            "sources": [{"id": k, "title": title_text(v.get("title"))} for k, v in sources.items()],
            "report": values.get("report") or ""}


STANDALONE_CSS = """
body{font-family:Georgia,serif;max-width:46em;margin:2em auto;padding:0 1em;line-height:1.5;color:#222}
sup.cites a{text-decoration:none} ol.sources li{margin:.3em 0} .verification{color:#555;font-style:italic}
mark.unverified{background:#fde8c8;font-size:.8em;padding:0 .2em;border-radius:3px} figure.chart{margin:1em 0} pre{white-space:pre-wrap} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:.2em .5em}
"""


def standalone_html(values: dict, title: str | None = None) -> str:
    """A whole HTML document of the report (no script; a policy that forbids any)."""
    title = html.escape(one_line(title or values.get("question") or "Research report", 200))
    return ("<!doctype html><html><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<title>{title}</title><style>{STANDALONE_CSS}</style></head><body>{report_html(values)}</body></html>\n")
