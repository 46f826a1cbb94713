"""Sources by URL: the normalized form that makes one page found twice one source, its stable key,
and a snippet of its text."""

from __future__ import annotations

import functools
import hashlib
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

SNIPPET_CHARS = 300
TRACKING_PARAMS = {"fbclid", "gclid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "yclid", "msclkid"}


@functools.lru_cache(maxsize=4096)
def normalize_url(url: str) -> str:
    """The canonical form of `url` used to deduplicate sources (worked out once per URL: the
    tracer normalizes every source's URL again)."""
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


# What platformdirs' user cache folder depends on (XDG on Linux, the home elsewhere).
