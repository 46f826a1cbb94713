"""Row 11: the embedded model's speed, tokens per second, by llama.cpp thread count, alone and with
another core busy.

SmolLM2-135M (the `local` extra's GGUF) loaded by llama-cpp-python as the product loads it. For each
thread count: a prompt of about 300 tokens read (prompt tokens per second) and 64 tokens generated
(generation tokens per second, the end-of-text token held off so every run generates all 64). Then
the same with a busy loop in another process, the way a second run, a test worker or any other job
takes a core. Also prints llama.cpp's own report of the CPU features the installed library was
built for (the portable build has no AVX512 and no AMX).

    python -m bench.llama_speed [--threads 1,2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time

PROMPT_WORDS = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889. "
)
GENERATE = 64


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _measure(llama, repeats: int) -> dict:
    prompt_tokens = llama.tokenize((PROMPT_WORDS * 7).encode())
    eos = llama.token_eos()
    p_rates, g_rates = [], []
    for i in range(repeats):
        tokens = llama.tokenize(f"Note {i}. ".encode()) + prompt_tokens  # no prompt cache across repeats
        llama.reset()
        t0 = time.perf_counter()
        llama.eval(tokens)
        t1 = time.perf_counter()
        p_rates.append(len(tokens) / (t1 - t0))
        out = llama.create_completion(tokens, max_tokens=GENERATE, temperature=0.0, logit_bias={eos: -1e9})
        t2 = time.perf_counter()
        n = out["usage"]["completion_tokens"]
        g_rates.append(n / (t2 - t1))  # the prompt is cached: this is the generation's own time
    return {
        "prompt_tokens": len(prompt_tokens),
        "prompt_tps": statistics.median(p_rates),
        "generate_tps": statistics.median(g_rates),
    }


def run(*, threads: tuple[int, ...] = (1, 2), repeats: int = 3, log=print) -> dict:
    import llama_cpp
    from llama_cpp import Llama

    from deepresearch.choices.threads import local_threads
    from deepresearch.llm.models import local_model_path

    out: dict = {
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "default_threads": local_threads(),
        "rows": [],
    }
    log(f"  llama.cpp: {out['system_info']}")
    path = str(local_model_path())
    for busy in (False, True):
        stop = mp.Event()
        spinner = mp.Process(target=_spin, args=(stop,), daemon=True) if busy else None
        if spinner:
            spinner.start()
        try:
            for n in threads:
                llama = Llama(model_path=path, n_ctx=2048, n_threads=n, n_threads_batch=n, verbose=False, seed=7)
                try:
                    r = _measure(llama, repeats)
                finally:
                    llama.close()
                r.update({"threads": n, "other_core_busy": busy})
                out["rows"].append(r)
                log(
                    f"  threads {n}, other core {'busy' if busy else 'idle'}: prompt {r['prompt_tps']:.0f} tok/s, "
                    f"generation {r['generate_tps']:.1f} tok/s"
                )
        finally:
            stop.set()
            if spinner:
                spinner.join()
    return out


def print_rows(r: dict) -> list[str]:
    from bench.harness import table

    head = (
        f"11. The embedded model's speed (SmolLM2-135M, llama.cpp), tokens per second by thread count; "
        f"'busy': a busy loop in another process\n   the library's build: {r['system_info']}\n"
        f"   the default thread count here: {r['default_threads']} (DEEPRESEARCH_LOCAL_THREADS overrides it)"
    )
    rows = [
        [x["threads"], "busy" if x["other_core_busy"] else "idle", f"{x['prompt_tps']:.0f}", f"{x['generate_tps']:.1f}"]
        for x in r["rows"]
    ]
    return [head, table(["threads", "other core", "prompt tok/s", "generation tok/s"], rows)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    r = run(threads=tuple(int(x) for x in a.threads.split(",")), repeats=a.repeats)
    print("\n".join(print_rows(r)))


if __name__ == "__main__":
    main()
