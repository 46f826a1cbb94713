"""The run's embedder, by the Context's `embeddings` setting, made once per process and setting."""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np

from deepresearch.choices.servers import provider_of
from deepresearch.choices.threads import local_threads
from deepresearch.embeddings import minilm
from deepresearch.embeddings.remote import RemoteEmbeddings
from deepresearch.events import emit

AUTO, LOCAL, NONE = "auto", "local", "none"
LOCAL_INT8 = "local-int8"  # the local model with int8 weights: faster, ranks a little differently


class Embedder(Protocol):
    model_id: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of `texts`, one row each."""
        ...


_made: dict[tuple[str, str | None, int], Embedder] = {}
_lock = threading.Lock()


def check(spec: str) -> None:
    """ValueError when the setting cannot give an embedder (a one-line reason)."""
    if spec in (AUTO, NONE):
        return
    if spec in (LOCAL, LOCAL_INT8):
        if not minilm.installed():
            raise ValueError(minilm.MISSING)
        return
    provider, _, model = spec.partition(":")
    if provider != "openai" and not provider_of(spec):
        raise ValueError(
            f"unknown embeddings {spec[:40]!r}: auto, local, local-int8, none, openai:<model> or a local server's "
            "(ollama:<model>, vllm:<model>, llamacpp:<model>, lmstudio:<model>)"
        )
    if not model.strip():
        raise ValueError(f"embeddings {spec[:40]!r} need a model name, e.g. openai:text-embedding-3-small")


def embedder_for(spec: str = AUTO, base_url: str | None = None, threads: int = 1) -> Embedder | None:
    """The embedder (None: `none`, or `auto` without the local model). Made once; raises ValueError
    or minilm.EmbeddingsUnavailable when it cannot be made."""
    if spec == NONE or (spec == AUTO and not minilm.installed()):
        return None
    key = (LOCAL if spec == AUTO else spec, base_url, threads)
    with _lock:
        if key not in _made:
            if key[0] in (LOCAL, LOCAL_INT8):
                precision = minilm.INT8 if key[0] == LOCAL_INT8 else minilm.FLOAT32
                _made[key] = minilm.MiniLM(threads=threads, precision=precision)
            else:
                _made[key] = RemoteEmbeddings(spec, base_url)
        return _made[key]


def usable_embedder(spec: str = AUTO, base_url: str | None = None) -> Embedder | None:
    """The embedder of the setting `spec` (with the process's local threads), None when it has none
    or it cannot be made (said once, as an error event: the caller goes on by words alone)."""
    try:
        return embedder_for(spec, base_url, threads=local_threads())
    except (ValueError, minilm.EmbeddingsUnavailable) as e:
        emit("error", node="embeddings", cause=str(e)[:300])
        return None


def embedder_of(ctx: Any) -> Embedder | None:
    """The embedder of a run's context (`embeddings`, `embeddings_base_url`), None when it has none or
    it cannot be made (said once, as an error event: the run goes on by words alone)."""
    return usable_embedder(ctx.embeddings, ctx.embeddings_base_url)
