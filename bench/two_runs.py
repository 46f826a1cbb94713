"""Row 12: one question on the embedded defaults, alone and with a second run beside it.

Two processes (as two terminals, or a test worker beside a run, would be), each loading the model
and the indexes before the clock starts, then researching one held-out-style question (none of the
evaluation's) on the iterative graph. The figure is the first run's wall time with the second one
running beside it, divided by its wall time alone (the goal is at most 2.2).

    python -m bench.two_runs
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

QUESTIONS = ("When did the Hubble Space Telescope reach orbit?", "Which river flows through Budapest?")
WORKER = """
import sys, time
from deepresearch.config import Context
from deepresearch.llm.models import get_model
from deepresearch.runtime.runner import research
from deepresearch.tools import get_search
get_search("wiki").search("warm", 1)
get_model("local")._llama()
research("What is a lighthouse?", Context(model="local", search="wiki", mode="iterative"))  # warm the caches
print("ready", flush=True)
sys.stdin.readline()
started = time.monotonic()
research(sys.argv[1], Context(model="local", search="wiki", mode="iterative"))
print(f"{time.monotonic() - started:.3f}", flush=True)
"""


def _start(question: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", WORKER, question],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def _go(procs: list[subprocess.Popen]) -> list[float]:
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in procs:
        assert p.stdout is not None
        out.append(float(p.stdout.readline()))
        p.wait()
    return out


def run(*, repeats: int = 2, log=print) -> dict:
    alone, together = [], []
    for _ in range(repeats):
        alone.append(_go([_start(QUESTIONS[0])])[0])
        together.append(_go([_start(QUESTIONS[0]), _start(QUESTIONS[1])])[0])
        log(f"  alone {alone[-1]:.1f} s, beside a second run {together[-1]:.1f} s")
    a, t = statistics.median(alone), statistics.median(together)
    return {"alone_s": a, "together_s": t, "ratio": t / a if a else None, "repeats": repeats}


def print_rows(r: dict) -> list[str]:
    ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "-"
    return [
        f"12. One question on the embedded defaults, alone and beside a second run (median of {r['repeats']}): "
        f"{r['alone_s']:.1f} s alone, {r['together_s']:.1f} s beside another run; ratio {ratio} (goal <= 2.2)"
    ]


if __name__ == "__main__":
    started = time.monotonic()
    print("\n".join(print_rows(run())))
