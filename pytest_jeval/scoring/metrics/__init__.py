"""Metrics for benchmark results: pure functions of predictions and gold answers.

Each metric takes plain sequences (lists, tuples, numpy arrays) and returns
plain Python floats / tuples / dicts. Bad input -- empty, mismatched lengths,
probabilities outside [0, 1], missing values -- raises ValueError instead of
producing NaN. See docs/metrics.md for formulas and conventions.
"""

from __future__ import annotations

from pytest_jeval.scoring.metrics._agreement import cohen_kappa, consistency
from pytest_jeval.scoring.metrics._calibration import brier_score, expected_calibration_error, reliability_bins
from pytest_jeval.scoring.metrics._classification import accuracy, confusion_matrix, precision_recall_f1
from pytest_jeval.scoring.metrics._intervals import bootstrap_interval, wilson_interval
from pytest_jeval.scoring.metrics._regression import mean_absolute_error, root_mean_squared_error, signed_mean_error
from pytest_jeval.scoring.metrics._repeats import pass_at_k, pass_hat_k
from pytest_jeval.scoring.metrics._significance import McNemarResult, mcnemar
from pytest_jeval.scoring.metrics._summary import metric_stats

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
    "pass_at_k",
    "pass_hat_k",
    "precision_recall_f1",
    "reliability_bins",
    "root_mean_squared_error",
    "signed_mean_error",
    "wilson_interval",
]
