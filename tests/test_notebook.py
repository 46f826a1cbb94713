"""examples/quickstart.ipynb runs offline, top to bottom, on the embedded local model.

The notebook is executed with nbclient in a kernel that runs this virtualenv's Python (a
kernelspec written to a scratch JUPYTER_PATH, so a user's own "python3" kernel cannot get
in the way). The committed notebook carries no outputs; the executed copy is checked for
the progress lines, the outline review, and a cited report.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.helpers import citations_resolve

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
KERNEL = "deepresearch-test-venv"


def kernelspec(folder: Path) -> Path:
    spec = folder / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "deepresearch (test venv)",
                "language": "python",
            }
        )
    )
    return folder


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] in ("display_data", "execute_result"):
            data = out.get("data", {})
            parts.append(data.get("text/markdown") or data.get("text/plain") or "")
        elif out["output_type"] == "error":
            parts.append("\n".join(out.get("traceback", [])))
    return "".join(parts)


def test_committed_notebook_has_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_quickstart_notebook_runs_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(kernelspec(tmp_path / "jupyter")))
    for key in ("OPENAI_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, kernel_name=KERNEL, timeout=300, startup_timeout=120, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the traceback, if a cell fails

    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [text_of(c) for c in code]
    everything = "\n".join(outputs)
    assert not any(o["output_type"] == "error" for c in code for o in c.outputs)

    # the plan phase streamed progress and stopped at the review
    plan = next(o for o in outputs if "Proposed outline:" in o)
    assert "planning the outline" in plan and "outline: " in plan
    assert "waiting at: ('outline_review',)" in plan
    outline = re.findall(r"^  - (.+): ", plan, re.M)
    assert 1 <= len(outline) <= 2

    # after accept: sections researched, the run finished
    research = next(o for o in outputs if "finished:" in o)
    assert "finished: True" in research
    assert "section 1 done" in research and "synthesizing" in research and "done (" in research

    # the report was displayed as Markdown, with resolvable citations and Wikipedia sources
    report = next(text_of(c) for c in code if any("text/markdown" in o.get("data", {}) for o in c.outputs))
    assert report.startswith("# ")
    _, _, sources = report.partition("## Sources")
    listed = [{"id": int(n), "url": url} for n, url in re.findall(r"^\[(\d+)\] .* — (\S+)$", sources, re.M)]
    assert citations_resolve(report, listed)  # every [n] resolves, every listed source is cited
    assert all(s["url"].startswith("https://en.wikipedia.org/wiki/") for s in listed)
    for title in outline:
        assert f"## {title}" in report

    assert "model calls: " in everything and "sources:" in everything
