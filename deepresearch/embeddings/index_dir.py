"""Where deepresearch keeps the indexes it derives from what is installed (the encyclopedia's BM25
index and vectors, the embedding model's runtime graph): the user's cache folder, or the folder
DEEPRESEARCH_INDEX_DIR names. Machines that share one (a deployment's volume, a test session)
build each index once; a run's own files (retrieved texts, thread locks) stay in the user's cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

INDEX_DIR_ENV = "DEEPRESEARCH_INDEX_DIR"


def index_dir() -> Path:
    given = os.environ.get(INDEX_DIR_ENV, "").strip()
    return Path(given).expanduser() if given else Path(platformdirs.user_cache_dir("deepresearch"))
