"""Cost: the price table and a user's TOML table over it, the run's cost in `usage` counted from
the provider's own token counts, `--max-cost` holding like the token budget (a partial report),
and a model without a price: cost unknown, said once."""

from __future__ import annotations

import json

import pytest

from deepresearch.choices.prices import FREE, Price, price_for
from deepresearch.config import Context
from deepresearch.runtime.runner import research
from tests.fakes import researcher
from tests.helpers import cli, one_line_error
from tests.stub_openai import StubOpenAI

PRICE = Price(10.0, 5.0, 30.0)  # dollars per million tokens: dear, so a few calls cost cents


def table(tmp_path, name: str, price: Price = PRICE):
    path = tmp_path / "prices.toml"
    path.write_text(
        f'["{name}"]\ninput = {price.input}\ncached_input = {price.cached_input}\noutput = {price.output}\n',
        encoding="utf-8",
    )
    return str(path)


def test_prices_built_in_user_override_local_and_unknown(tmp_path):
    assert price_for("openai:gpt-4o-mini") == Price(0.15, 0.075, 0.60)
    assert price_for("openai:gpt-4o-mini", table(tmp_path, "gpt-4o-mini")) == PRICE  # the user's table wins
    assert price_for("local") == FREE and price_for("ollama:qwen3:4b") == FREE and price_for("gguf:/m.gguf") == FREE
    assert price_for("openai:some-new-model") is None
    assert PRICE.cost(1_000_000, 100_000, cached=400_000) == pytest.approx(6.0 + 2.0 + 3.0)
    bad = tmp_path / "bad.toml"
    bad.write_text('["m"]\ninput = "cheap"\noutput = 1\n', encoding="utf-8")
    with pytest.raises(ValueError, match="must be numbers"):
        Context(model="openai:m", prices=str(bad))


def test_the_runs_cost_is_its_tokens_at_the_models_price(fake_model, tmp_path, warm):
    model, fake = fake_model(researcher())
    out = research(
        "Who built the Eiffel Tower?",
        Context(model=model, prices=table(tmp_path, model), max_iterations=1),
        mode="iterative",
    )
    usage = out["usage"]
    assert usage["llm_calls"] > 0 and usage["unpriced_calls"] == 0
    assert usage["cost_usd"] == pytest.approx(PRICE.cost(usage["input_tokens"], usage["output_tokens"]), abs=1e-6)


def test_max_cost_stops_the_run_with_a_partial_report(fake_model, tmp_path, warm):
    model, fake = fake_model(researcher(complete_after=99, queries=lambda n: [f"Eiffel Tower {n}"]))
    ctx = Context(model=model, prices=table(tmp_path, model), max_cost=0.06, max_iterations=10)
    events = []
    out = research("Who built the Eiffel Tower?", ctx, mode="iterative", on_event=events.append)
    assert out["stopped_by"] == "max_cost"
    assert out["usage"]["cost_usd"] <= 0.06 and out["usage"]["iterations"] < 10
    assert "Partial report" in out["report"] and "cost budget" in out["report"] and out["sources"]
    assert any(e["type"] == "budget" and e["reason"] == "max_cost" for e in events)
    unlimited = research(
        "Who built the Eiffel Tower?",
        Context(model=model, prices=ctx.prices, max_iterations=10, max_tokens=400_000),
        mode="iterative",
    )
    assert unlimited["usage"]["cost_usd"] > 0.06  # the same research without the budget would have cost more


def test_max_cost_needs_a_known_price():
    with pytest.raises(ValueError, match="price of 'openai:some-new-model' is not known"):
        Context(model="openai:some-new-model", max_cost=1.0)


def test_cli_shows_the_cost_and_says_once_when_it_is_unknown(cli_env, tmp_path):
    cli_env["OPENAI_API_KEY"] = "sk-test-0123456789abcdef"
    with StubOpenAI(researcher()) as server:
        known = cli(
            [
                "Who built the Eiffel Tower?",
                "--mode",
                "iterative",
                "--max-iterations",
                "1",
                "--model",
                "openai:gpt-4o-mini",
                "--base-url",
                server.base_url,
                "--json",
                "--db",
                tmp_path / "a.sqlite",
            ],
            cli_env,
        )
        unknown = cli(
            [
                "Who built the Eiffel Tower?",
                "--mode",
                "iterative",
                "--max-iterations",
                "1",
                "--model",
                "openai:brand-new",
                "--base-url",
                server.base_url,
                "--json",
                "--db",
                tmp_path / "b.sqlite",
            ],
            cli_env,
        )
    assert known.returncode == 0 and unknown.returncode == 0, known.stderr + unknown.stderr
    cost = json.loads(known.stdout)["usage"]["cost_usd"]
    assert cost > 0 and f"${cost:.4f}" in known.stderr and "cost unknown" not in known.stderr
    assert unknown.stderr.count("cost unknown") == 1 and json.loads(unknown.stdout)["usage"]["unpriced_calls"] > 0
    assert "not known" in one_line_error(cli(["Why?", "--model", "openai:brand-new", "--max-cost", "1"], cli_env))


def test_deep_sections_share_the_cost_budget_like_tokens(tmp_path):
    from deepresearch.sections.run import section_context
    from deepresearch.sections.tasks import SYNTHESIS_TOKEN_SHARE, section_budget

    ctx = Context(model="openai:m", prices=table(tmp_path, "m"), max_cost=1.0)
    share = section_budget(ctx, {"cost_usd": 0.2}, sections=4, pool=8)
    assert share["max_cost"] == pytest.approx((1.0 - 0.2 - SYNTHESIS_TOKEN_SHARE) / 4)
    assert 4 * share["max_cost"] + 0.2 <= 1.0  # the sections and what was spent never pass the limit
    assert section_context(ctx, {"budget": share}).max_cost == share["max_cost"]
    assert "max_cost" not in section_budget(Context(), {}, sections=4, pool=8)  # no cost budget: none shared
