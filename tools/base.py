"""The search protocol every backend follows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    text: str
    backend: str


class SearchError(Exception):
    """A search failed for good (after retries); the loop skips it and goes on."""


class SearchBackend(Protocol):
    name: str

    def search(self, query: str, k: int) -> list[SearchResult]: ...
