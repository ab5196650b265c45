"""Error metrics on numeric answers (scores on a scale, extracted numbers)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._validation import as_float_array, check_lengths


def _paired(predicted: npt.ArrayLike, gold: npt.ArrayLike) -> npt.NDArray[np.float64]:
    pred, ref = as_float_array(predicted, "predicted"), as_float_array(gold, "gold")
    check_lengths(predicted=pred, gold=ref)
    return pred - ref


def mean_absolute_error(predicted: npt.ArrayLike, gold: npt.ArrayLike) -> float:
    """Mean absolute error: ``MAE = (1/n) * sum_i |predicted_i - gold_i|``."""
    return float(np.mean(np.abs(_paired(predicted, gold))))


def root_mean_squared_error(predicted: npt.ArrayLike, gold: npt.ArrayLike) -> float:
    """Root mean squared error: ``RMSE = sqrt((1/n) * sum_i (predicted_i - gold_i)^2)``.

    Beside MAE it weighs a catastrophic miss more than several small ones (one miss of 4 levels
    on ten items gives MAE 0.4 and RMSE 1.26; four misses of 1 give MAE 0.4 and RMSE 0.63).
    """
    return float(np.sqrt(np.mean(np.square(_paired(predicted, gold)))))


def signed_mean_error(predicted: npt.ArrayLike, gold: npt.ArrayLike) -> float:
    """Mean signed error (bias): ``(1/n) * sum_i (predicted_i - gold_i)``.

    Positive when the predictions run high (e.g. a judge that scores too
    generously), negative when they run low.
    """
    return float(np.mean(_paired(predicted, gold)))
