"""How much memory the CLI's whole first question on a docs folder takes, stage by stage.

    python -m bench.docs_memory                  Debian's LaTeX manuals (`make texdocs`), the Cork question
    python -m bench.docs_memory --folder DIR     a folder of your own
    python -m bench.docs_memory --question Q

Runs `deepresearch QUESTION --search docs:FOLDER` twice, each a process of its own with a cache
folder made for the benchmark: the first finds no index of the folder (it reads every file and
encodes every page's vector), the second opens the index the first kept. The peak is the process's
maximum resident set size as the kernel counts it (`ru_maxrss`, what `/usr/bin/time -v` prints);
the stages are told apart by the run's own progress lines (the indexing events), with the resident
size sampled every 50 ms: "start" (imports, the models, reading the question), "reading" (the
files), "encoding" (the pages' vectors), "rest" (searching, writing, checking the citations). The
encyclopedia's indexes and the embedding model's graph come from the user's index folder, as a
run's do. Figures of whatever machine runs this; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXDOCS = Path("/usr/share/doc/texlive-doc/latex/base")
QUESTION = "Why is the TeX text extended encoding called the Cork encoding?"
STAGES = ("start", "reading", "encoding", "rest")


def _stage(line: str, now: str) -> str:
    """The stage after the CLI's progress line `line` (`now`: the stage before it)."""
    if "reading the documents" in line:
        return "reading"
    if "built the vectors" in line:
        return "rest"
    if "vectors of the documents" in line:
        return "encoding"
    if "searching (" in line and now == "start":  # an index kept: the research starts at once
        return "rest"
    return now


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run(folder: Path, question: str, env: dict) -> dict:
    """One CLI run: its peak, the peak of each stage, its wall time and its last lines."""
    cmd = [sys.executable, "-m", "deepresearch.cli", question, "--search", f"docs:{folder}", "--json"]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    state = {"stage": "start"}
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip())
            state["stage"] = _stage(line, state["stage"])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    peaks = dict.fromkeys(STAGES, 0.0)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peaks[state["stage"]] = max(peaks[state["stage"]], _rss_mb(proc.pid))
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=5)
    return {
        "code": proc.returncode,
        "seconds": time.perf_counter() - started,
        "peak_mb": usage.ru_maxrss / 1024,  # the kernel's count of this process: the figure reported
        "stages": peaks,
        "tail": lines[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=TEXDOCS, help="the docs folder (default: the LaTeX manuals)")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    folder = args.folder.expanduser().resolve()
    if not folder.is_dir():
        sys.exit(f"no folder {folder}: run `make texdocs` for the LaTeX manuals, or give --folder")
    sys.path.insert(0, str(ROOT))
    from deepresearch.embeddings.index_dir import INDEX_DIR_ENV, index_dir

    with tempfile.TemporaryDirectory(prefix="bench-docs-memory-") as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            INDEX_DIR_ENV: str(index_dir()),  # the user's indexes, built once at set-up
            "XDG_CACHE_HOME": tmp,  # the folder's index: none before the first run
        }
        env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
        files = sum(1 for p in folder.rglob("*") if p.is_file())
        print(f"docs folder: {folder} ({files} files); question: {args.question!r}")
        for name in ("first", "second"):
            out = run(folder, args.question, env)
            if out["code"] != 0:
                sys.exit(f"the {name} run failed ({out['code']}): " + " | ".join(out["tail"]))
            stages = ", ".join(f"{s} {out['stages'][s]:.0f}" for s in STAGES if out["stages"][s])
            print(
                f"{name} question: peak {out['peak_mb']:.0f} MB (by stage, sampled: {stages}); {out['seconds']:.0f} s"
            )


if __name__ == "__main__":
    main()
