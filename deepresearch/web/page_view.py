"""The report as the web page shows it: in the run's citation style, with its lines, its
uncited sentences marked and its citation links named (deepresearch/web/render.py renders
the Markdown); and the last edit in words."""

from __future__ import annotations

import html

from deepresearch.report.citation_style import delivered, styled_parts
from deepresearch.report.safe_text import render_reference, web_url
from deepresearch.web.render import (_MARKERS, STYLED_CLOSE, STYLED_MID, STYLED_OPEN, charts_html, mark_uncited,
                                     markdown_html, page_html, sources_html, split_report, title_text)
from deepresearch.web.provenance import provenance_html

# the edits in words (the graph's action names are identifiers)
LABELS = {"expand": "expand", "shorten": "shorten", "polish": "polish", "fact_check": "fact check",
          "supplementary_search": "search more", "sync": "your own edit", "finish": "finish editing"}


def _styled_sources(entries: list[tuple[str, str, str]], sources: list[dict]) -> str:
    """The Sources list in a style: each entry as the style writes it, then where the source is."""
    by_id = {str(s.get("id")): s for s in sources if isinstance(s, dict)}
    items = []
    for key, label, text in entries:
        url = str((by_id.get(key) or {}).get("url") or "")
        if web_url(url):
            ref = render_reference(url, "web")
            where = (f'<a href="{html.escape(ref, quote=True)}" rel="noopener noreferrer nofollow" '
                     f'target="_blank">{html.escape(ref)}</a>')
        else:
            where = html.escape(render_reference(url).replace("\\", ""))
        entry = page_html(text).strip().removeprefix("<p>").removesuffix("</p>")
        items.append(f'<li id="src-{html.escape(key, quote=True)}">{html.escape(label + " ") if label else ""}'
                     f'<span class="title">{entry}</span> — {where}</li>')
    return f'<h2 id="sources">Sources</h2><ul class="sources">{"".join(items) or "<li>(no sources cited)</li>"}</ul>'


def page_report(values: dict, titles: dict[int, str], page: bool = True) -> tuple[str, str]:
    """(the report's HTML for the page, the report's Markdown as delivered, for copying).
    `page=False`: without the page's lines and uncited marks (the HTML export)."""
    report = (values.get("report") or "").translate(_MARKERS)
    sources = [s for s in values.get("sources") or [] if isinstance(s, dict)]
    body, tail = split_report(report)
    marked = (mark_uncited(body) if page else body) + report[len(body):]
    parts = styled_parts(marked, sources, values.get("citation_style"),
                         mark=lambda ids, text: f"{STYLED_OPEN}{','.join(ids)}{STYLED_MID}{text}{STYLED_CLOSE}")
    if parts:
        body, entries, tail = parts
        listed = _styled_sources(entries, sources)
    else:
        body, listed = split_report(marked)[0], sources_html(sources)
    out = [f'<article class="report-body">{page_html(body, titles, lines=page)}</article>',
           charts_html(values.get("charts")), listed]
    if tail:
        out.append(f'<div class="verification">{markdown_html(chr(10).join(tail))}</div>')
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
        claims.append({"claim": str(claim.get("claim", "")), "verdict": str(claim.get("verdict", "")),
                       "source": where, "quote": str(claim.get("quote") or "")})
    if claims:
        out["claims"] = claims
    return out
