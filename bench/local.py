"""Row 6: the embedded local model, end to end, for one iterative question.

SmolLM2-135M in-process (llama.cpp) with the offline encyclopedia, default context
otherwise, run through `deepresearch.runtime.runner.research` like the CLI does. The user's own
cache is used (the wiki's BM25 index the CLI builds once). Loading the model and the index
are timed apart from the research itself; the total is what a first CLI run costs.
"""

from __future__ import annotations

import time

from bench.harness import QUESTION, user_cache


def run(*, question: str = QUESTION, log=print) -> dict:
    from deepresearch.config import Context
    from deepresearch.llm.models import get_model
    from deepresearch.runtime.runner import research
    from deepresearch.tools import get_search

    out: dict = {"question": question, "model": "local", "search": "wiki"}
    with user_cache():
        try:
            t0 = time.monotonic()
            index = get_search("wiki")
            cold = not (index.index_dir / "ok").exists()
            index.index  # noqa: B018 - load (or build) the BM25 index
            t1 = time.monotonic()
            get_model("local")._llama()  # load the GGUF
            t2 = time.monotonic()
            result = research(question, Context(model="local", search="wiki", mode="iterative"))
            t3 = time.monotonic()
        except Exception as e:  # noqa: BLE001 - e.g. the model is not installed
            out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            log(f"  failed: {out['error']}")
            return out
    usage = result.get("usage", {})
    out.update(
        {
            "index_s": t1 - t0,
            "index_was_cold": cold,
            "load_model_s": t2 - t1,
            "research_s": t3 - t2,
            "total_s": t3 - t0,
            "llm_calls": usage.get("llm_calls"),
            "total_tokens": usage.get("total_tokens"),
            "iterations": usage.get("iterations"),
            "stopped_by": result.get("stopped_by"),
            "sources": [s["title"] for s in result.get("sources", [])],
            "report_chars": len(result.get("report", "")),
        }
    )
    per = out["research_s"] / out["llm_calls"] if out["llm_calls"] else None
    out["seconds_per_call"] = per
    log(
        f"  research {out['research_s']:.1f} s ({out['llm_calls']} calls), model load {out['load_model_s']:.1f} s, "
        f"index {out['index_s']:.1f} s{' (built)' if cold else ''}"
    )
    return out
