"""Does an int8 session of the embedding model keep the same sources as float32? For every question
of eval/questions.json, the encyclopedia's first k articles (hybrid ranking) with the corpus and the
query encoded by float32 against int8 (ONNX Runtime's dynamic quantization): how many questions keep
the same list, and the same set. Encodes the corpus once with int8 (minutes on 2 cores).

    python -m bench.quantized            (the float32 vectors are `deepresearch index`'s)
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from deepresearch.embeddings.dense import DenseIndex, hybrid_rank
from deepresearch.embeddings.minilm import MiniLM
from deepresearch.tools.wiki import WikiSearch

ROOT = Path(__file__).resolve().parent.parent


class _Session:
    """MiniLM's encoding with another ONNX graph (the int8 one)."""

    def __init__(self, model: MiniLM, graph: Path):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.model, self.model_id = model, "int8"
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str]) -> np.ndarray:
        saved = self.model.session, self.model._bulk
        self.model.session = self.model._bulk = self.session
        try:
            return self.model.encode(texts)
        finally:
            self.model.session, self.model._bulk = saved


def main() -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = MiniLM(threads=1)
    wiki = WikiSearch(embedder=model)
    floats = wiki.build_vectors()
    graph = Path(tempfile.mkdtemp()) / "int8.onnx"
    quantize_dynamic(str(model.graph), str(graph), weight_type=QuantType.QInt8)
    int8 = _Session(model, graph)
    started = time.monotonic()
    ints = DenseIndex(int8.encode(wiki._dense_texts()))
    print(f"int8 corpus encoding: {time.monotonic() - started:.1f} s")
    sets = json.loads((ROOT / "eval" / "questions.json").read_text())
    questions = [q["q"] for part in ("iterative", "answers", "deep") for q in sets[part]]
    for k in (3, 5):
        same_list = same_set = 0
        for q in questions:
            a = [d for d, _ in hybrid_rank(q, k, wiki.index, model, lambda _e: floats)]
            b = [d for d, _ in hybrid_rank(q, k, wiki.index, int8, lambda _e: ints)]
            same_list += a == b
            same_set += set(a) == set(b)
        print(f"first {k}: the same list for {same_list} of {len(questions)} questions, the same set for {same_set}")


if __name__ == "__main__":
    main()
