"""Tavily web search through `tavily-python`.

The key is read from TAVILY_API_KEY at each call and never written anywhere. A client
(its requests session and kept-alive connection) serves one search at a time and is kept
for the next search, from any thread, while the settings it was made from stay the same:
the key, the other TAVILY_* variables the client reads when made and the proxy and CA
settings (read once per client, not at every request as requests would) are compared by
their hash only; a change, or a failed search, makes a new client.
Transient failures (429, 5xx, dropped connections, read timeouts) are retried by urllib3's
`Retry` on the client's session: exponential backoff with jitter, `Retry-After` honoured.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from deepresearch.tools.base import MAX_RESPONSE_BYTES, SearchError, SearchResult

if TYPE_CHECKING:  # imported when the first search is made
    from tavily import TavilyClient


def _read_capped(r, *args, **kwargs):
    """A response hook (it runs before requests reads the body): read at most
    MAX_RESPONSE_BYTES; a larger response is an error, never held whole."""
    data = r.raw.read(MAX_RESPONSE_BYTES + 1, decode_content=True)
    if len(data) > MAX_RESPONSE_BYTES:
        r.close()
        raise SearchError(f"tavily: response larger than {MAX_RESPONSE_BYTES:,} bytes")
    r._content, r._content_consumed = data, True
    return r


# What a client is made from, besides the key: what TavilyClient reads from the environment,
# and what requests would read at every request (proxies, CA bundle), read once per client.
_CLIENT_ENV = (
    ("TAVILY_HTTP_PROXY", "TAVILY_HTTPS_PROXY", "TAVILY_PROJECT", "TAVILY_ORG_ID")
    + tuple(name for base in ("http_proxy", "https_proxy", "all_proxy", "no_proxy") for name in (base, base.upper()))
    + ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
)


def _settle_environment(client) -> None:
    """Apply the environment's proxy and CA settings to the client's session once, as requests
    would at each request (its lookup walks the whole environment: half a search's CPU),
    and stop requests reading it again."""
    from requests.utils import get_environ_proxies

    session = client.session
    proxies = dict(session.proxies or {})
    proxies.update(get_environ_proxies(client.base_url + "/search", no_proxy=proxies.get("no_proxy")))
    session.proxies = proxies
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle and session.verify is True:
        session.verify = bundle
    session.trust_env = False


class TavilySearch:
    name = "tavily"

    def __init__(
        self,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        params: dict | None = None,
    ):
        self.base_url = base_url
        # the run's source controls, as Tavily's own parameters (deepresearch.choices.controls)
        self.params = {k: list(v) if isinstance(v, tuple) else v for k, v in (params or {}).items()}
        self.timeout = timeout
        self.retry = Retry(
            total=max_retries,
            connect=max_retries,
            read=max_retries,
            status=max_retries,
            backoff_factor=backoff,
            backoff_jitter=backoff / 2,
            backoff_max=8,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=None,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._idle: list[tuple[bytes, TavilyClient]] = []  # (settings' hash, client) not in use
        self._lock = threading.Lock()

    def _take(self):
        """A client for one search: an idle one made with the same settings, or a new one."""
        from tavily import TavilyClient

        key = os.environ.get("TAVILY_API_KEY")
        if not key:
            raise SearchError("TAVILY_API_KEY is not set")
        settings = hashlib.sha256(
            "\0".join([key] + [os.environ.get(name) or "" for name in _CLIENT_ENV]).encode("utf-8")
        ).digest()
        with self._lock:
            stale = [c for h, c in self._idle if h != settings]
            self._idle = [(h, c) for h, c in self._idle if h == settings]
            kept = self._idle.pop() if self._idle else None
        for c in stale:
            c.session.close()
        if kept is not None:
            return kept
        client = TavilyClient(api_key=key, api_base_url=self.base_url)
        adapter = HTTPAdapter(max_retries=self.retry)
        client.session.mount("http://", adapter)
        client.session.mount("https://", adapter)
        client.session.hooks["response"].append(_read_capped)
        _settle_environment(client)
        return settings, client

    def search(self, query: str, k: int) -> list[SearchResult]:
        settings, client = self._take()
        try:
            response = client.search(query, max_results=k, timeout=self.timeout, **self.params)
        except SearchError:
            client.session.close()
            raise
        except Exception as e:  # the client's messages never carry the key, but keep only the kind
            client.session.close()  # after a failure the next search starts on a new session
            raise SearchError(f"tavily search failed: {type(e).__name__}") from None
        with self._lock:
            self._idle.append((settings, client))
        return [
            SearchResult(
                title=r.get("title") or r.get("url", ""),
                url=r["url"],
                text=r.get("raw_content") or r.get("content") or "",
                backend="tavily",
                meta=web_meta(r),
            )
            for r in response.get("results", [])
            if isinstance(r, dict) and r.get("url")
        ]


def web_meta(r: dict) -> dict:
    """A web result's citation fields: its site (the URL's host) and the published date when
    Tavily gives one (news results: `published_date`, e.g. 'Tue, 05 Mar 2024 10:00:00 GMT')."""
    host = (urlsplit(str(r["url"])).hostname or "").removeprefix("www.")
    date = published_date(r.get("published_date"))
    return {"type": "webpage", "site": host, "date": date, "year": date[:4]}


def published_date(value) -> str:
    """An ISO date (`2024-03-05`) from what Tavily gives: ISO or an RFC 2822 date; '' otherwise."""
    from email.utils import parsedate_to_datetime

    text = str(value or "").strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}", text):
        return text[:10]
    try:
        return parsedate_to_datetime(text).date().isoformat() if text else ""
    except (TypeError, ValueError, IndexError):
        return ""
