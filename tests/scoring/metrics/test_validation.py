"""pytest_jeval.scoring.metrics: every metric rejects empty and mismatched input with ValueError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytest_jeval.scoring.metrics as metrics
from pytest_jeval.scoring.metrics import (
    accuracy,
    bootstrap_interval,
    brier_score,
    cohen_kappa,
    confusion_matrix,
    consistency,
    expected_calibration_error,
    mcnemar,
    mean_absolute_error,
    precision_recall_f1,
    reliability_bins,
    signed_mean_error,
)

# Each entry: a call taking two same-kind sequences.
PAIRED: dict[str, Callable[[Any, Any], Any]] = {
    "accuracy": accuracy,
    "accuracy_tolerance": lambda p, g: accuracy(p, g, tolerance=1),
    "confusion_matrix": confusion_matrix,
    "precision_recall_f1": lambda p, g: precision_recall_f1(p, g, positive=1),
    "precision_recall_f1_macro": lambda p, g: precision_recall_f1(p, g, average="macro"),
    "mean_absolute_error": mean_absolute_error,
    "signed_mean_error": signed_mean_error,
    "cohen_kappa": cohen_kappa,
    "cohen_kappa_weighted": lambda a, b: cohen_kappa(a, b, weights="quadratic"),
    "expected_calibration_error": expected_calibration_error,
    "reliability_bins": reliability_bins,
    "brier_score": brier_score,
    "mcnemar": mcnemar,
    "consistency": lambda a, b: consistency([a, b]),
    "bootstrap_interval": lambda a, b: bootstrap_interval(accuracy, a, b, n_resamples=10),
}


@pytest.mark.parametrize("name", PAIRED)
@pytest.mark.parametrize("empty", [[], (), np.array([])], ids=["list", "tuple", "array"])
def test_empty_input_raises(name: str, empty: Any) -> None:
    with pytest.raises(ValueError, match="empty"):
        PAIRED[name](empty, empty)


@pytest.mark.parametrize("name", PAIRED)
def test_length_mismatch_raises(name: str) -> None:
    with pytest.raises(ValueError, match="length mismatch"):
        PAIRED[name]([1, 0, 1], [1, 0])


@pytest.mark.parametrize("name", PAIRED)
def test_valid_input_gives_finite_numbers(name: str) -> None:
    # The same small input every metric accepts; nothing comes back NaN.
    result = PAIRED[name]([1, 0, 1, 1], [1, 0, 0, 1])
    if isinstance(result, tuple) and isinstance(result[0], np.ndarray):  # confusion_matrix
        result = result[0].ravel().tolist()
    elif isinstance(result, list):  # reliability_bins
        result = [b["count"] for b in result]
    elif isinstance(result, metrics.McNemarResult):
        result = [result.statistic, result.p_value]
    values = np.atleast_1d(np.asarray(result, dtype=float))
    assert np.all(np.isfinite(values))


@pytest.mark.parametrize("name", ["accuracy", "confusion_matrix", "cohen_kappa", "mean_absolute_error"])
def test_single_strings_and_2d_arrays_are_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        PAIRED[name]("1011", "1001")
    with pytest.raises(ValueError, match="one-dimensional"):
        PAIRED[name](np.ones((2, 2)), np.ones((2, 2)))


def test_public_api() -> None:
    assert sorted(metrics.__all__) == [
        "McNemarResult",
        "accuracy",
        "bootstrap_interval",
        "brier_score",
        "cohen_kappa",
        "confusion_matrix",
        "consistency",
        "expected_calibration_error",
        "mcnemar",
        "mean_absolute_error",
        "metric_stats",
        "pass_at_k",
        "pass_hat_k",
        "precision_recall_f1",
        "reliability_bins",
        "root_mean_squared_error",
        "signed_mean_error",
        "wilson_interval",
    ]
    for name in metrics.__all__:
        obj = getattr(metrics, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, name
