"""Provenance shown to people: terminal text, one standalone HTML page, a Mermaid flowchart.

Everything in a provenance record comes from sources and models: in the terminal each field
is one line (control characters and line breaks removed); in the HTML page every field is
escaped text (no link, image or script from a source is live; the page's own script and
style are inline and a Content-Security-Policy forbids loading anything); in Mermaid each
label is quoted with its quotes and brackets as entities.
"""

from __future__ import annotations

import html
import re

from deepresearch.text.safe import one_line
from deepresearch.text.sentences import content_words


def _search_text(step: dict) -> str:
    where = f", section {one_line(step['section'], 80)}" if step.get("section") else ""
    return (
        f"search {one_line(step.get('query', ''), 120)!s} ({one_line(step.get('backend', ''), 40)}, "
        f"round {step.get('round')}{where})"
    )


def step_text(step: dict, question: str = "") -> str:
    kind = step["step"]
    if kind == "question":
        return "question: " + one_line(step.get("text", question), 200)
    if kind == "concept":
        named = f"; named by: {one_line(step['named_by'], 160)}" if step.get("named_by") else ""
        return f"concept: {one_line(step['name'], 100)} ({one_line(step.get('origin', ''), 20)}){named}"
    if kind == "gap":
        return "gap: " + one_line(step["text"], 200)
    if kind == "search":
        return _search_text(step)
    if kind == "source":
        borrowed = f"; borrowed from section {one_line(step['borrowed_from'], 80)}" if step.get("borrowed_from") else ""
        return f"source [{step['id']}] {one_line(step['title'], 120)} {one_line(step.get('url', ''), 160)}{borrowed}"
    if kind == "passage":
        return f"passage ({step.get('verdict')}, score {step.get('score')}): {one_line(step['text'], 200)}"
    return "sentence: " + one_line(step.get("text", ""), 200)


def as_text(prov: dict) -> str:
    lines = ["question: " + one_line(prov.get("question", ""), 300)]
    for s in prov["sentences"]:
        lines.append("")
        lines.append(
            f"{s['index']}. {one_line(s['text'], 300)}"
            + (f"  [{one_line(s['section'], 80)}]" if s.get("section") else "")
        )
        if s.get("same_as"):
            lines.append(f"   (as sentence {s['same_as']})")
        elif not s["chains"]:
            lines.append("   (cites no source)")
        for chain in s["chains"]:
            lines += ["   <- " + step_text(step, prov.get("question", "")) for step in reversed(chain[:-1])]
    if prov["concepts"]:
        lines += ["", "concepts:"]
        lines += [
            f"   {one_line(c['name'], 100)} ({one_line(c['origin'], 20)}): "
            + ("covered by " + ", ".join(f"[{n}]" for n in c["sources"]) if c["covered"] else "NOT covered")
            for c in prov["concepts"]
        ]
    if prov["uncited"]:
        lines += ["", "retrieved but not cited:"]
        lines += [f"   {one_line(u['title'], 120)} ({one_line(u['backend'], 30)}): {u['why']}" for u in prov["uncited"]]
    return "\n".join(lines) + "\n"


# --- HTML -------------------------------------------------------------------------------


def _e(text) -> str:
    return html.escape(str(text if text is not None else ""), quote=True)


def highlight(passage: str, sentence: str) -> str:
    """The passage as escaped HTML, its words that the sentence shares in <mark>."""
    want = set(content_words(sentence))
    out = []
    for token in re.split(r"(\W+)", passage):
        if token and re.match(r"\w", token) and set(content_words(token)) & want:
            out.append(f"<mark>{_e(token)}</mark>")
        else:
            out.append(_e(token))
    return "".join(out)


def _step_html(step: dict, sentence: str, question: str) -> str:
    kind = step["step"]
    if kind == "sentence":
        return f'<li class="sentence"><b>sentence</b> {_e(sentence)}</li>'
    if kind == "passage":
        return (
            f'<li class="passage"><b>passage</b> ({_e(step.get("verdict"))}, score {_e(step.get("score"))})'
            f"<blockquote>{highlight(step.get('text') or '', sentence)}</blockquote></li>"
        )
    if kind == "source":
        borrowed = (
            f' <span class="borrowed">borrowed from section {_e(step["borrowed_from"])}</span>'
            if step.get("borrowed_from")
            else ""
        )
        return (
            f'<li class="source"><b>source [{_e(step["id"])}]</b> {_e(step["title"])} '
            f"<code>{_e(step.get('url', ''))}</code>{borrowed}</li>"
        )
    label, _, rest = (
        step_text(step, question).partition(": ") if kind != "search" else ("search", "", _search_text(step)[7:])
    )
    return f'<li class="{_e(kind)}"><b>{_e(label)}</b> {_e(rest)}</li>'


