"""Cost table: exact ids only, suite overrides win, unknown means None."""

from __future__ import annotations

import pytest

from pytest_jeval.telemetry.pricing import PRICES, Price, cost_usd, price_for


def test_known_model_cost() -> None:
    # 1M prompt tokens at $1.25 + 100k completion tokens at $10
    assert cost_usd("gpt-5", 1_000_000, 100_000) == pytest.approx(1.25 + 1.0)
    assert cost_usd("gpt-4o-mini", 2000, 500) == pytest.approx((2000 * 0.15 + 500 * 0.60) / 1e6)


def test_variants_are_priced_as_themselves_not_by_prefix() -> None:
    assert price_for("gpt-5-mini") == Price(0.25, 2.00)
    assert price_for("gpt-5-mini-2025-08-07") == Price(0.25, 2.00)
    assert price_for("gpt-5-mini") != price_for("gpt-5")
    assert cost_usd("gpt-5-mini-2025-08-07", 1_000_000, 0) == pytest.approx(0.25)
    assert price_for("gpt-4o-2024-05-13") != price_for("gpt-4o")


@pytest.mark.parametrize(
    "model",
    [
        "gpt-5-mini-2099-01-01",
        "gpt-5-turbo",
        "gpt-4o-mini-2099-01-01",
        "openai/gpt-4o",
        "GPT-5",
        " gpt-5",
        "qwen3:8b",
        "",
    ],
)
def test_unknown_ids_have_no_price(model: str) -> None:
    assert price_for(model) is None
    assert cost_usd(model, 1000, 1000) is None


def test_table_contents() -> None:
    for model in [
        "gpt-4o",
        "gpt-4o-2024-08-06",
        "gpt-4o-mini",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-mini-2025-08-07",
        "gpt-5-nano",
    ]:
        assert model in PRICES
    for price in PRICES.values():
        assert 0 < price.input_per_mtok <= price.output_per_mtok
    with pytest.raises(TypeError):
        PRICES["gpt-5"] = Price(0, 0)  # type: ignore[index]


def test_suite_overrides_win() -> None:
    assert cost_usd(
        "gpt-5", 1_000_000, 1_000_000, price_in_per_mtok=1.0, price_out_per_mtok=2.0
    ) == pytest.approx(3.0)
    # one side overridden, the other from the table
    assert cost_usd("gpt-5", 1_000_000, 1_000_000, price_out_per_mtok=0.0) == pytest.approx(1.25)
    # an unlisted (local) model priced by the suite
    assert cost_usd("qwen3:8b", 5000, 5000, price_in_per_mtok=0.0, price_out_per_mtok=0.0) == 0.0
    # half a price for an unlisted model is still unknown
    assert cost_usd("qwen3:8b", 5000, 5000, price_in_per_mtok=1.0) is None


def test_missing_tokens_give_none() -> None:
    assert cost_usd("gpt-5", None, 10) is None
    assert cost_usd("gpt-5", 10, None) is None
    assert cost_usd("gpt-5", 0, 0) == 0.0


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError):
        cost_usd("gpt-5", 10, 10, price_in_per_mtok=-1.0)
    with pytest.raises(ValueError):
        cost_usd("gpt-5", -10, 10)
