"""Per-call cost from a table of list prices, keyed by exact model id.

Lookup is exact: ``gpt-5-mini-2025-08-07`` has its own row, and an id that is
not in the table (``gpt-5-mini-2099-01-01``, ``openai/gpt-4o``, ``qwen3:8b``)
has no price.  There is no prefix or fuzzy matching, because a prefix match
prices ``gpt-5-mini-...`` as ``gpt-5``.  An unpriced call costs None, not 0;
set ``price_in_per_mtok`` / ``price_out_per_mtok`` in the suite to price it
(0 for a local model).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["PRICES", "PRICES_TAKEN_ON", "Price", "cost_usd", "price_for"]


@dataclasses.dataclass(frozen=True)
class Price:
    """List price in USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float


PRICES_TAKEN_ON = "2025-08"
"""When the table below was compiled from the providers' public price pages."""

# Standard-tier list prices (USD per 1M tokens, uncached input) as published
# in August 2025 on https://openai.com/api/pricing and
# https://www.anthropic.com/pricing.  Prices change: check them, and override
# per model in the suite (price_in_per_mtok / price_out_per_mtok) rather than
# relying on this table.  Cached-input discounts and batch pricing are not
# modelled.  Dated snapshots are listed separately on purpose: an alias and
# its snapshots can be priced differently (gpt-4o-2024-05-13 vs gpt-4o).
_TABLE: dict[str, Price] = {
    # OpenAI
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-2024-05-13": Price(5.00, 15.00),
    "gpt-4o-2024-08-06": Price(2.50, 10.00),
    "gpt-4o-2024-11-20": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o-mini-2024-07-18": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-2025-04-14": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-mini-2025-04-14": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4.1-nano-2025-04-14": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-2025-08-07": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-mini-2025-08-07": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "gpt-5-nano-2025-08-07": Price(0.05, 0.40),
    "o3": Price(2.00, 8.00),
    "o3-2025-04-16": Price(2.00, 8.00),
    "o4-mini": Price(1.10, 4.40),
    "o4-mini-2025-04-16": Price(1.10, 4.40),
    # Anthropic
    "claude-sonnet-4-20250514": Price(3.00, 15.00),
    "claude-opus-4-1-20250805": Price(15.00, 75.00),
    "claude-3-5-haiku-20241022": Price(0.80, 4.00),
}

PRICES: Mapping[str, Price] = MappingProxyType(_TABLE)
"""Read-only price table keyed by exact model id."""


def price_for(model_id: str) -> Price | None:
    """The table price for exactly ``model_id``, or None."""
    return PRICES.get(model_id)


def _check_price(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return value


def cost_usd(
    model_id: str,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    *,
    price_in_per_mtok: float | None = None,
    price_out_per_mtok: float | None = None,
) -> float | None:
    """Cost of one call in USD, or None when it cannot be known.

    Each side's price is the suite override when given, else the table price
    for exactly ``model_id``.  None when either price is unknown or either
    token count is missing.
    """
    price_in = _check_price("price_in_per_mtok", price_in_per_mtok)
    price_out = _check_price("price_out_per_mtok", price_out_per_mtok)
    listed = price_for(model_id)
    if listed is not None:
        price_in = listed.input_per_mtok if price_in is None else price_in
        price_out = listed.output_per_mtok if price_out is None else price_out
    if price_in is None or price_out is None:
        return None
    if prompt_tokens is None or completion_tokens is None:
        return None
    if prompt_tokens < 0 or completion_tokens < 0:
        raise ValueError("token counts must be non-negative")
    return (prompt_tokens * price_in + completion_tokens * price_out) / 1_000_000
