"""The layout's promises, read from the code: few modules at the top of `deepresearch/`, node
modules imported by the graphs alone, no import cycle (imports inside functions included), no
module over 450 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the import name of each source folder (pyproject's package-dir)
FOLDERS = {"deepresearch": "deepresearch", "graphs": "deepresearch.graphs", "nodes": "deepresearch.nodes",
           "state": "deepresearch.state", "tools": "deepresearch.tools"}


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
    offenders = {name: sorted(d for d in deps if d.startswith("deepresearch.nodes."))
                 for name, deps in graph().items() if not name.startswith("deepresearch.graphs")}
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
    long = {str(p.relative_to(ROOT)): n for p in modules().values()
            if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}
