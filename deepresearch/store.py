"""Retrieved texts, kept apart from state: one id per retrieved document for the whole run.

A source is identified by its normalized URL (deepresearch.text.urls: scheme and host lower-cased,
default port, trailing slash, fragment and tracking parameters dropped), so the same page found by
two queries, two iterations or two parallel sections is one source. State keeps the id, title,
URL and a short snippet, so checkpoints stay lean; the full text goes to the run's LangGraph
store (`BaseStore`) whenever the run has one: the LangGraph server gives every run one, and the
CLI opens one beside its checkpointer (deepresearch.runtime.checkpoint.open_store), so a section
researched by one worker or machine is verified against its text by any other. Texts are kept
under the namespace ("deepresearch", "texts", <run>), <run> being the thread id (escaped). On a
server with users the namespace begins with the run's owner, (<owner>, "deepresearch", "texts",
<run>), and each user reaches only their own. Each source records that label (`text_ns`), but
the label in state is data (a client may write a thread's state): a run reads texts only under
its own label, the owner and thread of its config (set by the server for the signed-in user),
so a source naming another run's label (another user's, or a copied thread's original) is
checked against its snippet. Only a graph compiled with neither store nor server falls back to
`TEXTS`, a small file store in the user's cache directory (one machine's disk): a served run
never reads it.
"""

from __future__ import annotations

import functools
import os
import re
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import ParamSpec, TypeVar

import platformdirs

P = ParamSpec("P")
R = TypeVar("R")

_CACHE_ENV = ("XDG_CACHE_HOME", "HOME", "LOCALAPPDATA", "USERPROFILE")


@functools.lru_cache(maxsize=8)
def _default_root(env: tuple) -> Path:
    return Path(platformdirs.user_cache_dir("deepresearch")) / "texts"


_FILE_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a source key (`source_key`): a file name, never a path


class TextStore:
    """Full texts of retrieved sources, one file per source key."""

    def __init__(self, root: Path | None = None):
        self._root = root
        self._made: set[Path] = set()  # folders this store has made (made again if removed: see put)

    @property
    def root(self) -> Path:
        root = self._root or _default_root(tuple(os.environ.get(name) for name in _CACHE_ENV))
        if root not in self._made:
            root.mkdir(parents=True, exist_ok=True)
            self._made.add(root)
        return root

    def put(self, key: str, text: str) -> None:
        if not _FILE_KEY.fullmatch(key):
            raise ValueError(f"not a source key: {key[:40]!r}")
        root = self.root
        path = root / f"{key}.txt"
        tmp = path.with_suffix(f".{os.getpid()}.{uuid.uuid4().hex}.tmp")  # parallel sections may race
        try:
            tmp.write_text(text, encoding="utf-8")
        except FileNotFoundError:  # the folder was removed since it was made
            root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    def get(self, key: str) -> str | None:
        if not isinstance(key, str) or not _FILE_KEY.fullmatch(key):  # a key from state is never a path
            return None
        try:
            return (self.root / f"{key}.txt").read_text(encoding="utf-8")
        except OSError:
            return None


TEXTS = TextStore()

TEXTS_NAMESPACE = ("deepresearch", "texts")


def run_store():
    """The `BaseStore` of the graph run this is called from, or None (no store, or not in a run)."""
    try:
        from langgraph.config import get_store

        return get_store()
    except Exception:  # noqa: BLE001 - outside a graph run, or a run without a store
        return None


ANONYMOUS = "anonymous"  # the server's user when sign-in is off (deepresearch.auth.server, mode none)


def owner_label(user: str) -> str:
    """The store label of a server user: the first label of every namespace their runs write
    (the server's store rules give each user the namespaces under theirs). '.' may not appear
    in a label, and '/' separates the owner in a run label."""
    return "u:" + str(user).replace("%", "%25").replace(".", "%2E").replace("/", "%2F")


def _configurable() -> dict:
    try:
        from langgraph.config import get_config

        return get_config().get("configurable") or {}
    except Exception:  # noqa: BLE001 - not in a run
        return {}


def _served(configurable: dict) -> bool:
    """A run of the LangGraph server: it sets these for every run (a client cannot)."""
    return "langgraph_auth_user_id" in configurable or "langgraph_request_id" in configurable


def _own_label(configurable: dict) -> str | None:
    """The label of the run `configurable` belongs to, from its config alone: its thread, under
    its owner on a server with users; None when the run has no thread."""
    thread = configurable.get("thread_id")
    if thread is None or str(thread) == "":
        return None
    label = "t:" + str(thread).replace("%", "%25").replace(".", "%2E")
    user = configurable.get("langgraph_auth_user_id")  # set by the LangGraph server for the run's user
    # with sign-in off every request is the same anonymous user: runs keep the plain label
    return f"{owner_label(user)}/{label}" if user and user != ANONYMOUS else label


def run_label() -> str:
    """The store label of the current run: its thread id, escaped ('.' may not appear in a
    namespace label), or a fresh id when the run has no thread (no checkpointer: it cannot
    be resumed, and the label is recorded on each source it stores). A run on a server with
    users is labelled `u:<owner>/t:<thread>` (`run_namespace` puts the owner first)."""
    return _own_label(_configurable()) or f"run-{uuid.uuid4().hex}"


