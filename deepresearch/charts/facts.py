"""Chartable facts in a report's cited sentences, chart specs, and point checking.

- `candidates(report)`: every dated event ("in 1819", "from 1887 to 1889", "14 July 1789",
  "the 1880s") and every quantity with a unit ("330 metres", "8.1 million people") of the
  report's cited sentences, each with a label taken from the words around it, the sentence's
  citation numbers and the section (the nearest heading above) it is in.
- `checked(point, texts)`: the point if its value and its label are both in the full text of a
  source its sentence cites (the label's words in the sentence of the text that holds the
  value, or the one before or after it), with the number of that source; else None.
- `choose(points, max_charts)`: where a chart helps: a section with three or more dated events
  (a timeline); things sharing a measured quantity in one unit (a bar chart). Units are never
  mixed on one axis.
"""

from __future__ import annotations

import re

from deepresearch.text.citations import CITE, HEADING, cited_numbers
from deepresearch.text.sentences import content_words, split_sentences

MONTHS = ("january february march april may june july august september october november december").split()
_MONTH = "(?:" + "|".join(m.capitalize() for m in MONTHS) + ")"
_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})"
_DASH = r"\s*(?:–|—|-|to|until)\s*"
DATE = re.compile(
    rf"""(?x)
    (?P<day_first>\b\d{{1,2}}\s+{_MONTH}\s+{_YEAR}\b)
    | (?P<month_first>\b{_MONTH}\s+\d{{1,2}},\s*{_YEAR}\b)
    | (?P<decade>\b(?:1[0-9]{{2}}0|20[0-9]0)s\b)
    | (?P<month_year>\b{_MONTH}\s+{_YEAR}\b)
    | (?P<range>\b(?:between\s+)?{_YEAR}(?:{_DASH}|\s+and\s+(?={_YEAR}))(?:{_YEAR}|[0-9]{{2}})\b)
    | (?P<year>\b{_YEAR}\b)
    """
)
UNITS = {
    "m": "m",
    "metres": "m",
    "meters": "m",
    "metre": "m",
    "meter": "m",
    "km": "km",
    "kilometres": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometer": "km",
    "ft": "ft",
    "feet": "ft",
    "foot": "ft",
    "mi": "mi",
    "miles": "mi",
    "mile": "mi",
    "kg": "kg",
    "kilograms": "kg",
    "tonnes": "t",
    "tons": "t",
    "km2": "km²",
    "km²": "km²",
    "square kilometres": "km²",
    "square kilometers": "km²",
    "people": "people",
    "inhabitants": "people",
    "residents": "people",
}
QUANTITY = re.compile(
    r"(?i)(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<mult>million|billion|thousand)?\s*"
    r"(?P<unit>square kilomet(?:re|er)s|km2|km²|kilomet(?:re|er)s?|metres?|meters?|km|m|ft|feet|foot|miles?|mi|"
    r"kilograms|kg|tonnes|tons|people|inhabitants|residents)\b"
)
MULT = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_BREAK = re.compile(r"[,;:()\[\]—]|\s(?:but|while|which|whereas|although)\s")
_LEAD = set(
    "and but then before after while when which whereas although by in on from since until to during between "
    "around circa c of at the year years".split()
)
_TRAIL = set(
    "in on by from since until to during around circa c of at the year years and was were is are after before "
    "between later early late "
    "stands stood measures measured reaches reached has had have with about approximately some nearly "
    "over almost roughly height tall high long population a an its their".split()
)
MAX_LABEL_WORDS = 8
MAX_POINTS = 12


def _norm(text: str) -> str:
    text = re.sub(r"[–—‑−]", "-", text.lower())
    return " ".join(re.sub(r"[\"“”‘’'`*_]", "", text).split())


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’.-]+", text)


def _clean(words: list[str], *, left: bool) -> list[str]:
    """Connectives and prepositions off the ends of a label."""
    while words and words[0].lower().strip(".") in _LEAD:
        words = words[1:]
    while words and words[-1].lower().strip(".") in _TRAIL:
        words = words[:-1]
    return words[-MAX_LABEL_WORDS:] if left else words[:MAX_LABEL_WORDS]


