"""HTTP for the specialist backends (PubMed, ClinicalTrials.gov, Europe PMC, arXiv).

One `get` with what every provider needs:
- transient failures (429, 5xx, timeouts, dropped connections) retried by tenacity with
  exponential backoff and jitter, each wait honouring the server's Retry-After;
- the run's time budget: no attempt starts, and no wait (retry or rate limit) runs, past
  the search's deadline (tools.base.search_deadline);
- the provider's published rate limit, through a shared window pacer, taken before every
  attempt (retries count);
- error messages built here from the status and the exception's kind only: never the
  request URL (it may carry an API key) nor the response body (NCBI echoes the key).
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from email.utils import parsedate_to_datetime

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from deepresearch.events import emit
from deepresearch.pacing import WaitTooLong, Window
from deepresearch.tools.base import MAX_RESPONSE_BYTES, SearchError, deadline

TRANSIENT = {408, 425, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER = 60.0  # a server asking for a longer pause is given up on
USER_AGENT = "deepresearch (https://pypi.org/project/deepresearch/)"


class _Transient(Exception):
    def __init__(self, what: str, retry_after: float | None = None):
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float | None:
    """The Retry-After header as seconds (it is a number or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_backoff = wait_random_exponential(multiplier=0.5, max=8.0)


def _wait(state: RetryCallState) -> float:
    e = state.outcome.exception() if state.outcome else None
    asked = getattr(e, "retry_after", None)
    return asked if asked is not None else _backoff(state)


def _past_deadline(state: RetryCallState) -> bool:
    at = deadline()
    too_long = state.upcoming_sleep > MAX_RETRY_AFTER
    return too_long or (at is not None and time.monotonic() + state.upcoming_sleep >= at)


def _read_capped(r: httpx.Response, name: str) -> httpx.Response:
    """The response with its body read up to MAX_RESPONSE_BYTES (decoded): a larger one is
    an error, never held whole."""
    data = bytearray()
    for part in r.iter_bytes():
        data += part
        if len(data) > MAX_RESPONSE_BYTES:
            raise SearchError(f"{name}: response larger than {MAX_RESPONSE_BYTES:,} bytes")
    headers = [(k, v) for k, v in r.headers.multi_items() if k.lower() not in ("content-encoding", "content-length")]
    return httpx.Response(r.status_code, headers=headers, content=bytes(data), request=r.request)


def _request(name: str, url: str, params: dict, headers: dict | None, t: float, ok: tuple[int, ...]) -> httpx.Response:
    try:
        with httpx.Client(
            timeout=t, headers={"User-Agent": USER_AGENT, **(headers or {})}, follow_redirects=True
        ) as client:
            with client.stream("GET", url, params=params) as streamed:
                r = _read_capped(streamed, name)
    except httpx.TimeoutException as e:
        raise _Transient(f"timed out ({type(e).__name__})") from None
    except httpx.HTTPError as e:  # connection refused or dropped, protocol errors
        raise _Transient(f"connection failed ({type(e).__name__})") from None
    if r.status_code in ok:
        return r
    if r.status_code in TRANSIENT:
        raise _Transient(f"HTTP {r.status_code}", retry_after_seconds(r.headers.get("retry-after")))
    raise SearchError(f"{name}: HTTP {r.status_code}")


def get(
    name: str,
    url: str,
    params: dict,
    *,
    timeout: float,
    max_retries: int,
    limit: Window | None = None,
    ok: tuple[int, ...] = (200,),
    headers: dict | None = None,
) -> httpx.Response:
    """GET `url` with retries; the response when its status is in `ok`, else SearchError."""
    attempts = {"n": 0}

    def attempt() -> httpx.Response:
        attempts["n"] += 1
        at = deadline()
        try:
            with limit.slot(at) if limit is not None else nullcontext():
                left = None if at is None else at - time.monotonic()
                if left is not None and left <= 0.05:
                    raise SearchError(f"{name}: no time left in the run's budget")
                return _request(name, url, params, headers, timeout if left is None else min(timeout, left), ok)
        except WaitTooLong as e:
            raise SearchError(f"{name}: {e}") from None

    def announce(state: RetryCallState) -> None:
        e = state.outcome.exception() if state.outcome else None
        emit(
            "error",
            node="execute_tools",
            tool=name,
            retrying=True,
            cause=f"{name}: {e}; retry {state.attempt_number} of {max_retries} in {state.upcoming_sleep:.1f}s",
        )

    retries_used = stop_after_attempt(max_retries + 1)

    def stop(state: RetryCallState) -> bool:  # the retries are used up, or the next wait is too long
        return retries_used(state) or _past_deadline(state)

    retrying = Retrying(
        stop=stop,
        wait=_wait,
        retry=retry_if_exception_type(_Transient),
        before_sleep=announce,
        reraise=True,
        sleep=time.sleep,
    )
    try:
        return retrying(attempt)
    except _Transient as e:
        tries = attempts["n"]
        why = "" if tries > max_retries else "; waiting longer would pass the time budget"
        raise SearchError(f"{name}: {e.what} (gave up after {tries} attempt{'s' if tries > 1 else ''}{why})") from None
