"""`charts`: timelines and comparison charts of the report's checked facts (context `charts`).

After `source_tracer` (both graphs). The report's cited sentences give the candidate points
(deepresearch.charts.facts); a point is kept only when its value and its label are both in
the full text of a source its sentence cites; a section with three or more dated events gets
a timeline, things sharing a measured quantity a bar chart (at most `max_charts`; a chart of
fewer than two points is not drawn). Each chart is drawn (SVG and PNG, research/chart_render.py)
and, with a `chart_model`, critiqued from its PNG and redrawn for up to `max_chart_iterations`
rounds (presentation only: research/chart_critique.py); without one, the problems code can see
(overlapping labels) are fixed by code for as many rounds. The report gets an image of the
local PNG (a path relative to the report) and a caption citing the chart's sources, after the
section it draws from. Nothing chartable is no failure: a `chart` event and `charts_skipped` (the
reason) say so. A render error or a model error is an `error` event: the report goes on
without that chart.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import platformdirs
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from deepresearch.charts import critique as chart_critique
from deepresearch.charts import render as chart_render
from deepresearch.charts.facts import candidates, checked, choose, points_of
from deepresearch.config import Context, get_context
from deepresearch.events import emit
from deepresearch.llm.budget import Budget
from deepresearch.llm.retries import describe
from deepresearch.state.shared import GraphState
from deepresearch.store import full_text, reads_texts_once, run_label, run_namespace, run_store, texts_until
from deepresearch.text.citations import HEADING
from deepresearch.text.safe import inline_text
from deepresearch.text.urls import normalize_url

CHARTS_NAMESPACE = ("deepresearch", "charts")


def folder_of(ctx: Context) -> Path:
    if ctx.charts_dir:
        return Path(ctx.charts_dir).expanduser()
    label = run_label().replace("/", "_").replace(":", "_")
    return Path(platformdirs.user_cache_dir("deepresearch")) / "charts" / label


def cited_texts(state: Mapping[str, Any]) -> dict[int, str]:
    """The full text of each of the report's sources, by its number in the report."""
    by_url = {normalize_url(s["url"]): s for s in state.get("evidence") or []}
    out = {}
    for s in state.get("sources") or []:
        src = by_url.get(normalize_url(s["url"]))
        if src is not None:
            out[int(s["id"])] = full_text(src)
    return out


def image_markdown(spec: dict[str, Any], href: str, number: int) -> str:
    """The chart in the report: the image (our own file, by relative path) and its caption."""
    title = inline_text(re.sub(r"[\[\]]", "", spec["title"]), 120)
    return f"![{title}]({href})\n\n*Figure {number}: {title}. {chart_render.caption(spec)}.*"


def place(report: str, section: str, block: str) -> str:
    """`report` with `block` after the section titled `section`: before the next heading of the
    same or a higher level, or before `## Sources` (a report without headings: before `## Sources`)."""
    lines = report.split("\n")

    def depth(line: str) -> int:
        return len(line) - len(line.lstrip("#")) if HEADING.match(line) else 0

    end = next((i for i, line in enumerate(lines) if line.strip() == "## Sources"), len(lines))
    start = next((i for i, line in enumerate(lines[:end]) if depth(line) and line.lstrip("#").strip() == section), None)
    if start is None and not section:  # the text before any heading: it ends at the first heading after text
        texts = [i for i, line in enumerate(lines[:end]) if line.strip() and not depth(line)]
        start = texts[0] if texts else None
    if start is not None:
        level = depth(lines[start]) or 6
        end = next((i for i in range(start + 1, end) if depth(lines[i]) and depth(lines[i]) <= level), end)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[:end] + ["", block, ""] + lines[end:])


