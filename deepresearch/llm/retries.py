"""Failures of a model call, and retries of the transient ones: rate limits, server errors,
timeouts and dropped connections are tried again (honouring Retry-After, with jittered exponential
backoff) while the run's time budget allows; anything else fails the call for good."""

from __future__ import annotations

import time

from tenacity import RetryCallState, Retrying, wait_random_exponential

from deepresearch.events import emit, redact
from deepresearch.llm import compat
from deepresearch.llm.budget import Budget, BudgetExhausted


class ModelCallError(Exception):
    """A model call failed for good; `node` and `cause` say where and why."""

    def __init__(self, node: str, cause: str, status: int | None = None, refused: bool = False):
        self.node = node
        self.cause = redact(cause)
        self.status = status
        self.refused = refused  # the server refused the request as made (deepresearch.llm.compat)
        super().__init__(f"{node}: {self.cause}")


class StructuredOutputError(ModelCallError):
    """No structured-output method produced a valid object."""


def describe(e: BaseException) -> str:
    status = getattr(e, "status_code", None)
    text = " ".join(str(e).split())[:200]  # a validation error's first line only says "1 validation error:"
    name = type(e).__name__
    return redact(f"{name} (HTTP {status}): {text}" if status else f"{name}: {text}" if text else name)


TRANSIENT_STATUS = {408, 409, 429, 500, 502, 503, 504}


def timed_out(e: BaseException) -> bool:
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"TimeoutError", "APITimeoutError", "TimeoutException"})


def is_transient(e: BaseException) -> bool:
    """Worth retrying: rate limits, server errors, timeouts and dropped connections (not a
    request the server refused, whatever its status)."""
    if compat.refused(e):
        return False
    status = getattr(e, "status_code", None)
    if status is not None:
        return status in TRANSIENT_STATUS or status >= 500
    names = {c.__name__ for c in type(e).__mro__}
    return bool(
        names
        & {
            "APIConnectionError",
            "APITimeoutError",
            "TimeoutError",
            "ConnectionError",
            "TimeoutException",
            "NetworkError",
            "RemoteProtocolError",
        }
    )


def retry_after(e: BaseException) -> float | None:
    """Seconds the server asked us to wait (the Retry-After header), if it said."""
    response = getattr(e, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


_backoff = wait_random_exponential(multiplier=0.25, max=8.0)  # exponential, with full jitter


def call_with_retries(ctx, budget: Budget, call, *, node: str, for_writer: bool):
    """`call(timeout)` with up to `ctx.max_retries` retries of transient failures, each wait
    honouring Retry-After, and never sleeping past the time budget."""
    attempt = 0
    while True:
        attempt += 1
        timeout = min(ctx.request_timeout, budget.timeout(for_writer=for_writer))
        try:
            return call(timeout)
        except Exception as e:  # noqa: BLE001
            if timed_out(e) and budget.time_up(for_writer=for_writer):
                raise BudgetExhausted("max_seconds") from None  # cut by the budget's deadline
            if not is_transient(e) or attempt > ctx.max_retries:
                raise
            wait = retry_after(e)
            if wait is None:
                wait = _backoff(_retry_state(attempt))
            if wait >= budget.timeout(for_writer=for_writer):
                raise  # waiting would carry the run past its time budget
            emit(
                "error",
                node=node,
                cause=f"{describe(e)}; retry {attempt} of {ctx.max_retries} in {wait:.1f}s",
                retrying=True,
            )
            time.sleep(wait)


def _retry_state(attempt: int) -> RetryCallState:
    state = RetryCallState(Retrying(), None, (), {})  # the wait strategy reads only the attempt number
    state.attempt_number = attempt
    return state
