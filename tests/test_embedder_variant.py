"""The local model's two precisions (float32 as published, int8 weights) are two models to the
vector cache: a vector kept by one is read back by the same precision in the next process and never
taken for the other's; int8's vectors are close to float32's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from deepresearch.embeddings import minilm
from tests.conftest import ROOT

SENTENCES = [
    "The lighthouse keeper logged every passing ship in a leather book.",
    "Copper roofs turn green as they weather over decades.",
    "She tuned the old piano before the evening recital.",
    "Glaciers carve wide valleys shaped like the letter U.",
]

# a process of its own: the local model at one precision, the texts it had to encode (not found kept)
_PROCESS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from deepresearch.embeddings.minilm import MiniLM
    from deepresearch.embeddings.vector_cache import VectorCache

    class Recording(MiniLM):
        encoded: list = []

        def encode(self, texts, *args, **kwargs):
            self.encoded += list(texts)
            return super().encode(texts, *args, **kwargs)

    model = Recording(cache_root=Path({folder!r}), precision=sys.argv[1])
    VectorCache(model, root=Path({folder!r})).vectors(sys.argv[2:])
    print(model.model_id)
    print("|".join(model.encoded))
    """
)


def _in_a_process(folder, precision: str, texts: list[str]) -> tuple[str, list[str]]:
    code = _PROCESS.format(root=str(ROOT), folder=str(folder))
    r = subprocess.run([sys.executable, "-c", code, precision, *texts], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    model_id, encoded = (r.stdout.splitlines() + ["", ""])[:2]
    return model_id, [t for t in encoded.split("|") if t]


def test_each_precision_reads_back_its_own_kept_vectors_and_never_the_others(tmp_path):
    floats_id, encoded = _in_a_process(tmp_path, minilm.FLOAT32, SENTENCES[:2])
    assert encoded == SENTENCES[:2]
    ints_id, encoded = _in_a_process(tmp_path, minilm.INT8, SENTENCES[:2])
    assert ints_id != floats_id and ints_id.endswith("-int8")
    assert encoded == SENTENCES[:2]  # float32's kept vectors are not int8's: encoded anew
    _, encoded = _in_a_process(tmp_path, minilm.INT8, SENTENCES[:3])
    assert encoded == SENTENCES[2:3]  # int8's own, from the last process: only the new text
    _, encoded = _in_a_process(tmp_path, minilm.FLOAT32, SENTENCES[:2])
    assert encoded == []  # and float32's are still there for float32


def test_int8_vectors_point_where_float32s_do(tmp_path):
    floats = minilm.MiniLM(cache_root=tmp_path, precision=minilm.FLOAT32)
    ints = minilm.MiniLM(cache_root=tmp_path, precision=minilm.INT8)
    a, b = floats.encode(SENTENCES), ints.encode(SENTENCES)
    assert not np.allclose(a, b, atol=1e-4)  # other weights
    assert (np.sum(a * b, axis=1) > 0.98).all()  # nearly the same meaning, each sentence
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-4)
    # and the graph is quantized once, beside float32's: a second model reads the file written
    written = ints.graph.stat().st_mtime_ns
    again = minilm.MiniLM(cache_root=tmp_path, precision=minilm.INT8)
    assert again.graph == ints.graph and again.graph.stat().st_mtime_ns == written
    assert again.graph.parent == floats.graph.parent and again.graph != floats.graph


def test_the_fused_graph_gives_the_plain_graphs_vectors(tmp_path):
    """ONNX Runtime's fused operators (bench/encode_speed.py measures them) compute what the plain
    graph does, padding included: texts of several lengths in one batch."""
    plain = minilm.MiniLM(cache_root=tmp_path)
    fused = tmp_path / "fused.onnx"
    minilm.write_graph(minilm.model_dir(), fused, fused=True)
    texts = [*SENTENCES, "Rain.", "A long night train crossed the frozen plain while the passengers slept."]
    tokens = plain.tokens(texts)
    order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
    ids = [tokens[i] for i in order]  # shortest first, as the product batches them
    assert len(ids[0]) < len(ids[-1])  # one batch with padding
    together = minilm.run(minilm.make_session(fused, 1), ids)
    assert (np.sum(together * minilm.run(plain.session, ids), axis=1) > 0.9999).all()
    assert np.allclose(together, plain.encode(texts)[order], atol=1e-5)  # the product's own encoding
