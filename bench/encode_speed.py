"""How fast can the encyclopedia's 10,033 summaries be encoded on this machine, and what would make
it faster without changing the vectors? Prints, in one run:

1. the summaries' token lengths (the model reads at most 128) and the padding left by the
   length-sorted batching;
2. the arithmetic: the encoder's floating-point operations for the corpus, this machine's matrix
   product rate (ONNX Runtime's MatMul, one thread, per CPU second), and so the shortest time the
   float32 encoding can take on the usable cores;
3. the graphs, on a sample (every `--every`-th summary), each batch run by each graph in turn so a
   change in the machine's load falls on all alike: float32 as written by the product, float32
   fused (com.microsoft Attention, SkipLayerNormalization, BiasGelu), and int8 of each; one
   intra-op thread each, CPU seconds and each vector's cosine to the product's float32 vectors;
4. the batch size: float32 in batches of 256 to 2048 tokens (the product's BATCH_TOKENS: 512), likewise;
5. with `--full`: the product's own encoding of every summary (float32, then int8 with `--int8`),
   all usable cores, wall and CPU seconds with the load average before and after.

Nothing here writes the user's cache: the graphs are written to a temporary folder.

    python -m bench.encode_speed [--every 20] [--full] [--int8]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from deepresearch.embeddings import minilm
from deepresearch.tools.wiki import DENSE_TOKENS, WikiSearch

FEED_FORWARD = 4  # the intermediate layer's width, in hidden widths (1536 = 4 x 384)


def flops(lengths: np.ndarray, hidden: int = minilm.DIMENSIONS, layers: int = minilm.LAYERS) -> float:
    """Multiply-adds (x2) of the encoder for texts of `lengths` tokens: per token and layer the query,
    key and value, output and feed-forward products (2 x 12 x hidden^2), and the attention's scores and
    mix (2 x 2 x length x hidden)."""
    per_token = 2 * (3 + 1 + 2 * FEED_FORWARD) * hidden * hidden * layers
    return float(np.sum(per_token * lengths + 4 * layers * hidden * lengths * lengths))


def gemm_rate(repeats: int = 300) -> float:
    """FLOP per CPU second of ONNX Runtime's MatMul on one thread, at the feed-forward's shape (512
    tokens x 384 by 384 x 1536)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m, k, n = 512, minilm.DIMENSIONS, FEED_FORWARD * minilm.DIMENSIONS
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.random((k, n), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [weight],
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "matmul.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
        session = minilm.make_session(path, 1)
    x = rng.random((m, k), np.float32)
    for _ in range(20):
        session.run(None, {"x": x})
    started = time.process_time()
    for _ in range(repeats):
        session.run(None, {"x": x})
    return 2 * m * k * n * repeats / (time.process_time() - started)


def interleaved(
    sessions: dict[str, Any], ids: list[list[int]], budgets: dict[str, int]
) -> dict[str, tuple[np.ndarray, float]]:
    """Each named session's vectors of `ids` and its CPU seconds, the batches (of its budget of tokens)
    run in turn: the first batch of each, then the second of each, and so on."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    plans = {name: minilm.batches(order, [len(i) for i in ids], 10**6, budgets[name]) for name in sessions}
    out = {name: np.zeros((len(ids), minilm.DIMENSIONS), np.float32) for name in sessions}
    cpu = dict.fromkeys(sessions, 0.0)
    # the same share of the texts at each turn, whatever the batch size
    steps = 64
    for step in range(steps):
        for name, session in sessions.items():
            plan = plans[name]
            for rows in plan[step * len(plan) // steps : (step + 1) * len(plan) // steps]:
                started = time.process_time()
                out[name][rows] = minilm.run(session, [ids[i] for i in rows])
                cpu[name] += time.process_time() - started
    return {name: (out[name], cpu[name]) for name in sessions}


def _cosines(a: np.ndarray, b: np.ndarray) -> str:
    c = np.sum(a * b, axis=1)
    return f"cosine to float32 mean {c.mean():.6f}, min {c.min():.6f}"


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=20, help="the sample: every N-th summary (default 20)")
    parser.add_argument("--full", action="store_true", help="also the product's encoding of every summary")
    parser.add_argument("--int8", action="store_true", help="with --full: int8 too")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"{time.strftime('%Y-%m-%d %H:%M')} UTC, {cores} usable cores, load average {_load()}")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = minilm.MiniLM(threads=1, cache_root=root)  # writes the plain float32 graph under root
        texts = WikiSearch(embedder=model)._dense_texts()
        ids = model.tokens(texts)  # at most MAX_TOKENS each, the encyclopedia's cap (DENSE_TOKENS) too
        lengths = np.array([len(i) for i in ids])
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        padded = sum(len(r) * lengths[r[-1]] for r in minilm.batches(order, list(lengths), 64))
        print(
            f"1. {len(ids)} summaries, tokens a summary: mean {lengths.mean():.1f}, median {np.median(lengths):.0f}, "
            f"90th percentile {np.percentile(lengths, 90):.0f}; {np.mean(lengths >= minilm.MAX_TOKENS):.1%} cut at "
            f"{minilm.MAX_TOKENS}, none longer; padding {padded / lengths.sum() - 1:.3%} of the tokens run"
        )
        total, rate = flops(lengths), gemm_rate()
        print(
            f"2. {total / 1e12:.1f} TFLOP for the corpus; MatMul {rate / 1e9:.0f} GFLOP per CPU second (one thread): "
            f"at least {total / rate / cores:.0f} s on {cores} cores in float32, whatever the graph (load {_load()})"
        )

        fused = root / "fused.onnx"
        minilm.write_graph(minilm.model_dir() or root, fused, fused=True)
        graphs = {"float32": model.graph, "float32 fused": fused}
        for name, graph in list(graphs.items()):
            quantized = root / f"{graph.stem}-int8.onnx"
            minilm.quantize_graph(graph, quantized)
            graphs[name.replace("float32", "int8")] = quantized
        sample = ids[:: args.every]
        print(f"3. graphs, {len(sample)} summaries (every {args.every}th), one thread each, load {_load()}:")
        sessions = {name: minilm.make_session(graph, 1) for name, graph in graphs.items()}
        runs = interleaved(sessions, sample, dict.fromkeys(sessions, minilm.BATCH_TOKENS))
        base, base_cpu = runs["float32"]
        for name, (vectors, cpu) in runs.items():
            print(
                f"   {name:14} {cpu:6.1f} CPU s ({cpu / base_cpu:.2f} of float32; the corpus on {cores} cores: "
                f"{cpu * len(ids) / len(sample) / cores:.0f} s), {_cosines(vectors, base)}"
            )
        print(f"   (load {_load()})")

        budgets = {f"{b} tokens": b for b in (256, 512, 1024, 2048)}
        print(f"4. float32 batches, one thread, load {_load()}:")
        plain = minilm.make_session(model.graph, 1)
        runs = interleaved(dict.fromkeys(budgets, plain), sample, budgets)
        for name, (vectors, cpu) in runs.items():
            print(f"   {name:12} {cpu:6.1f} CPU s, {_cosines(vectors, base)}")
        print(f"   (load {_load()})")

    if args.full:
        reference: np.ndarray | None = None
        for precision in (minilm.FLOAT32, minilm.INT8) if args.int8 else (minilm.FLOAT32,):
            product = minilm.MiniLM(threads=1, precision=precision)  # the product's graphs, in the user's cache
            before, cpu, started = _load(), time.process_time(), time.monotonic()
            vectors = product.encode(texts, max_tokens=DENSE_TOKENS)
            wall, cpu = time.monotonic() - started, time.process_time() - cpu
            same = "" if reference is None else f", {_cosines(vectors, reference)}"
            reference = vectors if reference is None else reference
            print(
                f"5. the product's {precision} encoding of the {len(texts)} summaries on {cores} cores: {wall:.1f} s "
                f"({cpu:.1f} CPU s), load {before} before, {_load()} after{same}"
            )


if __name__ == "__main__":
    main()
