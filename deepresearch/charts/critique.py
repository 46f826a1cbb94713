"""A vision model's critique of a rendered chart (the context's `chart_model`).

The PNG goes to the model with the chart's data; it answers a `ChartCritique`: the problems
it sees (unreadable labels, overlapping points, a misleading scale, a title that does not
match the data) and the presentation changes that fix them. Only presentation may change:
an answer that lists the points with any label, value or citation changed, added or removed
is refused (`DataChanged`), and a new title is plain text, one line, no link or markup, with
no number the data does not have.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from deepresearch.charts.facts import data_of
from deepresearch.llm.calls import parse_json_object
from deepresearch.text.safe import decode_entities, one_line, strip_urls


class CritiquePoint(BaseModel):
    label: str
    value: str | float | int
    citation: int | None = None


class ChartCritique(BaseModel):
    ok: bool = Field(description="true when the chart needs no change")
    problems: list[str] = Field(default_factory=list, description="what is wrong with the chart as drawn")
    title: str | None = Field(default=None, description="a better title, if the title does not match the data")
    font_size: int | None = Field(default=None, ge=6, le=16)
    wrap: int | None = Field(default=None, ge=8, le=60, description="characters per label line")
    levels: int | None = Field(default=None, ge=1, le=4, description="timeline: label rows above and below")
    scale: Literal["linear", "log"] | None = None
    width: float | None = Field(default=None, ge=4, le=14)
    height: float | None = Field(default=None, ge=2.5, le=10)
    points: list[CritiquePoint] | None = Field(
        default=None, description="leave out: the points are fixed and may not be changed"
    )


class DataChanged(Exception):
    """The critique tried to change the chart's data."""


SYSTEM = """You review charts for a research report. You see the rendered chart and its data.
Say what makes it hard to read or misleading (unreadable or overlapping labels, a misleading
scale, a title that does not match the data) and give presentation changes only. The data
(points, labels, values, citations) is fixed: never change, add or remove a point."""

PROMPT = """Chart data (fixed): {data}
Current title: {title}
Current style: {style}
Problems found by code: {problems}

Reply with one JSON object matching this JSON schema:
{schema}"""


def ask(
    model, spec: dict, png: bytes, *, timeout: float, max_tokens: int = 400, problems: Sequence[str] = ()
) -> tuple[ChartCritique, dict]:
    """One critique of the PNG; (critique, usage_metadata)."""
    data = [
        {"label": p["label"], "value": p["value"], "unit": p["unit"], "citation": p["citation"]} for p in spec["points"]
    ]
    text = PROMPT.format(
        data=json.dumps(data, ensure_ascii=False),
        title=json.dumps(spec["title"]),
        style=json.dumps(spec["style"]),
        problems="; ".join(problems) or "none",
        schema=json.dumps(ChartCritique.model_json_schema()),
    )
    image = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    messages = [
        SystemMessage(content=SYSTEM),
        HumanMessage(content=[{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": image}}]),
    ]
    msg = model.invoke(messages, max_tokens=max_tokens, timeout=timeout)
    content = (
        msg.content
        if isinstance(msg.content, str)
        else "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in msg.content)
    )
    return ChartCritique.model_validate(parse_json_object(content)), dict(getattr(msg, "usage_metadata", None) or {})


def apply(spec: dict, critique: ChartCritique) -> dict:
    """The spec revised by the critique's presentation changes (DataChanged if it changes data)."""
    if critique.points is not None:
        proposed = [(p.label, str(p.value), p.citation) for p in critique.points]
        current = [(label, value, citation) for label, value, _unit, citation in data_of(spec)]
        if len(proposed) != len(current) or any(
            (a[0], a[1]) != (b[0], b[1]) or (a[2] is not None and a[2] != b[2]) for a, b in zip(proposed, current)
        ):
            raise DataChanged("the critique changes the chart's points")
    style = dict(spec["style"])
    for name in ("font_size", "wrap", "levels", "scale", "width", "height"):
        value = getattr(critique, name)
        if value is not None:
            style[name] = value
    new = {**spec, "style": style}
    if critique.title:
        title = clean_title(critique.title, spec)
        if title:
            new["title"] = title
    return new


def clean_title(title: str, spec: dict) -> str:
    """A model's title as plain text: one line, no URL, no markup characters; "" when it states
    a number the data does not have."""
    text = one_line(strip_urls(decode_entities(title), ""), 120)
    text = re.sub(r"[<>\[\]()!`*_#|\\]", "", text).strip()
    allowed = " ".join(str(p["value"]) + " " + p["label"] for p in spec["points"]) + " " + spec["title"]
    if any(n not in allowed for n in re.findall(r"\d+(?:\.\d+)?", text)):
        return ""
    return text


__all__ = ["ChartCritique", "DataChanged", "ask", "apply", "clean_title"]
