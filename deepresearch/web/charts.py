"""A run's charts (node `charts`) drawn for the page and the HTML export: a bar chart as inline
SVG from the chart's numbers, its labels escaped (deepresearch/web/export.py draws them for
the PDF and lists them for Word)."""

from __future__ import annotations

import html
import math

from deepresearch.text.safe import one_line


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
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{title}"><rect width="100%" height="100%" fill="#fff"/>'
    ]
    zero_y = 10 + base_h * (top / span)
    for i, (label, v) in enumerate(points):
        x = pad + i * bar_w
        h = base_h * abs(v) / span
        y = zero_y - h if v >= 0 else zero_y
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{max(bar_w - 4, 1):.1f}" height="{h:.1f}" '
            f'fill="#4a78b5"><title>{html.escape(label)}: {v:g}</title></rect>'
        )
        parts.append(
            f'<text x="{x + bar_w / 2:.1f}" y="{height - 22}" font-size="10" text-anchor="middle">'
            f"{html.escape(label[:14])}</text>"
        )
    parts.append(f'<line x1="{pad}" x2="{width - pad}" y1="{zero_y:.1f}" y2="{zero_y:.1f}" stroke="#333"/>')
    parts.append(f'<text x="4" y="14" font-size="10">{top:g}</text></svg>')
    return f'<figure class="chart"><figcaption>{title}</figcaption>{"".join(parts)}</figure>'


def charts_html(charts) -> str:
    if not isinstance(charts, list) or not charts:
        return ""
    return (
        '<section class="charts"><h2>Charts</h2>'
        + "".join(chart_svg(c) for c in charts if isinstance(c, dict))
        + "</section>"
    )
