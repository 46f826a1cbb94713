"""The layout's promises, read from the code: few modules at the top of `deepresearch/`, node
modules imported by the graphs alone, no import cycle (imports inside functions included), no
module over 450 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.no_index  # searches nothing: runs while the session builds the index (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
# the import name of each source folder (pyproject's package-dir)
FOLDERS = {
    "deepresearch": "deepresearch",
    "graphs": "deepresearch.graphs",
    "nodes": "deepresearch.nodes",
    "state": "deepresearch.state",
    "tools": "deepresearch.tools",
}


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The project modules `name` imports anywhere in its body. `from pkg import mod` counts as
    importing `pkg.mod` (the package's own `__init__` is no dependency of its modules)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            if subs:
                found.update(subs)
            elif base in known:
                found.add(base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
    return found - {name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_few_modules_at_the_top_of_the_package():
    top = [p.name for p in (ROOT / "deepresearch").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 12, sorted(top)


def test_only_graphs_import_node_modules():
    offenders = {
        name: sorted(d for d in deps if d.startswith("deepresearch.nodes."))
        for name, deps in graph().items()
        if not name.startswith("deepresearch.graphs")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_import_cycles():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_module_over_450_lines():
    long = {str(p.relative_to(ROOT)): n for p in modules().values() if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}


# The layers, bottom first: a package (or a top-level module) imports only from layers below its
# own. docs/architecture.md draws the same table; a new package gets its place here.
LAYERS = (
    ("text",),  # pure text: sentences, words, safe text, URLs, citation scoring
    (
        "language",
        "templates",
        "events",
        "files",
        "heap",
        "pacing",
        "worker_threads",
        "chat",
        "node_threads",
        "state",
    ),  # foundations, and the state schemas
    ("choices", "brief"),  # what a setting may name; the research brief
    ("embeddings",),  # text by meaning: the embedders, a corpus's vectors
    ("config",),  # the one Context
    ("llm", "store"),  # model calls and budgets; the retrieved texts
    ("tools",),  # search backends
    ("understanding", "report"),  # reading the question; checking and rendering a report
    ("research",),  # answers, comparisons, coverage, leads, what a report is written from
    ("charts", "provenance", "sections", "edit"),
    ("nodes",),
    ("graphs",),
    ("runtime", "auth"),  # running graphs; who may use the server
    ("web",),
    ("cli", "deepresearch"),  # the command line; the package's face
)
LAYER = {unit: i for i, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "deepresearch"


def test_every_package_has_a_layer():
    assert {unit_of(m) for m in modules()} - set(LAYER) == set()


def test_imports_point_down_the_layers():
    upward = sorted(
        f"{a} -> {b}"
        for a, deps in graph().items()
        for b in deps
        if unit_of(a) != unit_of(b) and LAYER[unit_of(a)] <= LAYER[unit_of(b)]
    )
    assert upward == []


# What reads the question's string: the `analyse` node's readers and the rules behind them. No other
# product module imports them; every node reads the analysis the `analyse` node stored.
READING = {
    "extract",
    "key_phrases",
    "refine",
    "described_subject",
    "merged_concepts",
    "analyse",
    "answer_kind",
    "is_broad",
    "is_comparison",
    "compared",
    "relations_of",
    "relation_of",
    "description_of",
    "aspects_of",
    "as_which",
    "hop_clause",
    "hops_of",
    "rules_reading",
    "EmbeddedReader",
    "ModelReader",
    "reader_for",
}


def test_the_question_is_read_in_one_place():
    readers: dict[str, list[str]] = {}
    for name, path in modules().items():
        if name.startswith("deepresearch.understanding"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("deepresearch.understanding"):
                used = sorted(a.name for a in node.names if a.name in READING)
                if used:
                    readers.setdefault(name, []).extend(used)
    assert readers == {"deepresearch.nodes.analyse": ["reader_for"]}
