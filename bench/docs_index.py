"""A docs folder of 100 PDFs: how fast the first run reads it (pages per second) and how soon
the second run, over the unchanged folder, starts searching.

    python -m bench.docs_index                 100 PDFs: Debian's LaTeX manuals, topped up with made ones
    python -m bench.docs_index --folder DIR    a folder of your own (read as it is)

Each run is a process of its own, as two `deepresearch --search docs:DIR` runs are, with a
cache folder made for the benchmark (the first run finds it empty). "Starts searching": from
opening the folder's index to the first search's results, after the modules are imported
(their import time is printed apart). Wall clock on whatever machine runs this; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXDOCS = Path("/usr/share/doc/texlive-doc/latex/base")
QUERY = "Why is the TeX text extended encoding called the Cork encoding?"
WORDS = (
    "harbour lighthouse granite tide keeper lamp signal coast storm beacon reef channel pilot ferry "
    "island current chart compass anchor hull sail mast rope deck"
).split()


def fill(folder: Path, count: int) -> str:
    """`folder` with `count` PDFs: the manuals of texlive-latex-base-doc when installed, the rest
    made with reportlab (20 pages of text each). Says what it holds."""
    from reportlab.pdfgen import canvas

    folder.mkdir(parents=True, exist_ok=True)
    real = sorted(TEXDOCS.glob("*.pdf"))[:count] if TEXDOCS.is_dir() else []
    for p in real:
        (folder / p.name).write_bytes(p.read_bytes())
    made = count - len(real)
    for n in range(made):
        c = canvas.Canvas(str(folder / f"made-{n:03d}.pdf"), invariant=1)
        for page in range(20):
            for line in range(45):
                words = [WORDS[(n * 7 + page * 3 + line + i) % len(WORDS)] for i in range(12)]
                c.drawString(50, 800 - 16 * line, f"{page}.{line} " + " ".join(words) + ".")
            c.showPage()
        c.save()
    return f"{len(real)} manuals of texlive-latex-base-doc + {made} made with reportlab (20 pages each)"


def child(folder: str) -> None:
    """One run: import, open the folder's index, search once; the figures as JSON on stdout."""
    t0 = time.perf_counter()
    from deepresearch.tools.docs import DocsSearch

    t1 = time.perf_counter()
    docs = DocsSearch(folder)
    t2 = time.perf_counter()
    hits = docs.search(QUERY, 5)
    t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": t1 - t0,
                "open_s": t2 - t1,
                "search_s": t3 - t2,
                "files": len(docs.files),
                "units": docs.index.size,
                "pages_read": docs.index.read_pages,
                "read_s": docs.index.read_seconds,
                "skipped": len(docs.skipped),
                "first_hit": hits[0].url.rsplit("/", 1)[-1] if hits else None,
            }
        )
    )


def run(folder: Path, cache: Path) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.docs_index", "--child", str(folder)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", help="a folder of documents to read as it is (default: 100 PDFs made here)")
    parser.add_argument("--count", type=int, default=100, help="how many PDFs the made folder holds")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-docs-") as tmp:
        folder = Path(args.folder).resolve() if args.folder else Path(tmp) / "pdfs"
        what = f"{folder} as it is" if args.folder else fill(folder, args.count)
        cache = Path(tmp) / "cache"
        first = run(folder, cache)
        second = run(folder, cache)
    start = second["open_s"] + second["search_s"]
    print(f"docs folder: {what}")
    print(
        f"first run:  {first['files']} files, {first['pages_read']} pages with text read in {first['open_s']:.1f} s "
        f"({first['pages_read'] / max(first['open_s'], 1e-9):.0f} pages/s; parsing alone "
        f"{first['pages_read'] / max(first['read_s'], 1e-9):.0f} pages/s); {first['skipped']} skipped"
    )
    print(
        f"second run: {second['pages_read']} pages read again; index opened in {second['open_s']:.3f} s, first "
        f"search {second['search_s']:.3f} s: searching starts {start:.2f} s after the run opens the folder "
        f"(imports before that: {second['import_s']:.2f} s)"
    )
    print(f"first hit of {QUERY!r}: {second['first_hit']}")


if __name__ == "__main__":
    main()
