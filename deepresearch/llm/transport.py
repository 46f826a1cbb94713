"""A streamed chat-completions request without the openai SDK's request and reply objects.

ChatOpenAI streams a reply by calling `client.create(**payload)` with `stream=True` and
iterating what comes back (plain dicts are taken as they are). The SDK's own `create`
walks the whole request through its typed-dict transform and builds a pydantic object per
streamed piece, which ChatOpenAI then dumps back into a dict: together about as much CPU
as the rest of a research step (bench/README.md, "The model call's transport"). `LeanCompletions`
stands in for the SDK's `chat.completions` on the models the factory makes:

- the same JSON body, headers (the SDK's own defaults and auth headers) and URL, sent
  through the same HTTP client (the `GuardedClient`: byte limits and caps hold), or, to a
  plain-HTTP server httpx would reach without a proxy (a local one), through a urllib3 pool
  with the very same headers and limits (deepresearch.llm.plain_http: a fraction of httpx's
  work per call, which shows at a local server's latencies);
- the server-sent events read with httpx-sse and handed over as parsed dicts; at `[DONE]`
  the caller may take the reply while the end of the response is still read, so that the
  connection is kept for the next call (the SDK stops there and drops it);
- failures raised as the SDK's exceptions, made the SDK's way (a status error carries the
  body and headers, so Retry-After and messages are unchanged; timeouts and dropped
  connections are APITimeoutError / APIConnectionError; an error event in the stream is an
  APIError);
- a server that ignores `stream` and sends one JSON completion is read as one piece (the
  SDK would have returned an empty reply); any other non-stream reply is an APIError;
- a reasoning model's `reasoning_content` / `reasoning` fields folded into the content as a
  `<think>` block (deepresearch.llm.reasoning): ChatOpenAI would drop them, and they count.

Everything else (calls without `stream`, bodies that are not plain JSON, the SDK's
pluggable auth: key providers, workload identity, provider runtimes) goes to the SDK.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import Iterator
from typing import Any

from httpx_sse import EventSource

from deepresearch.llm import plain_http
from deepresearch.llm.reasoning import Folder

_SDK_ONLY = ("_provider_runtime", "_api_key_provider", "_workload_identity_auth")


def _hx():
    from deepresearch.llm.streaming import _httpx

    return _httpx()


class LeanCompletions:
    """`client.chat.completions` for ChatOpenAI: streamed calls sent by us, the rest by the SDK."""

    def __init__(self, root_client):
        self._root = root_client
        self._sdk = root_client.chat.completions

    def __getattr__(self, name: str):  # with_raw_response, parse, ...: the SDK's own
        if name.startswith("_"):  # not ours (e.g. looked up by copy on a bare instance): no recursion
            raise AttributeError(name)
        return getattr(self._sdk, name)

    def _plain_auth(self) -> bool:
        root = self._root
        return (
            isinstance(root.api_key, str)
            and bool(root.api_key)
            and all(getattr(root, a, None) is None for a in _SDK_ONLY)
        )

    def create(self, **params: Any):
        if params.get("stream") is not True or not self._plain_auth():
            return self._sdk.create(**params)
        body = {k: v for k, v in params.items() if k not in ("timeout", "extra_headers", "extra_query", "extra_body")}
        body.update(params.get("extra_body") or {})
        try:
            content = json.dumps(body).encode("utf-8")
        except (TypeError, ValueError):  # an object only the SDK knows how to send
            return self._sdk.create(**params)
        root = self._root
        headers = {
            k: v
            for k, v in {**root.default_headers, **root.auth_headers, **(params.get("extra_headers") or {})}.items()
            if isinstance(v, str)
        }
        query = {**root.default_query, **(params.get("extra_query") or {})}
        timeout = params.get("timeout")
        hx = _hx()
        http = root._client
        timeout = timeout if isinstance(timeout, (int, float, hx.Timeout)) else root.timeout
        url = f"{root.base_url}chat/completions"
        response, direct = None, None if query else self._direct(http, url)
        if direct is not None:  # a plain-HTTP server, no proxy: urllib3's pool sends it
            merged = {**self._client_headers(http), **{k.lower(): (k, v) for k, v in headers.items()}}
            headers = dict(merged.values())  # as httpx merges them: names compared in lower case
            request = functools.partial(hx.Request, "POST", url, headers=headers)  # made only for an error
            with _as_sdk_errors(request):
                response = plain_http.send(direct, headers, content, timeout)
            if 300 <= response.status_code < 400:  # the SDK's client follows redirects: from now on httpx
                response.close()  # sends to this server (this request again too: a redirect generated nothing)
                response, self._route = None, (url, None)
        if response is None:
            request = http.build_request(
                "POST", url, headers=headers, content=content, params=query or None, timeout=timeout
            )
            with _as_sdk_errors(request):
                response = http.send(request, stream=True)
        if response.status_code >= 400:
            try:
                with _as_sdk_errors(request):
                    response.read()  # bounded by the guard, as the SDK's read is
            finally:
                response.close()
            response.request = _made(request)
            raise root._make_status_error_from_response(response) from None
        return StreamedReply(response, request)

    def _direct(self, http, url: str):
        """The httpx URL to send to through urllib3 when `http` would send there straight over plain
        HTTP, else None (worked out once: a client's base URL and routes never change)."""
        route = self.__dict__.get("_route")
        if route is None or route[0] != url:
            u = _hx().URL(url)
            route = self._route = (url, u if plain_http.direct(http, u) else None)
        return route[1]

    def _client_headers(self, http) -> dict:
        """The headers httpx adds to every request of `http` (Accept, Accept-Encoding, ...): lower-case
        name -> (name, value)."""
        headers = self.__dict__.get("_base_headers")
        if headers is None:
            headers = self._base_headers = {
                k.decode("latin-1").lower(): (k.decode("latin-1"), v.decode("latin-1")) for k, v in http.headers.raw
            }
        return headers


def _made(request):
    """`request`, made now when it is a recipe for one (only a failure needs the object)."""
    return request() if callable(request) else request


class _as_sdk_errors:
    """Transport failures as the SDK raises them."""

    def __init__(self, request):
        self.request = request

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if e is None:
            return False
        import openai

        hx = _hx()
        if isinstance(e, hx.TimeoutException):
            raise openai.APITimeoutError(request=_made(self.request)) from e
        if isinstance(e, (hx.RequestError, ssl.SSLError)):
            raise openai.APIConnectionError(request=_made(self.request)) from e
        return False


def _reply_complete() -> None:
    from deepresearch.llm.streaming import _GUARD

    guard = _GUARD.get()
    if guard is not None:
        guard.reply_complete()


def _error(request, data: dict):
    import openai

    error = data.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=request, body=error)


