"""The indexes derived from what is installed live where DEEPRESEARCH_INDEX_DIR says, the run's own
files in the user's cache."""

from __future__ import annotations

from deepresearch import store
from deepresearch.embeddings.index_dir import INDEX_DIR_ENV


def test_the_encyclopedias_indexes_follow_the_index_folder_and_texts_the_user_cache(monkeypatch, tmp_path):
    from deepresearch.tools.wiki import WikiSearch

    monkeypatch.setenv(INDEX_DIR_ENV, str(tmp_path / "shared-indexes"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine-a"))
    assert WikiSearch().index_dir.parent == tmp_path / "shared-indexes"
    assert store.TextStore().root.is_relative_to(tmp_path / "machine-a")
    monkeypatch.delenv(INDEX_DIR_ENV)
    assert WikiSearch().index_dir.is_relative_to(tmp_path / "machine-a")


def test_a_first_run_is_told_before_and_after_the_vectors_are_built_and_a_second_is_not(tmp_path):
    """The first run's search waits minutes while the encyclopedia is encoded: a line says so first."""
    import numpy as np

    from deepresearch.cli.progress import describe_event
    from deepresearch.embeddings.dense import DenseIndex

    class Counting:  # an embedder of our own: one unit vector per text
        model_id = "counting"

        def encode(self, texts):
            return np.eye(len(texts), 4)[: len(texts)]

    told = []
    DenseIndex.cached(lambda: ["a", "b", "c"], tmp_path, Counting(), on_build=lambda n, s: told.append((n, s)))
    assert told[0] == (3, None) and told[1][0] == 3 and told[1][1] is not None and len(told) == 2
    DenseIndex.cached(lambda: ["a", "b", "c"], tmp_path, Counting(), on_build=lambda n, s: told.append((n, s)))
    assert len(told) == 2  # read from the folder: nothing built, nothing said
    building = {"type": "indexing", "index": "the vectors", "items": 3, "status": "building"}
    assert describe_event(building) == "building the vectors (3 texts): once, later runs reuse them"
    built = {"type": "indexing", "index": "the vectors", "items": 3, "status": "built", "seconds": 2.5}
    assert describe_event(built) == "built the vectors: 3 texts in 2.5 s"
