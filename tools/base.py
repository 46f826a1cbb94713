"""The search protocol every backend follows."""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from deepresearch.events import redact, secrets
from deepresearch.text.safe import strip_bidi, title_line, web_form, web_url
from deepresearch.tools.metadata import clean as clean_meta

# What one search result may bring into memory, state, the text store and the report.
MAX_TITLE_CHARS = 300
MAX_URL_CHARS = 2048
MAX_TEXT_CHARS = 50_000  # a long article; the rest of a longer document is dropped
MAX_RESPONSE_BYTES = 8_000_000  # one search response read from the network


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    text: str
    backend: str
    # identifiers of the record, in citation order: {"PMID": "31234567", "DOI": "10.1000/x"}
    ids: dict[str, str] = field(default_factory=dict, hash=False)
    # bibliographic metadata, as the source gives it (deepresearch.tools.metadata)
    meta: dict = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # every backend's results are held to the limits above, lose their bidirectional controls
        # (U+202E and kin: they would reorder what a reader sees of a title, a quoted sentence, a
        # span), and every secret the run knows (provider and search keys, MCP env and header
        # values: deepresearch.events) is masked before a result is stored, shown or written
        # (before cutting: no secret is half kept)
        known = secrets()
        # a title is one line of plain words (safe_text.title_line), whatever the page calls itself
        object.__setattr__(
            self, "title", title_line(redact(str(self.title)[: MAX_TITLE_CHARS * 4], known), MAX_TITLE_CHARS)
        )
        url = redact(str(self.url)[: MAX_URL_CHARS * 4], known)[:MAX_URL_CHARS]
        # a web URL in its one form from here on: the report, `sources` and the page agree on it
        object.__setattr__(self, "url", web_form(url) if web_url(url) else url)
        object.__setattr__(
            self, "text", strip_bidi(redact(str(self.text)[: MAX_TEXT_CHARS * 4], known)[:MAX_TEXT_CHARS])
        )
        object.__setattr__(
            self,
            "ids",
            {
                strip_bidi(redact(str(k)[:40], known)): strip_bidi(redact(str(v)[:400], known)[:200])
                for k, v in list((self.ids or {}).items())[:10]
            },
        )
        object.__setattr__(self, "meta", clean_meta(self.meta, lambda t: strip_bidi(redact(t, known))))


class SearchError(Exception):
    """A search failed for good (after retries); the loop skips it and goes on."""


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, k: int) -> list[SearchResult]: ...


def identifiers_text(ids: dict[str, str] | None) -> str:
    """`PMID 31234567, DOI 10.1000/x` (empty when there are none)."""
    return ", ".join(f"{k} {v}" for k, v in (ids or {}).items() if v)


# The moment (time.monotonic()) by which the current search must be over: set by
# execute_tools from the run's time budget; backends that wait (retries, rate limits)
# read it and give up rather than wait past it.
_DEADLINE: ContextVar[float | None] = ContextVar("search_deadline", default=None)


@contextmanager
def search_deadline(at: float | None):
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline() -> float | None:
    return _DEADLINE.get()


def time_left() -> float | None:
    """Seconds left before the current search's deadline (None: no deadline)."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()
