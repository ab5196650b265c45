"""Descriptive statistics for the ``*_stats`` blocks of a run summary."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def metric_stats(values: Iterable[float | None]) -> dict[str, float] | None:
    """Mean, median, min, max and population std of the non-None *values*.

    ``std = sqrt((1/m) * sum_i (x_i - mean)^2)`` over the ``m`` non-None values
    (ddof=0). Returns ``None`` when there is no value at all (all None or an
    empty input), so that a summary can write ``null`` rather than NaN.
    """
    if isinstance(values, (str, bytes)):
        raise ValueError("values must be a sequence of numbers, not a single string")
    kept: list[float] = []
    for value in values:
        if value is None:
            continue
        if isinstance(value, (str, bytes)):
            raise ValueError(f"values must be numbers or None, got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"values must be numbers or None, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"values contains a non-finite number: {value!r}")
        kept.append(number)
    if not kept:
        return None
    array = np.asarray(kept, dtype=np.float64)
    return {
        "mean": float(np.mean(array)),
        "median": float(np.median(array)),
        "min": float(np.min(array)),
        "max": float(np.max(array)),
        "std": float(np.std(array, ddof=0)),
    }
