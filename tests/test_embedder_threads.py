"""The embedded model encodes from several threads at once (parallel sections do) and gives each
text the vector it gives alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from deepresearch.embeddings.registry import embedder_for


def test_texts_encoded_from_several_threads_at_once_get_the_vectors_they_get_alone():
    model = embedder_for("local")
    texts = [
        f"The {w} ferry crosses the sound at {n} o'clock, carrying {n * 3} cars." for n, w in enumerate("abcdefgh")
    ]
    alone = [model.encode([t])[0] for t in texts]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda t: model.encode([t] * 3)[1], texts * 4))
    for i, vector in enumerate(together):
        assert np.allclose(vector, alone[i % len(texts)], atol=1e-5)
