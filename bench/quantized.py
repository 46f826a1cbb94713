"""Does an int8 session of the embedding model keep the same sources as float32? For every question
of eval/questions.json, the encyclopedia's first k articles (hybrid ranking) with the corpus and the
query encoded by float32 against int8 (the product's int8 session: ONNX Runtime's dynamic quantization, a scale for each output channel): how many questions keep
the same list, and the same set. Encodes the corpus once with int8 (minutes on 2 cores).

    python -m bench.quantized      (the float32 vectors are `deepresearch index`'s)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from deepresearch.embeddings.dense import DenseIndex, hybrid_rank
from deepresearch.embeddings.minilm import FLOAT32, INT8, MiniLM
from deepresearch.tools.wiki import WikiSearch

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    floats_model, int8 = MiniLM(threads=1, precision=FLOAT32), MiniLM(threads=1, precision=INT8)
    wiki = WikiSearch(embedder=floats_model)
    floats = wiki.build_vectors()
    started = time.monotonic()
    ints = DenseIndex(int8.encode(wiki._dense_texts()))
    print(f"int8 corpus encoding: {time.monotonic() - started:.1f} s")
    cos = np.sum(floats.vectors * ints.vectors, axis=1)
    print(f"cosine to float32: mean {cos.mean():.4f}, min {cos.min():.4f}")
    sets = json.loads((ROOT / "eval" / "questions.json").read_text())
    questions = [q["q"] for part in ("iterative", "answers", "deep") for q in sets[part]]
    for k in (3, 5):
        same_list = same_set = 0
        for q in questions:
            a = [d for d, _ in hybrid_rank(q, k, wiki.index, floats_model, lambda _e: floats)]
            b = [d for d, _ in hybrid_rank(q, k, wiki.index, int8, lambda _e: ints)]
            same_list += a == b
            same_set += set(a) == set(b)
        print(f"first {k}: the same list for {same_list} of {len(questions)} questions, the same set for {same_set}")


if __name__ == "__main__":
    main()
