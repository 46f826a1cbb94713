"""The determinism check: a fixed set of questions run offline, every report written to a folder.

    python -m bench.reports --out /tmp/reports-before
    (change the code)
    python -m bench.reports --out /tmp/reports-after && diff -r /tmp/reports-before /tmp/reports-after

A speed change must not change a report. The embedded model samples and times its calls, so its
output varies from run to run; here the spec `local` is a fake (`Deterministic`, a LocalChatModel
that never loads llama.cpp and answers every call with the same empty reply), so the pipeline runs
its embedded-model path (`tiny_model`: the checks, the extractive writer) on the offline
encyclopedia, and the same code gives the same bytes. Then the capable-model path: bench's stub
model and search (deterministic replies), iterative and deep (`run_stub`). The questions: eval/questions.json's
hand-written iterative, deep and answer sets (all of them, or the first --per-set of each) and the
generated questions of a development seed (never the test seed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from deepresearch.llm.models import LocalChatModel, register_model, unregister_model

ROOT = Path(__file__).resolve().parent.parent
KEYS = (
    "report",
    "sources",
    "citations",
    "stopped_by",
    "outline",
    "concepts",
    "covered",
    "removed",
    "errors",
    "sections",
    "usage",
)


class Deterministic(LocalChatModel):
    """The embedded model's class (so the pipeline takes its path) answering '' to every call."""

    def count_tokens(self, messages) -> int:
        return sum(len(str(m.content)) for m in messages) // 4 + 4

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        message = AIMessage(
            content="",
            usage_metadata={
                "input_tokens": self.count_tokens(messages),
                "output_tokens": 0,
                "total_tokens": self.count_tokens(messages),
            },
            response_metadata={"finish_reason": "stop"},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def _timeless(value):
    """`value` without its wall-clock fields (a usage's seconds), which no two runs share."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "second" not in k and not k.endswith("_at")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def questions(seed: int, generated: int, per_set: int) -> list[tuple[str, str]]:
    """(mode, question) pairs: the hand-written sets' first `per_set` and `generated` of `seed`'s."""
    sys.path.insert(0, str(ROOT / "eval"))
    import generate  # eval/generate.py

    if seed == 246826:
        raise SystemExit("the test seed's questions are never run here")
    data = json.loads((ROOT / "eval" / "questions.json").read_text(encoding="utf-8"))
    out = [("iterative", x["q"]) for x in data["iterative"][:per_set]]
    out += [("deep", x["q"]) for x in data["deep"][:per_set]]
    out += [("iterative", x["q"]) for x in data["answers"][:per_set]]
    items = generate.generate(seed, generated)
    out += [("iterative", x["q"]) for x in items]
    out += [("deep", x["q"]) for x in items if x["kind"] in ("compare", "broad")][:6]
    return out


def run_all(out: Path, seed: int, generated: int, per_set: int, log=sys.stderr) -> dict:
    from deepresearch.runtime.runner import research

    register_model("local", Deterministic(model_path="/nonexistent"))
    out.mkdir(parents=True, exist_ok=True)
    digests = {}
    started = time.monotonic()
    try:
        for i, (mode, q) in enumerate(questions(seed, generated, per_set)):
            t = time.monotonic()
            result = research(q, {"model": "local", "search": "wiki", "max_sections": 3}, mode=mode)
            kept = _timeless({k: result.get(k) for k in KEYS})
            text = json.dumps({"mode": mode, "question": q, **kept}, indent=1, sort_keys=True, default=str)
            name = f"{i:02d}-{mode}.json"
            (out / name).write_text(text, encoding="utf-8")
            digests[name] = hashlib.sha256(text.encode()).hexdigest()[:12]
            print(f"[{i:02d}] {time.monotonic() - t:5.1f}s {mode:9s} {digests[name]} {q[:70]}", file=log)
    finally:
        unregister_model("local")
    print(f"{len(digests)} reports in {time.monotonic() - started:.0f} s -> {out}", file=log)
    return digests


STUB_QUESTIONS = (
    "Who designed the Eiffel Tower, and why was it built?",
    "How did Gustave Eiffel's company build the iron lattice of the tower?",
)


def run_stub(out: Path, log=sys.stderr) -> dict:
    """The capable-model path (the single writer, grounding, the tracer, a deep outline): bench's
    stub model and search on 127.0.0.1 (deterministic replies), one section at a time."""
    from bench.harness import make_stub, responder, setup_env, stub_context
    from deepresearch.runtime.runner import research

    setup_env()
    digests = {}
    with make_stub(responder(sections=3)) as stub:
        for i, q in enumerate(STUB_QUESTIONS):
            for mode, over in (
                ("iterative", {"max_iterations": 3}),
                ("deep", {"max_iterations": 2, "max_sections": 3, "section_concurrency": 1}),
            ):
                result = research(q, stub_context(stub, **over), mode=mode)
                kept = _timeless({k: result.get(k) for k in KEYS})
                text = json.dumps({"mode": mode, "question": q, **kept}, indent=1, sort_keys=True, default=str)
                name = f"stub-{i:02d}-{mode}.json"
                (out / name).write_text(text, encoding="utf-8")
                digests[name] = hashlib.sha256(text.encode()).hexdigest()[:12]
                print(f"[stub {i:02d}] {mode:9s} {digests[name]} {q[:70]}", file=log)
    return digests


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--seed", type=int, default=1001, help="a development seed of generated questions")
    p.add_argument("--generated", type=int, default=40, help="generated questions (default 40)")
    p.add_argument("--per-set", type=int, default=100, help="questions of each hand-written set (default all)")
    args = p.parse_args(argv)
    run_all(args.out, args.seed, args.generated, args.per_set)
    run_stub(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
