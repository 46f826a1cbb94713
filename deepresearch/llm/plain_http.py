"""Streamed chat requests to plain-HTTP servers sent through urllib3's connection pools.

A local server (llama.cpp, vLLM, Ollama, LM Studio, any OpenAI-compatible server on
`http://`) answers in milliseconds, and there the HTTP client's own work is a share of every
model call that shows: httpx's client (request and response objects, its hooks, its
pure-Python HTTP/1.1 state machine) costs several times what a urllib3 pool does for the same
streamed request (bench/README.md, "The model call's transport"). Hosted providers (https)
keep httpx: at their latencies the difference does not show, and their TLS and certificate
settings stay the SDK client's.

Only requests httpx would send straight to the server take this path: when a proxy setting
(HTTP_PROXY, ALL_PROXY, ...) applies to the URL, httpx's own routing says so and the request
stays with httpx. The reply comes back as an httpx Response over urllib3's raw byte stream, so
everything after the send is as before: the reply's byte limit counts the same wire bytes,
content decoding and the server-sent events are httpx's, and failures are raised as httpx's
exceptions (which the transport turns into the SDK's).
"""

from __future__ import annotations

import threading
from typing import Any

import urllib3
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, ProtocolError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

KEPT_CONNECTIONS = 100  # per server, as many as the SDK's client keeps alive
READ_SIZE = 64 * 1024

_pools: dict[tuple[str, int], urllib3.HTTPConnectionPool] = {}
_lock = threading.Lock()


def _pool(host: str, port: int) -> urllib3.HTTPConnectionPool:
    pool = _pools.get((host, port))
    if pool is None:
        with _lock:
            pool = _pools.get((host, port))
            if pool is None:  # more requests at once than it keeps: the extra connections are closed after use
                pool = _pools[(host, port)] = urllib3.HTTPConnectionPool(
                    host, port, maxsize=KEPT_CONNECTIONS, block=False, retries=False
                )
    return pool


def direct(client, url) -> bool:
    """Would the httpx `client` send a request for `url` (an httpx URL) straight to the server, over
    plain HTTP, with its own default transport (no proxy, no transport of the caller's)?"""
    from deepresearch.llm.streaming import _httpx

    hx = _httpx()
    return (
        url.scheme == "http"
        and type(client._transport) is hx.HTTPTransport
        and client._transport_for_url(url) is client._transport
    )


def timeout_of(timeout) -> urllib3.Timeout:
    """An httpx timeout (seconds, or an httpx Timeout) as urllib3's: connect and read alike."""
    connect = getattr(timeout, "connect", timeout)
    read = getattr(timeout, "read", timeout)
    return urllib3.Timeout(connect=connect, read=read)


def send(url, headers: dict[str, str], content: bytes, timeout):
    """POST `content` to `url`; the response as an httpx Response whose body is still to be read,
    held to the current reply's byte limit on every part read, as the GuardedClient holds it."""
    from deepresearch.llm.streaming import _GUARD, _httpx

    hx = _httpx()
    guard = _GUARD.get()
    pool = _pool(url.host, url.port or 80)
    try:
        raw = pool.urlopen(
            "POST",
            url.raw_path.decode("ascii"),
            body=content,
            headers=headers,
            retries=False,
            redirect=False,
            preload_content=False,
            decode_content=False,
            release_conn=False,
            timeout=timeout_of(timeout),
        )
    except ConnectTimeoutError as e:
        raise hx.ConnectTimeout(str(e)) from e
    except Urllib3Timeout as e:
        raise hx.ReadTimeout(str(e)) from e
    except NewConnectionError as e:
        raise hx.ConnectError(str(e)) from e
    except (HTTPError, OSError) as e:
        raise hx.RemoteProtocolError(str(e)) from e
    return hx.Response(raw.status, headers=list(raw.headers.items()), stream=_body(hx)(raw, guard))


_body_class = None


def _body(hx: Any):
    global _body_class
    if _body_class is None:

        class Body(hx.SyncByteStream):
            """urllib3's raw response body as httpx reads a network stream. Read to its end, the
            connection goes back to the pool; a body left unread closes it (it cannot serve another
            request)."""

            def __init__(self, raw, guard):
                self.raw, self.guard, self.ended = raw, guard, False

            def __iter__(self):
                read = self.raw.read1  # what has come, at most READ_SIZE: an event is handed on as it arrives
                try:
                    while part := read(READ_SIZE, decode_content=False):
                        if self.guard is not None:
                            self.guard.check(len(part))
                        yield part
                except Urllib3Timeout as e:
                    raise hx.ReadTimeout(str(e)) from e
                except (ProtocolError, HTTPError, OSError) as e:
                    raise hx.ReadError(str(e)) from e
                self.ended = True

            def close(self) -> None:
                if not self.ended:
                    self.raw.close()
                self.raw.release_conn()

        _body_class = Body
    return _body_class