def _label(sentence: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """The words around sentence[start:end]: those before it in its clause, else those after."""
    prev_end = max([e for s, e in spans if e <= start] + [0])
    next_start = min([s for s, e in spans if s >= end] + [len(sentence)])
    before = sentence[prev_end:start].rstrip(" ([")
    cuts = list(_BREAK.finditer(before))
    if cuts:
        before = before[cuts[-1].end() :]
    after = sentence[end:next_start].lstrip(" )]")
    cut = _BREAK.search(after)
    if cut:
        after = after[: cut.start()]
    for text, left in ((before, True), (after, False)):
        words = _clean(_words(text), left=left)
        if len(content_words(" ".join(words))) >= 1:
            return " ".join(words).strip(" .")
    return ""


def _year_of(kind: str | None, text: str) -> float:
    years = [int(y) for y in re.findall(_YEAR, text)]
    if kind in ("day_first", "month_first", "month_year"):
        month = next(i for i, m in enumerate(MONTHS) if m in text.lower())
        return years[0] + month / 12
    return float(years[0]) if years else float(text[:4])


def sections_of(report: str) -> list[tuple[str, str]]:
    """(section title, line) for every line of the report body (before `## Sources`)."""
    body = report.split("\n## Sources", 1)[0]
    out, section = [], ""
    for line in body.split("\n"):
        if HEADING.match(line):
            section = line.lstrip("#").strip()
            continue
        out.append((section, line))
    return out


def candidates(report: str) -> list[dict]:
    """Every dated event and quantity of the report's cited sentences (unchecked)."""
    out = []
    for section, line in sections_of(report):
        if not CITE.search(line):
            continue
        for raw in split_sentences(line.strip()):
            cites = list(dict.fromkeys(cited_numbers(raw)))
            if not cites:
                continue
            sentence = CITE.sub("", raw).replace("^unverified^", "").strip()
            dates = [m for m in DATE.finditer(sentence)]
            quantities = list(QUANTITY.finditer(sentence))
            qspans = [(q.start(), q.end()) for q in quantities]
            dates = [m for m in dates if not any(s <= m.start() < e for s, e in qspans)]  # "1500 metres"
            spans = [(m.start(), m.end()) for m in dates + quantities]
            for m in dates:
                label = _label(sentence, m.start(), m.end(), spans)
                if label:
                    out.append(
                        {
                            "kind": "date",
                            "label": label,
                            "value": re.sub(r"^between\s+", "", m.group(0)),
                            "unit": "date",
                            "x": _year_of(m.lastgroup, m.group(0)),
                            "cites": cites,
                            "section": section,
                            "sentence": sentence,
                        }
                    )
            for q in quantities:
                label = _label(sentence, q.start(), q.end(), spans)
                if label:
                    number = float(q.group("num").replace(",", "")) * MULT.get((q.group("mult") or "").lower(), 1)
                    out.append(
                        {
                            "kind": "quantity",
                            "label": label,
                            "value": number,
                            "text": q.group(0),
                            "unit": UNITS[q.group("unit").lower()],
                            "x": number,
                            "cites": cites,
                            "section": section,
                            "sentence": sentence,
                        }
                    )
    return out


def _text_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", _norm(text)) if s]


def _value_forms(point: dict) -> list[str]:
    """What must be in the source for the point's value (each, as written or in a plain form)."""
    if point["kind"] == "quantity":
        num = re.escape(_norm(point["text"]).split()[0])
        return [rf"(?<![\d.,]){num}(?![\d])"]
    value = _norm(point["value"])
    years = re.findall(r"\d{3,4}", value)
    if point["value"][:4].isdigit() and re.search(r"\d\s*(?:-|to|until|and)\s*\d", value):  # a range: both ends
        return [rf"(?<!\d){y}(?!\d)" for y in years]
    return [rf"(?<![\d]){re.escape(value)}(?![\d])"]


def checked(point: dict, texts: dict[int, str]) -> dict | None:
    """The point with its `citation` (the number of a cited source whose text holds both its
    value and its label), or None when no cited source's text does."""
    need = set(content_words(point["label"]))
    forms = _value_forms(point)
    for n in point["cites"]:
        sents = _text_sentences(texts.get(n) or "")
        for i, s in enumerate(sents):
            if not re.search(forms[0], s):
                continue
            near = " ".join(sents[max(0, i - 1) : i + 2])
            if all(re.search(f, near) for f in forms) and need <= set(content_words(near)):
                return {**point, "citation": n}
    return None


def choose(found: list[dict], points: list[dict], max_charts: int) -> list[dict]:
    """Chart specs where a chart helps: a section whose sentences give three or more dated
    events (`found`: before checking) gets a timeline, a unit shared by two or more things a
    bar chart; each spec holds only the checked `points` and is made only with two or more of
    them; at most `max_charts`, those with the most points first."""
    specs = []
    for section in dict.fromkeys(p["section"] for p in found if p["kind"] == "date"):
        if len(_distinct([p for p in found if p["kind"] == "date" and p["section"] == section])) < 3:
            continue
        ps = _distinct([p for p in points if p["kind"] == "date" and p["section"] == section])
        if len(ps) >= 2:
            specs.append(_spec("timeline", section, sorted(ps, key=lambda p: p["x"])[:MAX_POINTS], "date"))
    for unit in dict.fromkeys(p["unit"] for p in points if p["kind"] == "quantity"):
        ps = _distinct([p for p in points if p["kind"] == "quantity" and p["unit"] == unit])
        if len({_norm(p["label"]) for p in ps}) >= 2:  # one unit on an axis, never two
            specs.append(_spec("bar", ps[-1]["section"], sorted(ps, key=lambda p: -p["x"])[:MAX_POINTS], unit))
    specs.sort(key=lambda s: -len(s["points"]))
    return specs[:max_charts]


def _distinct(points: list[dict]) -> list[dict]:
    seen, out = set(), []
    for p in points:
        key = (_norm(str(p["value"])), _norm(p["label"]))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _spec(kind: str, section: str, points: list[dict], unit: str) -> dict:
    what = section or "the report"
    title = f"Timeline: {what}" if kind == "timeline" else f"Compared in {unit}: {what}"
    return {
        "kind": kind,
        "section": section,
        "unit": unit,
        "title": title[:120],
        "x_label": "Year" if kind == "timeline" else unit,
        "y_label": "" if kind == "timeline" else "",
        "points": points,
        "style": dict(DEFAULT_STYLE),
    }


DEFAULT_STYLE = {
    "width": 7.5,
    "height": 3.8,
    "font_size": 9,
    "wrap": 26,
    "levels": 2,
    "scale": "linear",
    "title_size": 11,
}


def points_of(spec: dict) -> list[dict]:
    """The spec's points as the output lists them."""
    return [
        {"label": p["label"], "value": p["value"], "unit": p["unit"], "citation": p["citation"]} for p in spec["points"]
    ]


def data_of(spec: dict) -> list[tuple]:
    """What a critique may never change: each point's label, value, unit and citation, in order."""
    return [(p["label"], str(p["value"]), p["unit"], p["citation"]) for p in spec["points"]]
