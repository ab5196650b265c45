"""The run budget's prices: checked when the suite is planned, so an unknown price is a usage error.

``[run] max_cost_usd`` needs the price of every model the run may call: each ``[[models]]`` entry, the
``[judge]`` model (and each benchmark's ``judge_model``) and the ``[user]`` model. A price is the
entry's ``price_in_per_mtok`` / ``price_out_per_mtok``, else the list price of its exact model id
(:mod:`pytest_jeval.telemetry.pricing`); an unknown cost is never taken as $0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_jeval.suite.config import Suite, SuiteError
from pytest_jeval.telemetry.pricing import price_for

__all__ = ["budget_prices"]


def _price(entry: Any, model: str) -> tuple[float, float] | None:
    listed = price_for(model)
    price_in = entry.price_in_per_mtok if entry.price_in_per_mtok is not None else (
        listed.input_per_mtok if listed else None)
    price_out = entry.price_out_per_mtok if entry.price_out_per_mtok is not None else (
        listed.output_per_mtok if listed else None)
    return (float(price_in), float(price_out)) if price_in is not None and price_out is not None else None


def budget_prices(suite: Suite, path: Path) -> dict[str, tuple[float, float]]:
    """Model id -> USD per million (prompt, completion) tokens of every model the run may call.

    With ``max_cost_usd`` set, a model without a price is a :class:`SuiteError` naming where to set one;
    two entries of one model id with different prices keep the dearer (the budget errs on the safe side).
    """
    needed: list[tuple[str, Any, str]] = [(f"models[{i}]", m, m.name) for i, m in enumerate(suite.models)]
    if suite.judge is not None:
        needed.append(("judge", suite.judge, suite.judge.model))
        needed += [("judge", suite.judge, b.judge_model) for b in suite.benchmarks if b.judge_model]
    if suite.user is not None:
        needed.append(("user", suite.user, suite.user.model))
    prices: dict[str, tuple[float, float]] = {}
    for where, entry, model in needed:
        found = _price(entry, model)
        if found is None:
            if suite.run.max_cost_usd is not None:
                raise SuiteError(
                    f"invalid suite {path}:\n  run.max_cost_usd: the cost of {model!r} ({where}) is unknown: it is not "
                    f"in the price table; set price_in_per_mtok and price_out_per_mtok on {where} (0 for a free "
                    "local model), or budget by max_total_tokens instead (an unknown cost is never $0)")
            continue
        old = prices.get(model)
        prices[model] = found if old is None else (max(old[0], found[0]), max(old[1], found[1]))
    return prices
