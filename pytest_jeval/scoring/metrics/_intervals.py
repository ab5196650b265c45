"""Confidence intervals: Wilson score interval and the paired bootstrap."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._validation import check_confidence, check_lengths, check_positive_int


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``p = successes / n``.

    With ``z`` the standard-normal quantile ``1 - (1 - confidence)/2``::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
        (low, high) = (centre - half, centre + half)

    clipped to [0, 1] (``low`` is exactly 0 when ``successes == 0``, ``high``
    exactly 1 when ``successes == n``). No continuity correction.
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n <= 0:
        raise ValueError(f"n must be >= 1, got {n!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n={n}], got {successes!r}")
    confidence = check_confidence(confidence)
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _as_resamplable(values: Any, name: str) -> npt.NDArray[Any]:
    if isinstance(values, np.ndarray):
        array = values
    else:
        items = list(values)
        array = np.asarray(items)
        if array.dtype.kind in "US" and not all(isinstance(item, (str, bytes)) for item in items):
            # np.asarray would silently turn [1, "a"] into ["1", "a"].
            array = np.empty(len(items), dtype=object)
            array[:] = items
    if array.ndim == 0:
        raise ValueError(f"{name} must be a sequence, got a scalar")
    return array


def bootstrap_interval(
    metric: Callable[..., float],
    *arrays: Any,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Paired percentile bootstrap interval for ``metric(*arrays)``.

    Each of the *n_resamples* resamples draws ``n`` item indices with
    replacement (``numpy.random.default_rng(seed)``) and applies the SAME
    indices to every array (along axis 0), so paired data such as
    (predicted, gold) stay paired. With ``alpha = 1 - confidence``, the
    interval is the ``alpha/2`` and ``1 - alpha/2`` percentiles (numpy's linear
    interpolation) of the resampled metric values. Deterministic for a seed.
    """
    if not arrays:
        raise ValueError("bootstrap_interval needs at least one array to resample")
    if not callable(metric):
        raise ValueError(f"metric must be callable, got {metric!r}")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    confidence = check_confidence(confidence)
    data = [_as_resamplable(array, f"arrays[{i}]") for i, array in enumerate(arrays)]
    n = check_lengths(**{f"arrays[{i}]": array for i, array in enumerate(data)})
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, size=(n_resamples, n))
    values = np.empty(n_resamples, dtype=np.float64)
    for r, index in enumerate(indices):
        values[r] = float(metric(*(array[index] for array in data)))
    if not np.all(np.isfinite(values)):
        raise ValueError("metric returned NaN or an infinite value on a bootstrap resample")
    alpha = 1.0 - confidence
    low, high = np.percentile(values, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return float(low), float(high)
