"""Report templates: a Markdown file whose headings (`#` to `###`) give the report's structure
and whose text under each heading says what that part covers.

- `parse_template(text)` reads one (markdown-it-py): `{"title", "sections": [{title, level,
  purpose}], "about"}`. A lone first `#` heading followed by others is the report's title; the other
  headings are its parts, their levels kept relative to each other (the shallowest becomes
  `##`, under the report's `#` title). Text before the first heading (`about`) says what the
  whole report is like: its reader and tone (the report styles, deepresearch.choices.report_styles).
- `template_plan` turns the parts into a deep outline (the planner adds the key questions);
- `place` and `conform` make an iterative report follow the headings, in order.
"""

from __future__ import annotations

import re
from functools import lru_cache

from deepresearch.text.safe import md_text
from deepresearch.text.sentences import content_words

MAX_TEMPLATE_CHARS = 20_000
MAX_TEMPLATE_SECTIONS = 20  # the bound of Context.max_sections
MAX_PURPOSE = 300
NOT_COVERED = "> **Not covered:** nothing the research retrieved answers this part."


class TemplateError(ValueError):
    """A template that cannot be used (one line saying why)."""


def _inline_text(token) -> str:
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


def headings_of(markdown: str, preamble: list | None = None) -> list[dict]:
    """Every `#`..`###` heading of a Markdown text with the plain text under it (up to the next
    such heading): `[{title, level, text}]`. Deeper headings count as text. The text before the
    first heading is appended to `preamble` when one is given."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    out: list[dict] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.type == "heading_open" and t.tag in ("h1", "h2", "h3"):
            title = _inline_text(tokens[i + 1]) if i + 1 < len(tokens) else ""
            if title:
                out.append({"title": title, "level": int(t.tag[1]), "text": []})
            i += 3
            continue
        if t.type == "inline" and out:
            text = _inline_text(t)
            if text:
                out[-1]["text"].append(text)
        elif t.type == "inline" and preamble is not None and _inline_text(t):
            preamble.append(_inline_text(t))
        i += 1
    for h in out:
        h["text"] = " ".join(h["text"])
    return out


@lru_cache(maxsize=32)
def _parse(text: str) -> tuple:
    if len(text) > MAX_TEMPLATE_CHARS:
        raise TemplateError(f"the template is {len(text):,} characters long; the limit is {MAX_TEMPLATE_CHARS:,}")
    preamble: list[str] = []
    heads = headings_of(text, preamble)
    if not heads:
        raise TemplateError("the template has no headings ('#' to '###' lines)")
    title = None
    if heads[0]["level"] == 1 and len(heads) > 1 and all(h["level"] > 1 for h in heads[1:]):
        title, heads = heads[0]["title"], heads[1:]
    if len(heads) > MAX_TEMPLATE_SECTIONS:
        raise TemplateError(f"the template has {len(heads)} parts; at most {MAX_TEMPLATE_SECTIONS}")
    top = min(h["level"] for h in heads)
    sections = tuple((h["title"][:100], min(6, h["level"] - top + 2), _clip(h["text"], MAX_PURPOSE)) for h in heads)
    return (title[:150] if title else None), sections, _clip(" ".join(preamble), MAX_PURPOSE)


def parse_template(text: str) -> dict:
    """`{"title": str | None, "sections": [{"title", "level", "purpose"}], "about": str}`;
    TemplateError when the text has no usable headings."""
    title, sections, about = _parse(text or "")
    return {
        "title": title,
        "sections": [{"title": t, "level": lv, "purpose": p} for t, lv, p in sections],
        "about": about,
    }


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


# --- deep mode: the template is the outline --------------------------------------------------

PLAN_PROMPT = """Research question: {question}

The report follows a template. Its parts, in this order, each with what it must cover:
{parts}

