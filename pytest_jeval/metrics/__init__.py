"""Metrics for benchmark results: pure functions of predictions and gold answers.

Each metric takes plain sequences (lists, tuples, numpy arrays) and returns
plain Python floats / tuples / dicts. Bad input -- empty, mismatched lengths,
probabilities outside [0, 1], missing values -- raises ValueError instead of
producing NaN. See docs/metrics.md for formulas and conventions.
"""

from __future__ import annotations

from pytest_jeval.metrics._agreement import cohen_kappa
from pytest_jeval.metrics._agreement import consistency
from pytest_jeval.metrics._calibration import brier_score
from pytest_jeval.metrics._calibration import expected_calibration_error
from pytest_jeval.metrics._calibration import reliability_bins
from pytest_jeval.metrics._classification import accuracy
from pytest_jeval.metrics._classification import confusion_matrix
from pytest_jeval.metrics._classification import precision_recall_f1
from pytest_jeval.metrics._intervals import bootstrap_interval
from pytest_jeval.metrics._intervals import wilson_interval
from pytest_jeval.metrics._regression import mean_absolute_error
from pytest_jeval.metrics._regression import signed_mean_error
from pytest_jeval.metrics._significance import McNemarResult
from pytest_jeval.metrics._significance import mcnemar
from pytest_jeval.metrics._summary import metric_stats

__all__ = [
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
    "precision_recall_f1",
    "reliability_bins",
    "signed_mean_error",
    "wilson_interval",
]