def _readable(configurable: dict):
    """Which labels (a source's `text_ns`, read from state: data a client may have written) the
    run `configurable` belongs to may read texts under: its own alone, whatever the state says.
    A run without a thread (nothing checkpointed: no client wrote its state) reads the
    `run-` labels it made."""
    own = _own_label(configurable)
    if own is not None:
        return lambda label: label == own
    served = _served(configurable)
    return lambda label: not served and isinstance(label, str) and label.startswith("run-")


def run_namespace(base: tuple[str, ...], label: str) -> tuple[str, ...]:
    """Where a run labelled `label` keeps its items of kind `base`: (*base, label), or under its
    owner's label first when it has one."""
    if label.startswith("u:") and "/" in label:
        owner, _, run = label.partition("/")
        return (owner, *base, run)
    return (*base, label)


def put_text(key: str, text: str, meta: dict | None = None) -> dict:
    """Keep a source's full text (and, in the run's store, its bibliographic metadata); the
    fields to record on the source (where its text is)."""
    store = run_store()
    if store is None:
        TEXTS.put(key, text)
        return {}
    label = run_label()
    store.put(
        run_namespace(TEXTS_NAMESPACE, label), key, {"text": text, **({"meta": meta} if meta else {})}, index=False
    )  # never embedded
    return {"text_ns": label}


def put_texts(items: list[tuple[str, str, dict | None]]) -> list[dict]:
    """`put_text` for several (key, text, meta) at once: one request to the run's store (a
    served run's store answers on the server's event loop, which every run shares)."""
    store = run_store()
    if store is None or len(items) < 2:
        return [put_text(key, text, meta) for key, text, meta in items]
    from langgraph.store.base import PutOp

    labels = [run_label() for _ in items]  # one each, as put_text takes (a run without a thread: fresh ones)
    store.batch(
        [
            PutOp(
                run_namespace(TEXTS_NAMESPACE, label),
                key,
                {"text": text, **({"meta": meta} if meta else {})},
                index=False,
            )
            for label, (key, text, meta) in zip(labels, items)
        ]
    )
    return [{"text_ns": label} for label in labels]


def stored_text(source: dict) -> str | None:
    """A source's full text from where it was kept, or None when it is not there."""
    label, configurable = source.get("text_ns"), _configurable()
    if not label:  # kept before texts went to the run's store, or by a run without one (never on a server)
        return None if _served(configurable) else TEXTS.get(source["key"])
    store = run_store()
    if store is None or not _readable(configurable)(label):
        return None
    item = store.get(run_namespace(TEXTS_NAMESPACE, label), source["key"])
    text = (item.value or {}).get("text") if item is not None else None
    return text if isinstance(text, str) else None


# When the run's time is up (time.monotonic()), texts are no longer read: checks that are
# still to do use the snippet kept in state, so they end within the run's seconds.
_TEXTS_UNTIL: ContextVar[float | None] = ContextVar("texts_until", default=None)


@contextmanager
def texts_until(at: float):
    token = _TEXTS_UNTIL.set(at)
    try:
        yield
    finally:
        _TEXTS_UNTIL.reset(token)


# Inside `texts_read_once()` (one node's work) each source's text is read from its store once.
_READ: ContextVar[dict | None] = ContextVar("texts_read", default=None)


_PENDING = object()  # in the read-once dict: the sources whose texts the first read fetches too


@contextmanager
def texts_read_once(sources=None):
    """Within the block each source's text is read once. `sources` (the node's evidence): the
    first text the block reads fetches theirs too, in one request to the run's store (a served
    run's store answers on the server's event loop, which every run shares: one round trip
    instead of one per source)."""
    token = _READ.set({_PENDING: list(sources)} if sources else {})
    try:
        yield
    finally:
        _READ.reset(token)


def reads_texts_once(node: Callable[P, R]) -> Callable[P, R]:
    """A node that reads each source's text once (the writer ranks, writes from and grounds
    against the same texts), its state's evidence in one request."""

    @functools.wraps(node)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        state = args[0] if args else None
        with texts_read_once(state.get("evidence") if isinstance(state, dict) else None):
            return node(*args, **kwargs)

    return wrapper


def _read_together(sources: list, read: dict) -> None:
    """The texts of `sources` kept in the run's store, read in one batch into `read`."""
    from langgraph.store.base import GetOp

    store, readable = run_store(), _readable(_configurable())
    wanted = {
        (s["text_ns"], s["key"])
        for s in sources
        if isinstance(s, dict) and s.get("text_ns") and s.get("key") and readable(s["text_ns"])
    } - read.keys()
    if store is None or not wanted:
        return
    where = sorted(wanted)
    items = store.batch([GetOp(run_namespace(TEXTS_NAMESPACE, label), key) for label, key in where])
    for at, item in zip(where, items):
        text = (item.value or {}).get("text") if item is not None else None
        read[at] = text if isinstance(text, str) else None


def full_text(source: dict) -> str:
    """The retrieved text of a source, or its snippet if the text is gone (or no time is left)."""
    at = _TEXTS_UNTIL.get()
    if at is not None and time.monotonic() >= at:
        return source.get("snippet", "")
    read = _READ.get()
    if read is None:
        return stored_text(source) or source.get("snippet", "")
    where = (source.get("text_ns"), source["key"])
    if where not in read:
        together = read.pop(_PENDING, None)
        if together and source.get("text_ns"):
            _read_together([*together, source], read)
        if where not in read:
            read[where] = stored_text(source)
    return read[where] or source.get("snippet", "")
