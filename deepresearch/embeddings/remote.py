"""Embeddings from an OpenAI-compatible `/embeddings` endpoint: OpenAI (`openai:<model>`), or a
local server by name (`ollama:nomic-embed-text`, `vllm:`, `llamacpp:`, `lmstudio:`; their usual
addresses, as deepresearch.llm.providers knows them). The key is read from the environment when a
request is made and never kept."""

from __future__ import annotations

import hashlib
import os

import httpx
import numpy as np

from deepresearch.choices.servers import PROVIDERS, provider_of

OPENAI_URL = "https://api.openai.com/v1"
BATCH = 96  # texts a request at most
TIMEOUT = 60.0


class RemoteEmbeddings:
    keeps_vectors = True  # a text's vector is kept on disk (deepresearch.embeddings.vector_cache)

    def __init__(self, spec: str, base_url: str | None = None):
        provider, _, model = spec.partition(":")
        if not model:
            raise ValueError(f"{spec[:40]!r} needs a model name, e.g. openai:text-embedding-3-small")
        if provider == "openai":
            self.url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
            self.key_env = "OPENAI_API_KEY"
        elif provider_of(spec):
            self.url = (base_url or PROVIDERS[provider]["url"]).rstrip("/")
            self.key_env = PROVIDERS[provider]["key"]
        else:
            raise ValueError(f"unknown embeddings {spec[:40]!r}: local, none, openai:<model> or a local server's")
        if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
            raise ValueError(f"embeddings {spec[:40]} need OPENAI_API_KEY in the environment (or a .env file)")
        self.model = model
        # the server's address is part of the model's name: the same name elsewhere may be another model
        where = hashlib.sha1(self.url.encode()).hexdigest()[:8]
        self.model_id = f"{provider}-{model}-{where}".replace("/", "_").replace(":", "_")

    def encode(self, texts: list[str]) -> np.ndarray:
        key = os.environ.get(self.key_env) or "not-needed"
        rows: list[list[float]] = []
        with httpx.Client(timeout=TIMEOUT) as client:
            for start in range(0, len(texts), BATCH):
                reply = client.post(
                    f"{self.url}/embeddings",
                    headers={"Authorization": f"Bearer {key}"},
                    json={"model": self.model, "input": list(texts[start : start + BATCH])},
                )
                reply.raise_for_status()
                data = sorted(reply.json()["data"], key=lambda d: d["index"])
                rows += [d["embedding"] for d in data]
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)
