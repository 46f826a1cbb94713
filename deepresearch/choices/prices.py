"""What a model's tokens cost: a table of provider models' list prices (US dollars per million
tokens: input, cached input, output), which a user's own TOML table overrides.

    # prices.toml: one table per model name (as after 'openai:'), dollars per million tokens
    ["gpt-4o-mini"]
    input = 0.15
    cached_input = 0.075
    output = 0.60

The user's table is the file given (`--prices FILE`, context `prices`), else `prices.toml` in
the user config directory when there is one. A model run on this machine (`local`, `gguf:`) or
by a local server (`ollama:`, `vllm:`, `llamacpp:`, `lmstudio:`) costs nothing; a provider model
in neither table has no known cost (`price_for` returns None).
"""

from __future__ import annotations

import functools
import math
import os
import tomllib
from pathlib import Path
from typing import NamedTuple

import platformdirs


class Price(NamedTuple):
    input: float  # dollars per million input tokens
    cached_input: float  # dollars per million input tokens read from the provider's prompt cache
    output: float  # dollars per million output tokens

    def cost(self, input_tokens: int, output_tokens: int, cached: int = 0) -> float:
        cached = min(max(0, cached), input_tokens)
        return ((input_tokens - cached) * self.input + cached * self.cached_input + output_tokens * self.output) / 1e6


FREE = Price(0.0, 0.0, 0.0)
LOCAL_PREFIXES = ("ollama:", "vllm:", "llamacpp:", "lmstudio:", "gguf:")

# List prices of OpenAI's API (standard tier), dollars per million tokens: input, cached input, output.
TABLE: dict[str, Price] = {
    "gpt-4o": Price(2.50, 1.25, 10.00),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.025, 0.40),
    "gpt-5": Price(1.25, 0.125, 10.00),
    "gpt-5-mini": Price(0.25, 0.025, 2.00),
    "gpt-5-nano": Price(0.05, 0.005, 0.40),
    "o3": Price(2.00, 0.50, 8.00),
    "o4-mini": Price(1.10, 0.275, 4.40),
    "o3-mini": Price(1.10, 0.55, 4.40),
}


class PriceTableError(ValueError):
    """A user's price table that cannot be read or holds something that is no price."""


def user_table_path(given: str | None) -> Path | None:
    if given:
        return Path(given).expanduser()
    default = _default_table(os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))
    return default if default.is_file() else None


@functools.lru_cache(maxsize=8)
def _default_table(xdg_config_home: str | None, home: str | None) -> Path:
    """The default table's path, worked out once per setting of what it depends on (every
    budget asks for the price: platformdirs is most of that call's time)."""
    return Path(platformdirs.user_config_dir("deepresearch")) / "prices.toml"


@functools.lru_cache(maxsize=16)
def _read(path: str, stamp: float) -> dict[str, Price]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise PriceTableError(f"cannot read the price table {path}: {getattr(e, 'strerror', None) or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise PriceTableError(f"the price table {path} is not valid TOML: {e}") from None
    out = {}
    for name, row in data.items():
        if not isinstance(row, dict) or not {"input", "output"} <= set(row):
            raise PriceTableError(
                f"price table {path}: [{name}] needs 'input' and 'output' (dollars per million tokens)"
            )
        values = [row["input"], row.get("cached_input", row["input"]), row["output"]]
        if not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0 for v in values
        ):
            raise PriceTableError(f"price table {path}: [{name}] prices must be numbers of 0 or more")
        out[str(name)] = Price(*(float(v) for v in values))
    return out


def user_table(given: str | None) -> dict[str, Price]:
    path = user_table_path(given)
    if path is None:
        return {}
    try:
        stamp = path.stat().st_mtime
    except OSError as e:
        raise PriceTableError(f"cannot read the price table {path}: {e.strerror}") from None
    return _read(str(path), stamp)


def model_name(spec: str) -> str:
    """`openai:gpt-4o-mini` -> `gpt-4o-mini` (what the tables are keyed by)."""
    return spec.split(":", 1)[1] if spec.startswith("openai:") else spec


def price_for(model: str, prices: str | None = None) -> Price | None:
    """The price of `model` (a model spec), or None when it is not known."""
    if model in ("local", "none") or model.startswith(LOCAL_PREFIXES):
        return FREE
    name = model_name(model)
    table = {**TABLE, **user_table(prices)}
    return table.get(name) or table.get(model)