Give the report a title, and for each part, in this order, the part's title exactly as given
and the key question its research must answer (a question about the research question)."""


def parts_text(sections: list[dict]) -> str:
    return "\n".join(
        f"{i}. {s['title']}" + (f" — {s['purpose']}" if s.get("purpose") else "") for i, s in enumerate(sections, 1)
    )


def default_key_question(section: dict, question: str) -> str:
    q = " ".join(question.split()).rstrip(" ?.")
    text = f"What should the part '{section['title']}' of a report on '{q}' say?"
    if section.get("purpose"):
        text += f" It covers: {section['purpose']}"
    return text[:300]


def template_plan(
    template: dict, question: str, *, title: str | None = None, key_questions: list[str] | None = None
) -> dict:
    """The deep outline: one section per part of the template, in order, with its level and
    purpose; key questions from the model where it gave a usable one, else from the part."""
    key_questions = list(key_questions or [])
    sections = []
    for i, s in enumerate(template["sections"]):
        kq = " ".join((key_questions[i] if i < len(key_questions) else "").split())[:300]
        sections.append(
            {
                "title": s["title"],
                "key_question": kq or default_key_question(s, question),
                "level": s["level"],
                "purpose": s["purpose"],
            }
        )
    plan_title = template.get("title") or (title or "").strip() or " ".join(question.split())
    return {"title": plan_title[:150], "background": "", "sections": sections}


# --- iterative mode: the report follows the headings ----------------------------------------


def writer_instruction(template: dict) -> str:
    """What the single-call writer is told about the headings."""
    lines = [
        f"{'#' * s['level']} {s['title']}" + (f"  (covers: {s['purpose']})" if s.get("purpose") else "")
        for s in template["sections"]
    ]
    about = f"The report as a whole: {template['about']}\n" if template.get("about") else ""
    return (
        about + "Use exactly these section headings, in this order, each followed by what it covers "
        "from the sources (write the heading lines without the text in parentheses):\n" + "\n".join(lines)
    )


def _norm(heading: str) -> str:
    text = re.sub(r"\\(.)", r"\1", heading).strip().lstrip("#").strip().casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def _heading(section: dict) -> str:
    return f"{'#' * section['level']} {md_text(section['title'], 100)}"


def conform(draft: str, template: dict, title: str) -> str:
    """`draft` rearranged under the template's headings, in order, keeping all its text: a
    block under a heading the template does not have joins the template part before it; a
    part with nothing under it says so."""
    head, blocks = _blocks(draft)
    wanted = {_norm(s["title"]): i for i, s in enumerate(template["sections"])}
    bodies: list[list[str]] = [[] for _ in template["sections"]]
    current = -1
    for heading, body in blocks:
        at = wanted.get(_norm(heading))
        if at is not None:
            current = at
        if body.strip():
            (bodies[current] if current >= 0 else head).append(body.strip())
    return _assemble(title, head, template, bodies)


def _blocks(draft: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(text before the first section heading, [(heading, body)]); a `# ` title line is dropped."""
    head: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    for line in draft.strip().split("\n"):
        if re.match(r"^#{1,6}\s", line):
            if line.startswith("# ") and not blocks and not any(x.strip() for x in head):
                continue  # the draft's title: the report's title is set by the caller
            blocks.append((line, []))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            head.append(line)
    text = "\n".join(head).strip()
    return ([text] if text else []), [(h, "\n".join(b).strip()) for h, b in blocks]


def _assemble(title: str, head: list[str], template: dict, bodies: list[list[str]]) -> str:
    parts = [title] + head
    for s, body in zip(template["sections"], bodies):
        parts.append(_heading(s))
        parts.append("\n\n".join(body) if body else NOT_COVERED)
    return "\n\n".join(p for p in parts if p)


def place(units: list[tuple[str, str]], template: dict, title: str, per_section: int = 3) -> str:
    """A report from cited text units `(text, source key)` (sentences or paragraphs, best
    first) placed under the template's headings: a unit goes to the part whose title and
    purpose share the most words with it; then each part still empty takes the units left of
    the next source, so every part the sources can fill is filled; a part left empty says so."""
    sections = template["sections"]
    want = [set(content_words(f"{s['title']} {s.get('purpose', '')}")) for s in sections]
    bodies: list[list[str]] = [[] for _ in sections]
    spare: list[tuple[str, str]] = []
    for text, key in units:
        words = set(content_words(text))
        scores = [len(words & w) for w in want]
        best = max(range(len(sections)), key=lambda i: (scores[i], -i))
        if scores[best] > 0 and len(bodies[best]) < per_section:
            bodies[best].append(text)
        else:
            spare.append((text, key))
    groups: dict[str, list[str]] = {}
    for text, key in spare:
        groups.setdefault(key, []).append(text)
    queue = list(groups.values())
    for body in bodies:
        if not body and queue:
            body.extend(queue.pop(0)[:per_section])
    return _assemble(title, [], template, [[" ".join(b)] if b else [] for b in bodies])
