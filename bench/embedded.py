"""Row 10: how long a question takes on the embedded defaults (SmolLM2 in-process, the offline
encyclopedia), median of a few runs of an iterative and of a deep question.

Run after row 6 (which loads the model and the index and times that apart): here every run
finds them loaded, so the figures are the research's own seconds, the model's calls included.
Each run asks another question (eval/questions.json's first ones): the same prompt twice would
find llama.cpp's prompt cache warm and take a fraction of the time.
A change that slows the default shows here first (`make eval` reports the same medians over
its whole set, in half an hour).
"""

from __future__ import annotations

import statistics
import time

from bench.harness import QUESTION, user_cache


def questions(repeats: int) -> dict[str, list[str]]:
    """eval/questions.json's first hand-written questions of each graph: a different question each
    run (the same prompt again would find llama.cpp's prompt cache warm), none of them row 6's."""
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).resolve().parent.parent / "eval" / "questions.json").read_text(encoding="utf-8"))
    return {
        "iterative": [x["q"] for x in data["iterative"] if x["q"] != QUESTION][:repeats],
        "deep": [x["q"] for x in data["deep"]][:repeats],
    }


def run(*, repeats: int = 3, log=print) -> dict:
    from deepresearch.config import Context
    from deepresearch.llm.models import get_model
    from deepresearch.runtime.runner import research
    from deepresearch.tools import get_search

    out: dict = {"repeats": repeats, "questions": questions(repeats)}
    with user_cache():
        try:
            get_search("wiki").index  # noqa: B018 - loaded (or built) before the clock starts
            model = get_model("local")
            model._llama()
            for mode, qs in out["questions"].items():
                runs = []
                for q in qs:
                    # as a new CLI process: no speed measured yet (the process's model keeps the slowest
                    # call's speed, and after one call slowed by a busy machine it declines the rest)
                    model._speed.clear()
                    t0 = time.monotonic()
                    result = research(q, Context(model="local", search="wiki", mode=mode))
                    runs.append(
                        {
                            "question": q,
                            "seconds": time.monotonic() - t0,
                            "llm_calls": (result.get("usage") or {}).get("llm_calls"),
                            "sources": len(result.get("sources") or []),
                        }
                    )
                    log(f"  {mode}: {runs[-1]['seconds']:.1f} s ({runs[-1]['llm_calls']} calls)")
                out[mode] = {"runs": runs, "median_s": statistics.median(x["seconds"] for x in runs)}
        except Exception as e:  # noqa: BLE001 - e.g. the model is not installed
            out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            log(f"  failed: {out['error']}")
    return out


def lines(r: dict) -> list[str]:
    if r.get("error"):
        return ["10. Embedded defaults, seconds per question", f"   failed: {r['error']}"]
    out = [f"10. Embedded defaults (model local, search wiki), seconds per question, median of {r['repeats']} runs"]
    for mode in ("iterative", "deep"):
        x = r[mode]
        runs = ", ".join(f"{y['seconds']:.1f}" for y in x["runs"])
        calls = "/".join(str(y["llm_calls"]) for y in x["runs"])
        out.append(
            f"   {mode:9s} {x['median_s']:6.1f} s  (runs {runs}; model calls {calls}): "
            + "; ".join(f'"{q}"' for q in r["questions"][mode])
        )
    return out


def summary_rows(r: dict) -> list[list[str]]:
    if r.get("error"):
        return []
    return [
        [
            "embedded defaults, median s: iterative; deep",
            f"{r['iterative']['median_s']:.1f} s; {r['deep']['median_s']:.1f} s",
        ]
    ]
