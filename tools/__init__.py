"""Search backends behind one small protocol, chosen by a spec string.

    wiki            the offline encyclopedia (default)
    docs:<folder>   your own .md/.txt/.rst/.html files
    tavily          Tavily web search (TAVILY_API_KEY)
"""

from __future__ import annotations

from deepresearch.tools.base import SearchBackend, SearchError, SearchResult

SEARCH_SPECS = ("wiki", "docs:<folder>", "tavily")

_cache: dict[tuple, SearchBackend] = {}


def check_search_spec(spec: str) -> None:
    """Raise ValueError with a helpful message if `spec` names no backend."""
    from pathlib import Path

    if spec in ("wiki", "tavily"):
        return
    if spec.startswith("docs:"):
        folder = Path(spec[5:]).expanduser()
        if not spec[5:]:
            raise ValueError("docs: needs a folder, e.g. --search docs:./notes")
        if not folder.is_dir():
            raise ValueError(f"docs folder not found: {folder}")
        from deepresearch.tools.docs import EXTENSIONS

        if not any(p.is_file() and p.suffix.lower() in EXTENSIONS for p in folder.rglob("*")):
            raise ValueError(f"docs folder {folder} has no {'/'.join(sorted(EXTENSIONS))} files")
        return
    raise ValueError(f"unknown search backend {spec!r}; valid: {', '.join(SEARCH_SPECS)}")


def get_search(spec: str, *, base_url: str | None = None, timeout: float = 30.0, max_retries: int = 4) -> SearchBackend:
    """The backend for `spec` (instances are reused within a process)."""
    check_search_spec(spec)
    key = (spec, base_url, timeout, max_retries)
    if key not in _cache:
        if spec == "wiki":
            from deepresearch.tools.wiki import WikiSearch

            _cache[key] = WikiSearch()
        elif spec == "tavily":
            from deepresearch.tools.tavily import TavilySearch

            _cache[key] = TavilySearch(base_url=base_url, timeout=timeout, max_retries=max_retries)
        else:
            from deepresearch.tools.docs import DocsSearch

            _cache[key] = DocsSearch(spec[5:])
    return _cache[key]


__all__ = ["SearchBackend", "SearchError", "SearchResult", "SEARCH_SPECS", "check_search_spec", "get_search"]