class StreamedReply:
    """The reply's chunks as dicts; a context manager that closes the response."""

    def __init__(self, response, request):
        self.response, self.request = response, request

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.response.close()

    def __iter__(self) -> Iterator[dict]:
        try:
            with _as_sdk_errors(self.request):
                if "text/event-stream" not in self.response.headers.get("content-type", ""):
                    yield self._whole()
                    return
                ended = False
                folder = Folder()
                for sse in EventSource(self.response).iter_sse():
                    if ended:  # after [DONE] only the body's end is read (the connection is kept)
                        if sse.data:
                            break  # more events: drop the connection instead
                        continue
                    if sse.data.startswith("[DONE]"):
                        ended = True
                        _reply_complete()
                        continue
                    if not sse.data:  # a keep-alive event
                        continue
                    data = json.loads(sse.data)
                    if isinstance(data, dict) and data.get("error"):
                        raise _error(_made(self.request), data)
                    for choice in data.get("choices") or ():
                        folder.fold(choice.setdefault("delta", {}))
                    yield data
        finally:
            self.response.close()

    def _whole(self) -> dict:
        """A server that ignored `stream`: its one completion as one streamed piece."""
        try:
            data = json.loads(self.response.read())
        except ValueError:
            data = None
        if not isinstance(data, dict):
            import openai

            raise openai.APIError(
                message="the server's reply was neither a stream nor a completion",
                request=_made(self.request),
                body=None,
            )
        if data.get("error"):
            raise _error(_made(self.request), data)
        choices = []
        for c in data.get("choices") or ():
            delta = Folder().fold(dict(c.get("message") or {}))
            if delta.get("tool_calls"):
                delta["tool_calls"] = [{"index": i, **t} for i, t in enumerate(delta["tool_calls"])]
            choices.append({"index": c.get("index", 0), "delta": delta, "finish_reason": c.get("finish_reason")})
        return {
            **{k: data[k] for k in ("id", "model", "created") if k in data},
            "object": "chat.completion.chunk",
            "choices": choices,
            "usage": data.get("usage"),
        }
