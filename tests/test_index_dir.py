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
