"""Budget accounting: tokens, seconds and iterations that can never be exceeded.

Usage is counted from the provider's own `usage_metadata`. Before every model call the
caller asks `reserve()` whether the prompt (estimated generously) plus the completion cap
still fits; the completion cap handed to the provider is cut to what is left, so a call
that starts can never carry the total past the limit. Seconds count the time nodes
actually run (time spent waiting for a person or a crashed process is not counted).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deepresearch.choices.prices import Price
from deepresearch.config import model_price

# cut_replies: replies read only up to their cap because the server ignored it;
# reasoning_tokens: the part of output_tokens a reasoning model spent reasoning (deepresearch.llm.reasoning)
# cost_usd: what the calls cost in US dollars, at the model's price (deepresearch.choices.prices);
# unpriced_calls: calls of a model whose price is not known (their cost is not in cost_usd)
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "llm_calls",
    "seconds",
    "iterations",
    "cut_replies",
    "reasoning_tokens",
    "cost_usd",
    "unpriced_calls",
)

# What the loop leaves for the writer: a share of each budget.
WRITER_TOKEN_SHARE = 0.3
WRITER_SECONDS_SHARE = 0.25
MIN_COMPLETION = 48  # a call that cannot produce this many tokens is not made
CLOSING_SECONDS = 1.0  # kept after the last call for checking citations and finishing


def empty_usage() -> dict:
    return {k: 0 for k in USAGE_KEYS} | {"seconds": 0.0, "cost_usd": 0.0}


def add_usage(a: dict | None, b: dict | None) -> dict:
    out = empty_usage()
    for u in (a or {}, b or {}):
        for k in USAGE_KEYS:
            out[k] += u.get(k, 0) or 0
    out["seconds"] = round(out["seconds"], 3)
    out["cost_usd"] = round(out["cost_usd"], 6)
    return out


def estimate_tokens(text: str) -> int:
    """A generous upper estimate of the tokens of `text` for budget checks.

    BPE tokenizers give about 4 bytes per token on English; counting 3 keeps a margin.
    """
    return math.ceil(len(text.encode("utf-8")) / 3) + 4


class BudgetExhausted(Exception):
    """No model call fits in what is left; `reason` names the budget."""

    def __init__(self, reason: str):
        super().__init__(f"budget exhausted: {reason}")
        self.reason = reason


@dataclass
class Budget:
    """The limits of one loop (or section) and what it has used, for one node run."""

    max_tokens: int
    max_seconds: float
    max_iterations: int
    usage: dict = field(default_factory=empty_usage)
    started: float = field(default_factory=time.monotonic)
    held: int = 0  # tokens reserved by calls in flight (a node may make calls concurrently)
    max_cost: float | None = None  # dollars (None: no cost budget)
    price: Price | None = None  # the model's (None: not known)
    held_cost: float = 0.0  # what the calls in flight may cost at most
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.usage = add_usage(self.usage, None)  # a copy with every key present

    @classmethod
    def of(cls, ctx, state: Mapping[str, Any]) -> Budget:
        return cls(
            max_tokens=ctx.max_tokens,
            max_seconds=ctx.max_seconds,
            max_iterations=ctx.max_iterations,
            usage=state.get("usage") or {},
            max_cost=getattr(ctx, "max_cost", None),
            price=model_price(ctx),
        )

    # --- what is left -------------------------------------------------------------
    def seconds_used(self) -> float:
        return self.usage["seconds"] + (time.monotonic() - self.started)

    def tokens_left(self) -> int:
        return self.max_tokens - self.usage["total_tokens"] - self.held

    def seconds_left(self) -> float:
        return self.max_seconds - self.seconds_used()

    def loop_seconds_left(self) -> float:
        """Seconds left of the loop's share of the time (the writer's share kept): what searching,
        and listing a run's MCP tools, may spend."""
        return self.max_seconds * (1 - WRITER_SECONDS_SHARE) - self.seconds_used()

    def cost_left(self, *, for_writer: bool = False) -> float:
        """Dollars left of the cost budget (the writer's share kept unless `for_writer`); inf without one."""
        if self.max_cost is None:
            return math.inf
        reserve = 0.0 if for_writer else self.max_cost * WRITER_TOKEN_SHARE
        return self.max_cost - reserve - self.usage["cost_usd"] - self.held_cost

    def _cost(self, prompt_tokens: int, completion: int) -> float:
        return self.price.cost(prompt_tokens, completion) if self.price else 0.0

    def exhausted(self, *, for_writer: bool = False) -> str | None:
        """The budget that stops the loop now, if any. The loop keeps the writer's share."""
        tok_reserve = 0 if for_writer else int(self.max_tokens * WRITER_TOKEN_SHARE)
        sec_reserve = CLOSING_SECONDS if for_writer else self.max_seconds * WRITER_SECONDS_SHARE
        if self.tokens_left() - tok_reserve < MIN_COMPLETION * 4:
            return "max_tokens"
        if self.cost_left(for_writer=for_writer) < self._cost(MIN_COMPLETION * 4, MIN_COMPLETION * 4):
            return "max_cost"
        if self.seconds_left() - sec_reserve <= 0.2:
            return "max_seconds"
        if not for_writer and self.usage["iterations"] >= self.max_iterations:
            return "max_iterations"
        return None

    def reserve(self, prompt_tokens: int, want: int, *, for_writer: bool = False) -> int:
        """The completion cap for a call whose prompt is about `prompt_tokens` long.

        Raises BudgetExhausted when not even MIN_COMPLETION tokens fit.
        """
        tok_reserve = 0 if for_writer else int(self.max_tokens * WRITER_TOKEN_SHARE)
        sec_reserve = CLOSING_SECONDS if for_writer else self.max_seconds * WRITER_SECONDS_SHARE
        if self.seconds_left() - sec_reserve <= 0.2:
            raise BudgetExhausted("max_seconds")
        with self._lock:
            room = self.tokens_left() - tok_reserve - prompt_tokens
            if room < MIN_COMPLETION:
                raise BudgetExhausted("max_tokens")
            cap = min(want, room)
            if self.max_cost is not None and self.price and self.price.output:
                # the most the call may cost: its prompt at the input price, its cap at the output price
                dollars = self.cost_left(for_writer=for_writer) - self._cost(prompt_tokens, 0)
                cap = min(cap, math.floor(dollars * 1e6 / self.price.output))
                if cap < MIN_COMPLETION:
                    raise BudgetExhausted("max_cost")
            self.held += prompt_tokens + cap  # until the call settles, as if all of it were spent
            self.held_cost += self._cost(prompt_tokens, cap)
            return cap

    def time_up(self, *, for_writer: bool = False) -> bool:
        """No call may start any more: the time left is what is kept for later steps."""
        sec_reserve = CLOSING_SECONDS if for_writer else self.max_seconds * WRITER_SECONDS_SHARE
        return self.seconds_left() - sec_reserve <= 0.2

    def check_time(self, *, for_writer: bool = False) -> None:
        """Raise BudgetExhausted when no call may start any more (checked before any work)."""
        if self.time_up(for_writer=for_writer):
            raise BudgetExhausted("max_seconds")

    def release(self, prompt_tokens: int, cap: int) -> None:
        """A reserved call ended (with or without a reply): free its reservation."""
        with self._lock:
            self.held -= prompt_tokens + cap
            self.held_cost -= self._cost(prompt_tokens, cap)

    def timeout(self, *, for_writer: bool = False) -> float:
        """How long the next call may take without carrying the run past its time budget."""
        sec_reserve = CLOSING_SECONDS if for_writer else self.max_seconds * WRITER_SECONDS_SHARE
        return max(0.1, self.seconds_left() - sec_reserve)

    # --- spending -----------------------------------------------------------------
    def record(
        self, input_tokens: int, output_tokens: int, *, cut: bool = False, reasoning: int = 0, cached: int = 0
    ) -> None:
        """A call's tokens, as the provider counted them (`cached`: input tokens read from its cache)."""
        with self._lock:
            if self.price is None:
                self.usage["unpriced_calls"] += 1
            else:
                self.usage["cost_usd"] += self.price.cost(input_tokens, output_tokens, cached)
            self.usage["reasoning_tokens"] += reasoning
            self.usage["input_tokens"] += input_tokens
            self.usage["output_tokens"] += output_tokens
            self.usage["total_tokens"] += input_tokens + output_tokens
            self.usage["llm_calls"] += 1
            self.usage["cut_replies"] += int(cut)

    def close(self) -> dict:
        """The usage to write back to state, with this node's time added."""
        out = dict(self.usage)
        out["seconds"] = round(self.seconds_used(), 3)
        return out


def recursion_limit(ctx) -> int:
    """LangGraph's bound on supersteps for a run of `ctx` (a `Context`), in either graph: the
    loop's 5 nodes per iteration plus analyse, start and end, clarify's rounds (its questions, the
    answer, the next round), charts and infer; a deep run's review rounds, and a dependent outline's
    layers (2 steps each)."""
    loop = 5 * (ctx.max_iterations + 1) + 7 + 3 + 2
    return max(loop, 2 * ctx.max_review_rounds + 15, 2 * ctx.max_sections + 17)
