"""Calibration of stated probabilities: ECE, reliability bins, Brier score.

Binning convention (Guo et al. 2017; scikit-learn's ``calibration_curve``):
``n_bins`` equal-width bins on [0, 1], closed on the right. Bin ``b`` holds
the probabilities ``p`` with ``b/n_bins < p <= (b+1)/n_bins``; ``p == 0``
joins the first bin. A value exactly on an inner edge therefore joins the
LOWER bin (0.1 is in bin 0 of 10, 0.2 in bin 1, ...). The edges are the
correctly rounded doubles ``b / n_bins``, so a decimal literal such as
``0.3`` is treated as the edge 3/10.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._validation import as_binary, as_probabilities, check_lengths, check_positive_int


def _paired(
    probability: npt.ArrayLike, outcome: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    prob = as_probabilities(probability, "probability")
    hit = as_binary(outcome, "outcome")
    check_lengths(probability=prob, outcome=hit)
    return prob, hit


def _bin_index(prob: npt.NDArray[np.float64], n_bins: int) -> npt.NDArray[np.intp]:
    """Index of the right-closed bin ``(b/n, (b+1)/n]`` holding each probability."""
    inner_edges = np.arange(1, n_bins) / n_bins
    return np.searchsorted(inner_edges, prob, side="left")


def _bin_sums(
    probability: npt.ArrayLike, outcome: npt.ArrayLike, n_bins: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64], int]:
    n_bins = check_positive_int(n_bins, "n_bins")
    prob, hit = _paired(probability, outcome)
    index = _bin_index(prob, n_bins)
    counts = np.bincount(index, minlength=n_bins).astype(np.int64)
    prob_sums = np.bincount(index, weights=prob, minlength=n_bins).astype(np.float64)
    hit_sums = np.bincount(index, weights=hit, minlength=n_bins).astype(np.float64)
    return counts, prob_sums, hit_sums, len(prob)


def expected_calibration_error(probability: npt.ArrayLike, outcome: npt.ArrayLike, n_bins: int = 10) -> float:
    """Binary expected calibration error of P(positive).

    ``ECE = sum_b (n_b / n) * |mean(outcome in b) - mean(probability in b)|``
    ``    = (1/n) * sum_b |sum(outcome in b) - sum(probability in b)|``
    over ``n_bins`` equal-width right-closed bins on [0, 1] (see the module
    docstring for edges). Empty bins contribute 0. *outcome* is 0/1 or bool.
    """
    _, prob_sums, hit_sums, n = _bin_sums(probability, outcome, n_bins)
    return float(np.sum(np.abs(hit_sums - prob_sums)) / n)


def reliability_bins(
    probability: npt.ArrayLike, outcome: npt.ArrayLike, n_bins: int = 10
) -> list[dict[str, Any]]:
    """The reliability diagram: one dict per bin, empty bins included.

    Each dict is ``{"lower": b/n_bins, "upper": (b+1)/n_bins, "count": n_b,
    "mean_confidence": mean(probability in b), "observed_rate": mean(outcome
    in b)}``, the two means being ``None`` for an empty bin. Bins are the
    right-closed bins of :func:`expected_calibration_error`.
    """
    counts, prob_sums, hit_sums, _ = _bin_sums(probability, outcome, n_bins)
    bins: list[dict[str, Any]] = []
    for b, count in enumerate(counts.tolist()):
        bins.append(
            {
                "lower": b / len(counts),
                "upper": (b + 1) / len(counts),
                "count": int(count),
                "mean_confidence": float(prob_sums[b] / count) if count else None,
                "observed_rate": float(hit_sums[b] / count) if count else None,
            }
        )
    return bins


def brier_score(probability: npt.ArrayLike, outcome: npt.ArrayLike) -> float:
    """Brier score: ``(1/n) * sum_i (probability_i - outcome_i)^2``; 0 is perfect, lower is better."""
    prob, hit = _paired(probability, outcome)
    return float(np.mean((prob - hit) ** 2))
