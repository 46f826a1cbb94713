"""Source controls of a run: which web domains may enter it, from when web results may be,
how deep web search goes, and which of a docs folder's files are read.

The web search gets them as its own parameters (Tavily's `include_domains`, `exclude_domains`,
`time_range`, `start_date`, `search_depth`), and the domains are checked again on our side for
every result of every backend (`allowed`): a backend that ignores them, or has no such
parameter, cannot bring a page from outside the allowed set into the run.
"""

from __future__ import annotations

import fnmatch
import re
from datetime import date
from urllib.parse import urlsplit

TIME_RANGES = ("day", "week", "month", "year")
SEARCH_DEPTHS = ("basic", "advanced")
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def domain(text) -> str:
    """`https://www.NIH.gov/path` -> `nih.gov`; ValueError for what is no domain name."""
    value = str(text or "").strip().lower()
    if "://" in value:
        value = urlsplit(value).hostname or ""
    value = value.split("/", 1)[0].removeprefix("www.").rstrip(".")
    if not _DOMAIN.match(value) or "." not in value:
        raise ValueError(f"not a domain name: {str(text)[:80]!r} (e.g. nih.gov)")
    return value


def domains(values) -> list[str] | None:
    """A list (or a comma-separated string) of domains, normalized; None when empty."""
    if values is None:
        return None
    if isinstance(values, str):
        values = values.split(",")
    if not isinstance(values, (list, tuple)):
        raise ValueError("domains must be a list of domain names")
    out = list(dict.fromkeys(domain(v) for v in values if str(v).strip()))
    return out or None


def _within(host: str, names) -> bool:
    return any(host == d or host.endswith("." + d) for d in names or ())


def allowed(url: str, include: list[str] | None, exclude: list[str] | None) -> bool:
    """Whether a result at `url` may enter the run: a web page's host (or a subdomain of one)
    is in `include` when it is given and in no `exclude`. A file or an MCP reference has no
    domain: the domain controls do not apply to it."""
    parts = urlsplit(str(url))
    if parts.scheme.lower() not in ("http", "https"):
        return True
    host = (parts.hostname or "").lower().removeprefix("www.").rstrip(".")
    if _within(host, exclude):
        return False
    return not include or _within(host, include)


def check(ctx) -> None:
    """ValueError for a control the context gives wrongly; the domains are normalized in place."""
    ctx.include_domains = domains(ctx.include_domains)
    ctx.exclude_domains = domains(ctx.exclude_domains)
    if ctx.time_range is not None and ctx.time_range not in TIME_RANGES:
        raise ValueError(f"time_range must be one of {', '.join(TIME_RANGES)}, not {str(ctx.time_range)[:40]!r}")
    if ctx.search_depth is not None and ctx.search_depth not in SEARCH_DEPTHS:
        raise ValueError(f"search_depth must be one of {', '.join(SEARCH_DEPTHS)}, not {str(ctx.search_depth)[:40]!r}")
    if ctx.start_date is not None:
        try:
            date.fromisoformat(str(ctx.start_date))
        except ValueError:
            raise ValueError(
                f"start_date must be a date written YYYY-MM-DD, not {str(ctx.start_date)[:40]!r}"
            ) from None
        if len(str(ctx.start_date)) != 10:
            raise ValueError(f"start_date must be a date written YYYY-MM-DD, not {str(ctx.start_date)[:40]!r}")
    for name in ("docs_include", "docs_exclude"):
        value = getattr(ctx, name)
        if isinstance(value, str):
            value = [g for g in value.split(",") if g.strip()]
        if value is not None and (not isinstance(value, (list, tuple)) or not all(isinstance(g, str) for g in value)):
            raise ValueError(f"{name} must be a list of file name patterns such as '*.md'")
        setattr(ctx, name, [g.strip() for g in value if g.strip()] or None if value is not None else None)


def web_params(ctx) -> tuple:
    """Tavily's parameters for the run's controls, as a hashable tuple of (name, value)."""
    params = {
        "include_domains": tuple(ctx.include_domains or ()) or None,
        "exclude_domains": tuple(ctx.exclude_domains or ()) or None,
        "time_range": ctx.time_range,
        "start_date": ctx.start_date,
        "search_depth": ctx.search_depth,
    }
    return tuple((k, v) for k, v in params.items() if v)


def docs_params(ctx) -> tuple:
    return tuple((k, tuple(v)) for k, v in (("include", ctx.docs_include), ("exclude", ctx.docs_exclude)) if v)


def file_wanted(relative: str, include, exclude) -> bool:
    """A docs file (its path relative to the folder, `/`-separated) under the globs: matching
    any `include` (when given) and no `exclude`, by its path or its name."""
    name = relative.rsplit("/", 1)[-1]

    def hit(patterns) -> bool:
        return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns or ())

    return not hit(exclude) and (not include or hit(include))
