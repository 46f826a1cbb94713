"""Run mypy on the package as Python imports it: `python tests/typecheck.py [mypy options]`.

The package's folders are mapped by pyproject's package-dir (`graphs/` is imported as
`deepresearch.graphs`, and so `nodes/`, `state/` and `tools/`), and the editable install makes
that mapping with an import hook, which mypy cannot follow: checked where they lie, the folders
would be modules `nodes.*`, `state.*`, and every `deepresearch.state...` import an unknown (Any).
So mypy checks a tree of links laid out as the import names are (build/mypy/deepresearch: the
package's own entries, and a link per mapped folder), which pyproject's [tool.mypy] names, and
its messages are shown with the files' own paths.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "mypy"  # pyproject's [tool.mypy] mypy_path
FOLDERS = ("graphs", "nodes", "state", "tools")  # pyproject's package-dir: deepresearch.<folder>


def link_tree() -> Path:
    """(Re)make build/mypy/deepresearch: a link to each entry of deepresearch/ and to each mapped folder."""
    package = TREE / "deepresearch"
    package.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p for p in (ROOT / "deepresearch").iterdir() if p.name != "__pycache__"}
    wanted |= {name: ROOT / name for name in FOLDERS}
    for entry in package.iterdir():
        if entry.name not in wanted or not entry.is_symlink() or entry.resolve() != wanted[entry.name].resolve():
            entry.unlink()
    for name, target in wanted.items():
        if not (package / name).is_symlink():
            try:
                (package / name).symlink_to(target)
            except FileExistsError:  # another run made it meanwhile
                pass
    return package


def own_paths(text: str) -> str:
    """mypy's messages with the files' own paths instead of the link tree's."""
    tree = re.escape(f"{os.path.relpath(TREE, ROOT)}/deepresearch/")
    text = re.sub(rf"(^|\s){tree}({'|'.join(FOLDERS)})/", r"\1\2/", text, flags=re.MULTILINE)
    return re.sub(rf"(^|\s){tree}", r"\1deepresearch/", text, flags=re.MULTILINE)


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    link_tree()
    done = subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, own_paths(done.stdout), own_paths(done.stderr))


if __name__ == "__main__":
    result = run(sys.argv[1:])
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.exit(result.returncode)
