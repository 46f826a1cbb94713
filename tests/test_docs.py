"""The documentation: the site builds in strict mode (a dead link, a missing page or a page left
out of the nav fails it), README.md's links resolve in the repository, the README stays short and
carries no run's time of day, its graph pictures are the graphs as wired, and the configuration
tables are what the `Context` fields give."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# a time of day (08:48, 23:31:05) that is no part of an address, a port or a version
TIME_OF_DAY = re.compile(r"(?<![\w.:/])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\w:])|\bUTC\b")
EDGE = re.compile(r"^\s*(\w+)(?:\[[^\]]*\]|\(\[[^\]]*\]\))?\s*-->\s*(\|[^|]*\|)?\s*(\w+)")


def build_site(config_dir: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=config_dir,
        env=env,
        capture_output=True,
        text=True,
    )


def copy_of_docs(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ in a scratch folder, to break."""
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_site_builds_in_strict_mode(tmp_path):
    done = build_site(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "configuration/index.html", "architecture/index.html", "web-ui.png"):
        assert (tmp_path / "site" / page).is_file(), page
    assert not list((tmp_path / "site").rglob("*.py")), "the docs' scripts are no pages"


@pytest.mark.parametrize("breakage", ["dead link", "dead anchor", "page missing from the nav", "nav page missing"])
def test_a_broken_site_fails_the_strict_build(tmp_path, breakage):
    (tmp_path / "copy").mkdir()
    site = copy_of_docs(tmp_path / "copy")
    page = site / "docs" / "tests.md"
    config = site / "mkdocs.yml"
    if breakage == "dead link":
        page.write_text(page.read_text() + "\nSee [the missing page](missing.md).\n")
    elif breakage == "dead anchor":
        page.write_text(page.read_text() + "\nSee [the CLI](cli.md#no-such-heading).\n")
    elif breakage == "page missing from the nav":
        (site / "docs" / "orphan.md").write_text("# Orphan\n")
    else:
        config.write_text(config.read_text().replace("tests.md", "no-such-page.md"))
    done = build_site(site, tmp_path / "site")
    assert done.returncode != 0, breakage
    assert "Aborted" in done.stdout + done.stderr


def markdown_links(text: str) -> list[str]:
    """Every link and image target of a Markdown text (code and fenced blocks aside)."""
    targets = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        for child in token.children or ():
            if child.type == "link_open":
                targets.append(child.attrs["href"])
            elif child.type == "image":
                targets.append(child.attrs["src"])
    return targets


def github_slugs(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (code blocks aside)."""
    slugs, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"^#{1,6}\s+(.*?)\s*$", line)):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            slugs.add(slug)
    return slugs


def test_every_relative_link_of_the_readme_resolves():
    targets = markdown_links(README.read_text(encoding="utf-8"))
    relative = [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]
    assert len(relative) >= 20, relative  # the README points at its reference pages
    for target in relative:
        path, _, anchor = target.partition("#")
        file = (ROOT / path).resolve() if path else README
        assert file.is_relative_to(ROOT) and file.exists(), f"README.md links to {target}: no such file"
        if anchor:
            assert anchor in github_slugs(file), f"README.md links to {target}: no such heading"


def test_readme_links_that_point_nowhere_are_found():
    """The link check itself: a dead link is caught by the parser the test uses."""
    text = "See [a page](docs/nowhere.md) and ![a picture](docs/none.png).\n```\n[not a link](x.md)\n```\n"
    assert markdown_links(text) == ["docs/nowhere.md", "docs/none.png"]


def test_the_readme_is_short_and_carries_no_time_of_day():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 400
    found = [line for line in lines if TIME_OF_DAY.search(line)]
    assert not found, found
    # the figures keep their date and commit
    assert re.search(r"on \d{4}-\d{2}-\d{2}, commit [0-9a-f]{7}", README.read_text(encoding="utf-8"))


def test_no_page_carries_a_run_diary_or_a_path_outside_the_repository():
    for path in [README, *sorted(DOCS.glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert not TIME_OF_DAY.search(text), f"{path.name}: {TIME_OF_DAY.search(text).group(0)}"
        assert "DESIGN.md" not in text and "/work/" not in text, path.name


def test_the_time_of_day_pattern():
    for text in ("at 08:48 UTC", "04:31-04:50", "2026-11-27, 23:31:05", "UTC"):
        assert TIME_OF_DAY.search(text), text
    for text in ("http://127.0.0.1:2024/ui/", "ollama:qwen3:4b", "qwen3:30b-a3b", "ratio 1:2", "1.6:1"):
        assert not TIME_OF_DAY.search(text), text


def mermaid_edges(path: Path) -> list[set[tuple[str, str, bool]]]:
    """Each Mermaid block's edges as (source, target, labelled), START/END as LangGraph names them."""
    blocks = re.findall(r"```mermaid\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    names = {"START": "__start__", "END": "__end__"}
    out = []
    for block in blocks:
        edges = set()
        for line in block.splitlines():
            if m := EDGE.match(line):
                edges.add((names.get(m.group(1), m.group(1)), names.get(m.group(3), m.group(3)), bool(m.group(2))))
        out.append(edges)
    return out


def compiled_edges(graph) -> set[tuple[str, str, bool]]:
    """A compiled graph's edges; a conditional edge is drawn with a label."""
    return {(e.source, e.target, e.conditional) for e in graph.get_graph().edges}


@pytest.mark.parametrize("page", ["README.md", "docs/graphs.md"])
def test_the_graph_pictures_are_the_graphs_as_wired(page):
    from deepresearch.graphs import deep, iterative

    pictures = mermaid_edges(ROOT / page)
    assert len(pictures) == 2, page
    assert pictures[0] == compiled_edges(iterative.graph)
    assert pictures[1] == compiled_edges(deep.graph)


def context_tables():
    spec = importlib.util.spec_from_file_location("context_table", DOCS / "context_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_tables_are_the_context_fields():
    from dataclasses import fields

    from deepresearch.config import Context

    tables = context_tables()
    for path in tables.FILES:
        text = path.read_text(encoding="utf-8")
        assert "<!-- context-table:" in text, path.name
        assert tables.render(text) == text, f"{path.name}: stale configuration table: run make docs"
    reference = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for f in fields(Context):
        assert f"| `{f.name}` | " in reference, f.name
    assert "| `max_tokens` | `40000` | `--max-tokens` |" in reference
    assert "| `max_sections` | `5` | `--sections` |" in reference
