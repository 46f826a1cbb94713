"""Drawing a chart spec with matplotlib (the Agg backend: no display, no system packages):
an SVG and a PNG, a title, labelled axes and the source numbers in the caption.

`render(spec, folder, stem)` writes `<stem>.svg` and `<stem>.png` and returns their paths and
the presentation problems code can see in the drawing (`problems`): labels that overlap each
other or leave the figure, an empty axis. `fix(style, problems)` is the style a next render
tries for them (more levels, narrower labels, a taller figure).
"""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is loaded when the first chart is drawn
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

MAX_LEVELS = 4
PNG_DPI = 110  # about 800 px wide at the default width: readable at report width


def _safe(text: str) -> str:
    """Text for matplotlib: `$` would start mathtext (a parser for TeX-like input)."""
    return str(text).replace("$", r"\$")


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(_safe(text), width=max(8, width), max_lines=3, placeholder="…")) or " "


def caption(spec: dict) -> str:
    nums = sorted({p["citation"] for p in spec["points"]})
    return "Sources: " + ", ".join(f"[{n}]" for n in nums)


@functools.cache
def _matplotlib():
    """matplotlib, loaded when the first chart is drawn: importing it costs most of a second,
    which every process that loads the graphs (each CLI run, a server) would pay otherwise."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    matplotlib.rcParams["svg.hashsalt"] = "deepresearch"  # the same chart, the same file
    matplotlib.rcParams["svg.fonttype"] = "path"  # text drawn as shapes: nothing in the SVG is markup from a source
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return Figure, FigureCanvasAgg


def render(spec: dict, folder: Path, stem: str) -> tuple[list[str], list[str]]:
    """Draw `spec`; the files written (SVG, PNG) and the problems seen."""
    Figure, FigureCanvasAgg = _matplotlib()  # noqa: N806 - the classes
    style = spec["style"]
    height = style["height"] + (
        0.9 * (style["levels"] - 2) if spec["kind"] == "timeline" else 0.3 * len(spec["points"])
    )
    fig = Figure(figsize=(style["width"], max(2.5, height)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = _timeline(ax, spec, style) if spec["kind"] == "timeline" else _bars(ax, spec, style)
    ax.set_title(_safe(spec["title"]), fontsize=style["title_size"])
    fig.text(0.01, 0.005, _safe(caption(spec)), fontsize=max(7, style["font_size"] - 1), ha="left", va="bottom")
    fig.canvas.draw()
    problems = _problems(fig, ax, labels, spec)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for ext in ("svg", "png"):
        path = folder / f"{stem}.{ext}"
        meta = {"Date": None} if ext == "svg" else {"Software": None}
        fig.savefig(path, format=ext, dpi=PNG_DPI, metadata=meta)
        files.append(str(path))
    return files, problems


def _timeline(ax, spec: dict, style: dict) -> list:
    """Events on a time axis; each label on the first level (above, below, further out) where it
    overlaps no label placed before it."""
    points = spec["points"]
    levels = max(1, min(MAX_LEVELS, int(style["levels"])))
    xs = [p["x"] for p in points]
    span = max(xs) - min(xs) or 1
    ax.set_xlim(min(xs) - span * 0.15, max(xs) + span * 0.15)
    ax.set_ylim(-levels - 0.6, levels + 0.6)
    ax.axhline(0, color="0.3", linewidth=1)
    ax.plot(xs, [0] * len(xs), "o", color="tab:blue", markersize=5, zorder=3)
    ax.yaxis.set_visible(False)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(_safe(spec["x_label"] or "Year"), fontsize=style["font_size"])
    renderer = ax.figure.canvas.get_renderer()
    order = [lvl * sign for lvl in range(1, levels + 1) for sign in (1, -1)]
    texts: list[Text] = []
    boxes: list[Bbox] = []
    for p, x in zip(points, xs):
        text = f"{_safe(p['value'])} [{p['citation']}]\n{_wrap(p['label'], style['wrap'])}"
        t = ax.text(x, 0, text, ha="center", fontsize=style["font_size"], linespacing=1.1)
        for h in order:
            t.set_position((x, h - 0.45 if h > 0 else h + 0.45))
            t.set_va("bottom" if h > 0 else "top")
            box = t.get_window_extent(renderer)
            if not any(box.overlaps(o) for o in boxes):
                break
        boxes.append(t.get_window_extent(renderer))
        ax.vlines([x], 0, [h - 0.45 if h > 0 else h + 0.45], color="0.6", linewidth=0.8)
        texts.append(t)
    return texts


def _bars(ax, spec: dict, style: dict) -> list:
    points = spec["points"]
    names = [_wrap(f"{p['label']} [{p['citation']}]", style["wrap"]) for p in points]
    values = [p["x"] for p in points]
    ys = list(range(len(points)))[::-1]
    ax.barh(ys, values, color="tab:blue")
    ax.set_yticks(ys, names, fontsize=style["font_size"])
    if style.get("scale") == "log" and min(values) > 0:
        ax.set_xscale("log")
    ax.set_xlabel(_safe(spec["x_label"] or spec["unit"]), fontsize=style["font_size"])
    return list(ax.get_yticklabels())


def _problems(fig, ax, texts: list, spec: dict) -> list[str]:
    problems = []
    if len(spec["points"]) < 2:
        problems.append("empty axis: fewer than two points")
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    frame = fig.bbox
    for i, a in enumerate(boxes):
        if a.x0 < frame.x0 - 1 or a.x1 > frame.x1 + 1 or a.y0 < frame.y0 - 1 or a.y1 > frame.y1 + 1:
            problems.append(f"label {i + 1} leaves the figure")
        for j in range(i + 1, len(boxes)):
            if a.overlaps(boxes[j]):
                problems.append(f"labels {i + 1} and {j + 1} overlap")
    return problems


def fix(style: dict, problems: list[str]) -> dict | None:
    """A style that may solve `problems` (None: nothing left to try)."""
    if not problems:
        return None
    new = dict(style)
    if new["levels"] < MAX_LEVELS:
        new["levels"] += 1
    elif new["wrap"] > 14:
        new["wrap"] -= 6
        new["width"] = round(min(new["width"] + 1.5, 12), 1)
    else:
        return None
    return new