def draw(
    ctx: Context, budget: Budget, spec: dict[str, Any], folder: Path, stem: str
) -> tuple[dict[str, Any], list[str], int, int]:
    """Render `spec`, then critique and redraw it; (final spec, files, rounds applied, model calls)."""
    files, problems = chart_render.render(spec, folder, stem)
    rounds = calls = 0
    model = None
    if ctx.chart_model and ctx.max_chart_iterations > 0:
        from deepresearch.llm.models import get_model

        model = get_model(
            ctx.chart_model,
            base_url=ctx.chart_base_url or ctx.base_url,
            timeout=ctx.request_timeout,
            max_retries=ctx.max_retries,
        )
    for _ in range(ctx.max_chart_iterations):
        if model is not None:
            if budget.tokens_left() < 1500 or budget.seconds_left() < 5:
                emit("error", node="charts", cause="no budget left for a chart critique")
                break
            try:
                calls += 1
                critique, usage = chart_critique.ask(
                    model,
                    spec,
                    Path(files[1]).read_bytes(),
                    problems=problems,
                    timeout=min(ctx.request_timeout, budget.seconds_left()),
                )
            except Exception as e:  # noqa: BLE001 - a failed critique leaves the chart as drawn
                emit("error", node="charts", cause=f"chart critique failed: {describe(e)}")
                break
            budget.record(usage.get("input_tokens", 0), usage.get("output_tokens", 0))
            try:
                new = chart_critique.apply(spec, critique)
            except chart_critique.DataChanged as e:
                emit("error", node="charts", cause=f"chart critique refused: {e}", title=spec["title"])
                break
        else:
            style = chart_render.fix(spec["style"], problems)
            new = {**spec, "style": style} if style else spec
        if new == spec:
            break
        spec = new
        files, problems = chart_render.render(spec, folder, stem)
        rounds += 1
    return spec, files, rounds, calls


def _keep(store: BaseStore, stem: str, files: list[str], spec: dict[str, Any]) -> None:
    svg, png = (Path(f) for f in files)
    store.put(
        run_namespace(CHARTS_NAMESPACE, run_label()),
        stem,
        {
            "svg": svg.read_text(encoding="utf-8"),
            "png": base64.b64encode(png.read_bytes()).decode("ascii"),
            "title": spec["title"],
            "points": points_of(spec),
        },
        index=False,
    )


@reads_texts_once
def charts(state: GraphState, runtime: Runtime[Context] | None = None) -> GraphState:
    ctx = get_context(runtime)
    if not ctx.charts or not state.get("report"):
        return {}
    budget = Budget.of(ctx, state)
    with texts_until(time.monotonic() + budget.seconds_left()):
        texts = cited_texts(state)
    found = candidates(state["report"])
    points = [p for p in (checked(c, texts) for c in found) if p]
    if len(points) < len(found):
        emit("chart", dropped=len(found) - len(points), reason="value or label not in the cited source's text")
    specs = choose(found, points, ctx.max_charts)
    if not specs:  # no failure: the report has nothing to draw, and the result says why
        reason = f"nothing chartable: {len(points)} checked point(s) of {len(found)} found"
        emit("chart", skipped=reason)
        return {"charts": [], "charts_skipped": reason, "usage": budget.close()}
    folder = folder_of(ctx)
    href_base = ctx.charts_href if ctx.charts_href is not None else str(folder)
    if re.match(r"[a-z][a-z0-9+.\-]+:", href_base, re.IGNORECASE):  # a URL is never a chart's path
        href_base = folder.name
    report, images = state["report"], list(state.get("chart_images") or [])
    made: list[dict[str, Any]] = []
    store = run_store()
    for spec in specs:
        digest = hashlib.sha1(json.dumps([spec["title"], points_of(spec)], sort_keys=True).encode()).hexdigest()[:8]
        stem = f"chart-{len(made) + 1}-{digest}"
        try:
            spec, files, rounds, calls = draw(ctx, budget, spec, folder, stem)
            if store is not None:
                _keep(store, stem, files, spec)
        except Exception as e:  # noqa: BLE001 - a chart that cannot be drawn is left out
            emit("error", node="charts", cause=f"chart not drawn: {describe(e)}", title=spec["title"])
            continue
        href = quote(f"{href_base.rstrip('/')}/{stem}.png" if href_base else f"{stem}.png", safe="/:._-~\\")
        block = image_markdown(spec, href, len(made) + 1)
        images.append(block.split("\n", 1)[0])
        report = place(report, spec["section"], block)
        made.append(
            {
                "title": spec["title"],
                "kind": spec["kind"],
                "section": spec["section"],
                "points": points_of(spec),
                "files": files,
                "iterations": rounds,
            }
        )
        emit(
            "chart",
            title=spec["title"],
            kind=spec["kind"],
            points=len(spec["points"]),
            files=files,
            iterations=rounds,
            model_calls=calls,
        )
    return {"report": report, "charts": made, "chart_images": images, "charts_skipped": None, "usage": budget.close()}
