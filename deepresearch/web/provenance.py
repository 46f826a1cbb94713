"""A run's provenance (deepresearch/research/provenance.py) as a view people read: for each
cited source, how the research found it, the passages the report relies on and which of the
report's sentences each one supports; then the sentences that cite nothing and the sources
retrieved but not cited. Every field is escaped text (no link: a source's URL is shown as
text; the Sources list above it has the links)."""

from __future__ import annotations

import html

from deepresearch.text.safe import one_line

MAX_SOURCES = 60
MAX_PASSAGES = 8  # per source
MAX_SENTENCES = 6  # per passage


def _e(text, limit: int = 300) -> str:
    return html.escape(one_line(str(text if text is not None else ""), limit), quote=True)


def _by_source(prov: dict) -> dict[int, dict]:
    """{source id: {"title", "url", "found": [search steps], "passages": {text: {verdict, sentences}}}}"""
    out: dict[int, dict] = {}
    for s in prov.get("sentences") or []:
        for chain in s.get("chains") or []:
            steps = {step.get("step"): step for step in chain if isinstance(step, dict)}
            source = steps.get("source")
            if not source or not isinstance(source.get("id"), int):
                continue
            entry = out.setdefault(
                source["id"],
                {"title": source.get("title", ""), "url": source.get("url", ""), "found": [], "passages": {}},
            )
            search = steps.get("search")
            if search and search not in entry["found"]:
                entry["found"].append(search)
            passage = steps.get("passage") or {}
            kept = entry["passages"].setdefault(
                passage.get("text") or "", {"verdict": passage.get("verdict"), "sentences": []}
            )
            if s.get("text") and s["text"] not in kept["sentences"]:
                kept["sentences"].append(s["text"])
    return out


def _found(search: dict) -> str:
    where = f", for section “{_e(search['section'], 80)}”" if search.get("section") else ""
    return (
        f"found by searching {_e(search.get('backend'), 40)} for “{_e(search.get('query'), 160)}” "
        f"(round {_e(search.get('round'), 6)}{where})"
    )


def provenance_html(prov, sources: list[dict] | None = None) -> str:
    """The readable provenance view, folded (a `<details>`), or "" without provenance."""
    if not isinstance(prov, dict) or not prov.get("sentences"):
        return ""
    by_source = _by_source(prov)
    parts = []
    for sid in sorted(by_source)[:MAX_SOURCES]:
        src = by_source[sid]
        parts.append(f'<section class="prov-source"><h3>[{sid}] {_e(src["title"], 200)}</h3>')
        if src["url"]:
            parts.append(f'<p class="where"><code>{_e(src["url"], 200)}</code></p>')
        for search in src["found"][:3]:
            parts.append(f'<p class="found">{_found(search)}</p>')
        parts.append('<ul class="passages">')
        for text, kept in list(src["passages"].items())[:MAX_PASSAGES]:
            verdict = str(kept["verdict"] or "")
            said = "; ".join(f"“{_e(x)}”" for x in kept["sentences"][:MAX_SENTENCES])
            parts.append(
                f'<li><blockquote class="passage">{_e(text or "(no passage)", 600)}</blockquote>'
                f'<span class="verdict-{_e(verdict.replace(" ", ""), 20)}">{_e(verdict, 20)}</span>'
                f'<div class="supports">supports: {said}</div></li>'
            )
        parts.append("</ul></section>")
    bare = [s["text"] for s in prov["sentences"] if not s.get("chains") and not s.get("same_as") and s.get("text")]
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
    summary = (
        f"Where each sentence comes from: {len(by_source)} source(s), "
        f"{sum(1 for s in prov['sentences'] if s.get('chains'))} cited sentence(s)"
    )
    return (
        f'<details class="provenance"><summary>{summary}</summary>'
        '<p class="hint">For each cited source: how the research found it, the passages the report relies on, '
        "and the sentences each passage supports.</p>" + "".join(parts) + "</details>"
    )
