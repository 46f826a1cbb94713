"""The page's sources panel, beside the report on a wide screen: each source the report cites,
where it is (a retrieved http(s) page is a link, a document's path and page are text), how the
research found it and the passages cited from it, each with its verdict and the report's
sentences it supports; then the sentences that cite nothing and the sources retrieved but not
cited. A citation on the page scrolls the panel to its source (`id="panel-src-N"`).

From the run's provenance (deepresearch/research/provenance.py) when it has one; without it (a
run with `infer` off, a report put on a thread by hand) from the sources and the citation
checks. Every field is escaped text.
"""

from __future__ import annotations

import html

from deepresearch.report.documents import reference_text
from deepresearch.text.safe import one_line, render_reference, title_line, web_url
from deepresearch.web.provenance import MAX_PASSAGES, MAX_SENTENCES, MAX_SOURCES, _by_source, _e, _found


def where_html(source: dict) -> str:
    """Where a source is: a retrieved http(s) page as a link (the only links), else text."""
    url = str(source.get("url") or "")
    if web_url(url):
        ref = render_reference(url, "web")
        return (
            f'<a href="{html.escape(ref, quote=True)}" rel="noopener noreferrer nofollow" '
            f'target="_blank">{html.escape(ref)}</a>'
        )
    if url.lower().startswith("file:"):  # a document's real path and page, as text
        return html.escape(reference_text(source))
    return html.escape(one_line(render_reference(url), 300).replace("\\", ""))


def _from_citations(values: dict) -> dict[int, dict]:
    """The passages cited from each source, by the citation checks (a run without provenance)."""
    out: dict[int, dict] = {}
    for c in values.get("citations") or []:
        if not isinstance(c, dict) or not isinstance(c.get("source_id"), int):
            continue
        kept = out.setdefault(c["source_id"], {}).setdefault(
            str(c.get("span") or ""), {"verdict": c.get("verdict"), "sentences": []}
        )
        if c.get("sentence") and c["sentence"] not in kept["sentences"]:
            kept["sentences"].append(str(c["sentence"]))
    return out


def _passages(passages: dict) -> str:
    items = []
    for text, kept in list(passages.items())[:MAX_PASSAGES]:
        verdict = str(kept.get("verdict") or "")
        said = "; ".join(f"“{_e(x)}”" for x in kept["sentences"][:MAX_SENTENCES])
        items.append(
            f'<li><blockquote class="passage">{_e(text or "(no passage)", 600)}</blockquote>'
            f'<span class="verdict-{_e(verdict.replace(" ", ""), 20)}">{_e(verdict, 20)}</span>'
            + (f'<div class="supports">supports: {said}</div>' if said else "")
            + "</li>"
        )
    return f'<ul class="passages">{"".join(items)}</ul>' if items else '<p class="hint">no passage cited</p>'


def sources_panel(values: dict) -> str:
    """The panel's HTML (its heading included), or "" for a report without sources."""
    sources = [s for s in values.get("sources") or [] if isinstance(s, dict) and isinstance(s.get("id"), int)]
    given = values.get("provenance")
    prov: dict = given if isinstance(given, dict) else {}
    traced = _by_source(prov) if prov.get("sentences") else {}
    checked = _from_citations(values)
    parts = []
    for s in sources[:MAX_SOURCES]:
        sid = s["id"]
        title = title_line(s.get("title") or "", 200) or "(untitled)"
        found = traced.get(sid, {}).get("found") or []
        passages = traced[sid]["passages"] if sid in traced else checked.get(sid, {})
        parts.append(
            f'<section class="prov-source" id="panel-src-{sid}" tabindex="-1"><h3>[{sid}] {_e(title, 200)}</h3>'
            f'<p class="where">{where_html(s)}</p>'
            + "".join(f'<p class="found">{_found(x)}</p>' for x in found[:3])
            + _passages(passages)
            + "</section>"
        )
    bare = [
        x["text"] for x in prov.get("sentences") or [] if not x.get("chains") and not x.get("same_as") and x.get("text")
    ]
    if bare:
        parts.append(
            "<h3>Sentences that cite no source</h3><ul>" + "".join(f"<li>{_e(x)}</li>" for x in bare[:40]) + "</ul>"
        )
    uncited = [u for u in prov.get("uncited") or [] if isinstance(u, dict)]
    if uncited:
        parts.append(
            "<h3>Retrieved but not cited</h3><ul>"
            + "".join(f"<li>{_e(u.get('title'), 200)}: {_e(u.get('why'), 200)}</li>" for u in uncited[:40])
            + "</ul>"
        )
    if not parts:
        return ""
    return (
        f'<h2 id="panel-heading">Sources: {len(sources)}</h2>'
        '<p class="hint">Each source, how the research found it, the passages the report cites. '
        "A citation in the report opens its source here.</p>" + "".join(parts)
    )