SCRIPT = """
document.querySelectorAll('.s').forEach(function(el){el.addEventListener('click',function(){
document.querySelectorAll('.on').forEach(function(o){o.classList.remove('on')});
el.classList.add('on');document.getElementById('hint').style.display='none';
document.getElementById('chain-'+el.dataset.i).classList.add('on');})});
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>Provenance: {title}</title>
<style>
body{{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;height:100vh}}
#report{{flex:1;overflow:auto;padding:1em 2em}} #chain{{flex:1;overflow:auto;padding:1em 2em;background:#f6f6f6}}
.s{{cursor:pointer}} .s:hover,.s.on{{background:#fff3b0}} .chain{{display:none}} .chain.on{{display:block}}
mark{{background:#ffe066}} blockquote{{margin:.3em 0;padding:.4em .8em;border-left:3px solid #999;background:#fff}}
.borrowed{{color:#a33}} li{{margin:.3em 0}} code{{word-break:break-all}}
</style></head><body>
<div id="report"><h1>{title}</h1>
{report}
{extra}
</div>
<div id="chain"><p id="hint">Click a sentence to see how the research arrived at it.</p>
{chains}
</div>
<script>{script}</script></body></html>
"""


def as_html(prov: dict) -> str:
    """One standalone page: the report's sentences (click one) and each one's chain."""
    parts, chains, section = [], [], None
    paragraph: list[str] = []
    for s in prov["sentences"]:
        if s.get("section") != section:
            if paragraph:
                parts.append("<p>" + " ".join(paragraph) + "</p>")
                paragraph = []
            section = s.get("section")
            if section:
                parts.append(f"<h2>{_e(section)}</h2>")
        paragraph.append(
            f'<span class="s" data-i="{s.get("same_as") or s["index"]}" id="s-{s["index"]}">{_e(s["text"])}</span>'
        )
        if s.get("same_as"):  # its chain is the earlier sentence's
            continue
        body = (
            "".join(
                f'<ol class="steps">{"".join(_step_html(st, s["text"], prov.get("question", "")) for st in chain)}</ol>'
                for chain in s["chains"]
            )
            or "<p>This sentence cites no source.</p>"
        )
        chains.append(f'<div class="chain" id="chain-{s["index"]}"><h3>{_e(s["text"])}</h3>{body}</div>')
    if paragraph:
        parts.append("<p>" + " ".join(paragraph) + "</p>")
    extra = []
    if prov["concepts"]:
        extra.append(
            "<h2>Concepts</h2><ul>"
            + "".join(
                f"<li>{_e(c['name'])} ({_e(c['origin'])}): "
                + (
                    f"covered by {_e(', '.join(f'[{n}]' for n in c['sources']))}"
                    if c["covered"]
                    else "<b>not covered</b>"
                )
                + (f"; named by: {_e(c['sentence'])}" if c.get("sentence") else "")
                + "</li>"
                for c in prov["concepts"]
            )
            + "</ul>"
        )
    if prov["uncited"]:
        extra.append(
            "<h2>Retrieved but not cited</h2><ul>"
            + "".join(f"<li>{_e(u['title'])} <code>{_e(u['url'])}</code>: {_e(u['why'])}</li>" for u in prov["uncited"])
            + "</ul>"
        )
    return PAGE.format(
        title=_e(one_line(prov.get("question", ""), 200)),
        report="\n".join(parts),
        extra="\n".join(extra),
        chains="\n".join(chains),
        script=SCRIPT,
    )


# --- Mermaid ----------------------------------------------------------------------------


def _m(text, limit: int = 60) -> str:
    text = one_line(text, limit)
    for a, b in (
        ("&", "#amp;"),
        ('"', "#quot;"),
        ("<", "#lt;"),
        (">", "#gt;"),
        ("`", "#96;"),
        ("[", "#91;"),
        ("]", "#93;"),
        ("{", "#123;"),
        ("}", "#125;"),
        ("|", "#124;"),
    ):
        text = text.replace(a, b)
    return f'"{text}"'


def as_mermaid(prov: dict) -> str:
    """question -> concepts -> searches -> sources -> sections."""
    lines = ["flowchart LR", f"  Q[{_m(prov.get('question', ''), 80)}]"]
    ids: dict[tuple, str] = {}

    def node(kind: str, key, label: str) -> str:
        if (kind, key) not in ids:
            ids[(kind, key)] = f"{kind}{len(ids) + 1}"
            lines.append(f"  {ids[(kind, key)]}[{_m(label)}]")
        return ids[(kind, key)]

    edges: set[tuple[str, str]] = set()
    for s in prov["sentences"]:
        for chain in s["chains"]:
            prev = "Q"
            for step in chain[1:-2]:
                if step["step"] == "concept":
                    cur = node("C", step["name"], "concept: " + step["name"])
                elif step["step"] == "gap":
                    cur = node("G", step["text"], "gap: " + step["text"])
                elif step["step"] == "search":
                    cur = node(
                        "S",
                        (step.get("backend"), step.get("query"), step.get("round")),
                        f"{step.get('backend')}: {step.get('query')} (round {step.get('round')})",
                    )
                else:
                    cur = node("R", step["id"], f"[{step['id']}] {step['title']}")
                edges.add((prev, cur))
                prev = cur
            edges.add((prev, node("T", s.get("section") or "report", "section: " + (s.get("section") or "report"))))
    lines += [f"  {a} --> {b}" for a, b in sorted(edges)]
    return "\n".join(lines) + "\n"
