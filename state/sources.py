"""The source registry: one id per retrieved document for the whole run.

A source is identified by its normalized URL (scheme and host lower-cased, default port,
trailing slash, fragment and tracking parameters dropped), so the same page found by two
queries, two iterations or two parallel sections is one source. State keeps the id, title,
URL and a short snippet; the full text goes to `TEXTS`, a small file store in the user's
cache directory, so checkpoints stay lean and a resumed run still has the text.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import platformdirs

SNIPPET_CHARS = 300
TRACKING_PARAMS = {"fbclid", "gclid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "yclid", "msclkid"}


def normalize_url(url: str) -> str:
    """The canonical form of `url` used to deduplicate sources."""
    url = url.strip()
    if "://" not in url:  # file paths and bare identifiers
        return url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):  # a file: or mcp: reference is kept as it is (lossless)
        return url
    if scheme == "http":
        scheme = "https"
    host = (parts.hostname or "").lower()
    if host.startswith("www.") and host.count(".") >= 2:
        host = host[4:]
    port = parts.port
    netloc = host if port in (None, 80, 443) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=-._~%")
    if len(path) > 1:
        path = path.rstrip("/")
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMS
    ]
    return urlunsplit((scheme, netloc, path or "", urlencode(sorted(query)), ""))


def source_key(url: str) -> str:
    """A stable id for a source: the hash of its normalized URL."""
    return "s" + hashlib.sha1(normalize_url(url).encode("utf-8")).hexdigest()[:12]


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


class TextStore:
    """Full texts of retrieved sources, one file per source key."""

    def __init__(self, root: Path | None = None):
        self._root = root

    @property
    def root(self) -> Path:
        root = self._root or Path(platformdirs.user_cache_dir("deepresearch")) / "texts"
        root.mkdir(parents=True, exist_ok=True)
        return root

    def put(self, key: str, text: str) -> None:
        path = self.root / f"{key}.txt"
        tmp = path.with_suffix(f".{os.getpid()}.{uuid.uuid4().hex}.tmp")  # parallel sections may race
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    def get(self, key: str) -> str | None:
        try:
            return (self.root / f"{key}.txt").read_text(encoding="utf-8")
        except OSError:
            return None


TEXTS = TextStore()


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


def full_text(source: dict) -> str:
    """The retrieved text of a source, or its snippet if the text is gone (or no time is left)."""
    at = _TEXTS_UNTIL.get()
    if at is not None and time.monotonic() >= at:
        return source.get("snippet", "")
    return TEXTS.get(source["key"]) or source.get("snippet", "")
