"""Search backends behind one small protocol, chosen by a spec string (the backends are
declared in `deepresearch.choices.backends`: wiki, the offline encyclopedia, is the default).

A run may use several at once: `wiki,pubmed,clinicaltrials`. The HTTP backends take a
base-URL override each (proxies, mirrors, tests).
"""

from __future__ import annotations

from deepresearch.choices.backends import BY_NAME, HTTP_BACKENDS, SEARCH_SPECS
from deepresearch.embeddings.registry import usable_embedder
from deepresearch.text.safe import echoed, one_line
from deepresearch.tools.base import SearchBackend, SearchError, SearchResult

_cache: dict[tuple, SearchBackend] = {}


def split_specs(spec: str) -> list[str]:
    """`"wiki, pubmed"` -> `["wiki", "pubmed"]` (duplicates dropped, order kept)."""
    return list(dict.fromkeys(s.strip() for s in (spec or "").split(",") if s.strip()))


def tool_name(spec: str) -> str:
    """The name a backend goes by in tasks, events and sources: `docs:./notes` -> `docs`."""
    return spec.split(":", 1)[0]


def _check_one(spec: str) -> None:
    from pathlib import Path

    if spec in BY_NAME and not BY_NAME[spec].spec:  # a backend written by its bare name
        return
    if spec.startswith("docs:"):
        folder = Path(spec[5:]).expanduser()
        if not spec[5:]:
            raise ValueError("docs: needs a folder, e.g. --search docs:./notes")
        if not folder.is_dir():
            raise ValueError(f"docs folder not found: {one_line(folder, 80)}")
        from deepresearch.files import walk_files
        from deepresearch.tools.doc_readers import EXTENSIONS

        if not any(p.suffix.lower() in EXTENSIONS and p.is_file() for p in walk_files(folder)):
            raise ValueError(f"docs folder {one_line(folder, 80)} has no {'/'.join(sorted(EXTENSIONS))} files")
        return
    raise ValueError(f"unknown search backend {echoed(spec)}; valid: {', '.join(SEARCH_SPECS)}")


def check_search_spec(spec: str) -> None:
    """Raise ValueError with a helpful message if `spec` (one backend or a comma-separated
    list) names no backend."""
    specs = split_specs(spec)
    if not specs:
        raise ValueError(f"no search backend given; valid: {', '.join(SEARCH_SPECS)}")
    for s in specs:
        _check_one(s)
    names = [tool_name(s) for s in specs]
    if len(set(names)) < len(names):
        raise ValueError("one docs folder per run: give the folders' parent instead")


def check_base_urls(urls: dict[str, str] | None) -> None:
    """ValueError unless every key names an HTTP backend and every value is an http(s) URL."""
    for name, url in (urls or {}).items():
        if name not in HTTP_BACKENDS:
            raise ValueError(f"no base URL for {echoed(name)}: only {', '.join(HTTP_BACKENDS)} take one")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) < 10:
            raise ValueError(f"the base URL for {name} must be an http(s) URL, not {echoed(url)}")


def get_search(
    spec: str,
    *,
    base_url: str | None = None,
    timeout: float = 30.0,
    max_retries: int = 4,
    options: tuple = (),
    embeddings: str = "auto",
    embeddings_base_url: str | None = None,
) -> SearchBackend:
    """The backend for one `spec` (instances are reused within a process). `options`: the run's
    source controls for it, ((name, value), ...) (deepresearch.choices.controls); `embeddings`: how a
    local backend (the encyclopedia, a docs folder) ranks by meaning (the Context's setting)."""
    _check_one(spec)
    entry = BY_NAME[tool_name(spec)]
    # only an HTTP backend takes a server, a timeout and retries: a local one (the encyclopedia, a
    # docs folder) is one instance per spec, options and embeddings, its indexes and linker loaded once
    key = (
        (spec, base_url, timeout, max_retries, options)
        if entry.http
        else (spec, options, embeddings, embeddings_base_url)
    )
    if key not in _cache:
        from importlib import import_module

        backend_class = getattr(import_module(f"deepresearch.tools.{entry.module}"), entry.cls)
        if entry.http:
            _cache[key] = backend_class(
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
                **({"params": dict(options)} if options else {}),
            )
        else:
            embedder = usable_embedder(embeddings, embeddings_base_url)  # None: it ranks by words alone
            if entry.spec:  # docs:<folder>
                _cache[key] = backend_class(spec.split(":", 1)[1], embedder=embedder, **dict(options))
            else:
                _cache[key] = backend_class(embedder=embedder)
    return _cache[key]


__all__ = [
    "SearchBackend",
    "SearchError",
    "SearchResult",
    "SEARCH_SPECS",
    "HTTP_BACKENDS",
    "check_search_spec",
    "check_base_urls",
    "get_search",
    "split_specs",
    "tool_name",
]
