"""Vectors are worked out once: kept on disk across processes (by model id and text hash), the least
recently used dropped first in memory, one encoding when two threads ask for the same text; the
encyclopedia's vectors are new when the corpus or the token cap changes, and a remote embedder's
model id names its server."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

from deepresearch.embeddings.dense import DenseIndex
from deepresearch.embeddings.remote import RemoteEmbeddings
from deepresearch.embeddings.vector_cache import VectorCache
from tests.conftest import ROOT


class Counting:
    """An embedder of our own: a vector from each text's letters; records the texts it encodes."""

    model_id = "counting"

    def __init__(self, keeps: bool = False, hold: threading.Event | None = None):
        self.keeps_vectors = keeps
        self.encoded: list[str] = []
        self.started = threading.Event()
        self.hold = hold

    def encode(self, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        self.started.set()
        if self.hold is not None:
            self.hold.wait()
        self.encoded += texts
        cap = max_tokens or 100
        rows = [[float(sum(map(ord, t[:cap]))), float(len(t[:cap])), 1.0] for t in texts]
        v = np.asarray(rows, np.float32).reshape(len(texts), 3)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


_PROCESS = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from tests.test_vector_cache import Counting
    from deepresearch.embeddings.vector_cache import VectorCache
    embedder = Counting(keeps=True)
    VectorCache(embedder, root=Path({folder!r})).vectors(sys.argv[1:])
    print(",".join(embedder.encoded))
    """
)


def _in_a_process(folder, texts: list[str]) -> list[str]:
    code = _PROCESS.format(root=str(ROOT), folder=str(folder))
    r = subprocess.run([sys.executable, "-c", code, *texts], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [t for t in r.stdout.strip().split(",") if t]


def test_a_vector_worked_out_in_one_process_is_read_by_the_next(tmp_path):
    assert _in_a_process(tmp_path, ["heron", "bridge"]) == ["heron", "bridge"]
    assert _in_a_process(tmp_path, ["bridge", "heron", "tunnel"]) == ["tunnel"]  # only the new text


def test_an_embedder_that_does_not_keep_its_vectors_leaves_nothing_on_disk(tmp_path):
    VectorCache(Counting(keeps=False), root=tmp_path).vectors(["heron"])
    assert not (tmp_path / "vectors").exists()


def test_the_memory_keeps_what_is_used_and_drops_the_least_recently_used(tmp_path):
    embedder = Counting()
    cache = VectorCache(embedder, root=tmp_path, kept=2)
    cache.vectors(["a"])
    cache.vectors(["b"])
    cache.vectors(["a"])  # used again: now the most recent
    cache.vectors(["c"])  # one too many: "b" goes, not "a" (the oldest added)
    embedder.encoded.clear()
    cache.vectors(["a"])
    assert embedder.encoded == []
    cache.vectors(["b"])
    assert embedder.encoded == ["b"]


def test_two_threads_asking_for_the_same_text_encode_it_once(tmp_path):
    hold = threading.Event()
    embedder = Counting(hold=hold)
    cache = VectorCache(embedder, root=tmp_path)
    got: dict[str, np.ndarray] = {}
    first = threading.Thread(target=lambda: got.update(first=cache.vectors(["heron", "bridge"])))
    first.start()
    embedder.started.wait()  # the first thread is encoding
    second = threading.Thread(target=lambda: got.update(second=cache.vectors(["bridge", "tunnel"])))
    second.start()
    time.sleep(0.3)  # the second asks while the first is still encoding
    hold.set()
    first.join()
    second.join()
    assert sorted(embedder.encoded) == ["bridge", "heron", "tunnel"]  # "bridge" once
    assert np.allclose(got["first"][1], got["second"][0])


def test_a_changed_corpus_or_token_cap_makes_new_vectors_of_the_encyclopedia(tmp_path):
    from deepresearch.tools.wiki import DENSE_FORMAT, vectors_key

    corpus = tmp_path / "summaries.json"
    corpus.write_text('{"a": {"title": "Heron"}}')
    key = vectors_key(corpus, DENSE_FORMAT, 128)
    assert vectors_key(corpus, DENSE_FORMAT, 128) == key  # the same: the vectors are reused
    assert vectors_key(corpus, DENSE_FORMAT, 64) != key
    assert vectors_key(corpus, "{title}", 128) != key
    corpus.write_text('{"a": {"title": "Herons"}}')
    changed = vectors_key(corpus, DENSE_FORMAT, 128)
    assert changed != key

    embedder = Counting()
    texts = ["Heron. A wading bird.", "Bridge. A structure over water."]
    DenseIndex.cached(lambda: texts, tmp_path, embedder, key=key, max_tokens=128)
    DenseIndex.cached(lambda: texts, tmp_path, embedder, key=key, max_tokens=128)
    assert len(embedder.encoded) == 2  # the second read the first's file
    short = DenseIndex.cached(lambda: texts, tmp_path, embedder, key=vectors_key(corpus, DENSE_FORMAT, 4), max_tokens=4)
    assert len(embedder.encoded) == 4
    assert np.allclose(short.vectors, Counting().encode(texts, max_tokens=4))  # each text's first 4 only
    DenseIndex.cached(lambda: texts, tmp_path, embedder, key=changed, max_tokens=128)
    assert len(embedder.encoded) == 6


def test_a_remote_embedders_model_id_names_its_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    here = RemoteEmbeddings("openai:text-embedding-3-small", "http://127.0.0.1:9001/v1")
    there = RemoteEmbeddings("openai:text-embedding-3-small", "http://127.0.0.1:9002/v1")
    assert here.model_id != there.model_id
    assert here.model_id == RemoteEmbeddings("openai:text-embedding-3-small", "http://127.0.0.1:9001/v1").model_id


def test_the_int8_weights_are_a_model_of_their_own_whose_vectors_are_never_taken_for_float32s(tmp_path):
    from deepresearch.embeddings.minilm import FLOAT32, INT8, MiniLM
    from deepresearch.embeddings.registry import check, embedder_for

    floats, ints = MiniLM(cache_root=tmp_path, precision=FLOAT32), MiniLM(cache_root=tmp_path, precision=INT8)
    assert ints.model_id != floats.model_id and ints.graph.is_file() and ints.graph != floats.graph
    texts = ["Herons wade in the shallows.", "A bridge spans the river gorge.", "The choir sang at dawn."]
    a, b = floats.encode(texts), ints.encode(texts)
    assert not np.allclose(a, b) and (np.sum(a * b, axis=1) > 0.98).all()  # other weights, nearly one meaning
    # the encyclopedia's vectors are kept per model: int8's are encoded anew, beside float32's
    kept = DenseIndex.cached(lambda: texts, tmp_path, floats, key="k", max_tokens=128)
    other = DenseIndex.cached(lambda: texts, tmp_path, ints, key="k", max_tokens=128)
    assert DenseIndex.path(tmp_path, ints, "k").is_file() and DenseIndex.path(tmp_path, floats, "k").is_file()
    assert np.allclose(other.vectors, b) and np.allclose(kept.vectors, a)
    # the setting that asks for it
    check("local-int8")
    assert embedder_for("local-int8").model_id.endswith("-int8")
    assert not embedder_for("local").model_id.endswith("-int8")
