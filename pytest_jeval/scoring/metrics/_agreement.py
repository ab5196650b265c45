"""Agreement between raters (Cohen's kappa) and between repeated runs."""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._classification import _count_matrix
from pytest_jeval.scoring.metrics._validation import as_labels, check_lengths, resolve_labels

Weights = Literal["linear", "quadratic"]


def _disagreement_weights(scale: list[Any], weights: Weights | None) -> npt.NDArray[np.float64]:
    """``W[i, j]``: the cost of rating ``scale[i]`` against ``scale[j]``, in [0, 1]."""
    k = len(scale)
    if weights is None:
        return 1.0 - np.eye(k)
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if not all(isinstance(label, numbers.Real) for label in scale):
        raise ValueError(
            f"weights={weights!r} needs numeric labels (distances are taken between "
            f"label values); got {scale!r}"
        )
    values = np.asarray(scale, dtype=np.float64)
    span = float(values.max() - values.min())
    if span == 0.0:
        return np.zeros((k, k))
    distance = np.abs(values[:, None] - values[None, :]) / span
    return distance if weights == "linear" else distance**2


def cohen_kappa(
    a: Iterable[Any],
    b: Iterable[Any],
    labels: Iterable[Any] | None = None,
    weights: Weights | None = None,
) -> float:
    """Cohen's kappa between two raters *a* and *b* who rated the same items.

    With ``O`` the observed joint distribution of (a, b) over the label scale
    and ``E = outer(row marginals, column marginals)`` the one expected by
    chance: ``kappa = 1 - sum(W * O) / sum(W * E)``. Unweighted
    (``W = 1 - I``) this is ``(p_o - p_e) / (1 - p_e)``.

    *weights* ``"linear"`` uses ``W[i, j] = |x_i - x_j| / (max x - min x)`` and
    ``"quadratic"`` uses ``W[i, j] = (x_i - x_j)^2 / (max x - min x)^2``, where
    ``x`` are the label VALUES of the scale *labels* (default: the sorted union
    of the observed labels), not their positions: on a 0-4 scale, 0 vs 4 costs
    4 (linear) or 16 (quadratic) before dividing by the scale's maximal
    distance (4, or 16). The division only puts W in [0, 1]; kappa is a ratio,
    so it does not change the result. Weights need numeric labels.

    Degenerate case: when ``sum(W * E) == 0`` (``p_e == 1``, e.g. both raters
    always gave the same single label) the ratio is 0/0; the result is then 1.0
    if the raters agree on every item and 0.0 otherwise.
    """
    first, second = as_labels(a, "a"), as_labels(b, "b")
    check_lengths(a=first, b=second)
    scale = resolve_labels(labels, first, second)
    cost = _disagreement_weights(scale, weights)
    # Rows are rater a, columns rater b.
    observed = _count_matrix(second, first, scale) / len(first)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    observed_disagreement = float(np.sum(cost * observed))
    expected_disagreement = float(np.sum(cost * expected))
    if expected_disagreement == 0.0:
        return 1.0 if all(x == y for x, y in zip(first, second, strict=True)) else 0.0
    return 1.0 - observed_disagreement / expected_disagreement


def consistency(runs: Iterable[Iterable[Any]]) -> float:
    """Mean pairwise agreement between repeated runs over the same items.

    *runs* is 2-D: one row per run, one column per item. With ``R`` runs and
    ``n`` items, ``consistency = sum_{r<s} sum_i [runs[r][i] == runs[s][i]] /
    (C(R, 2) * n)``: the share of agreeing (run pair, item) combinations.
    1.0 means every run gave the same answers. Values are compared with ``==``
    (``None`` equals ``None``). Needs at least two runs.
    """
    if isinstance(runs, (str, bytes)):
        raise ValueError("runs must be 2-D: one row per run, one column per item")
    if isinstance(runs, np.ndarray) and runs.ndim != 2:
        raise ValueError(f"runs must be 2-D (runs x items), got shape {runs.shape}")
    rows: list[list[Any]] = []
    for i, row in enumerate(runs):
        if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
            raise ValueError("runs must be 2-D: one row per run, one column per item")
        rows.append(as_labels(row, f"runs[{i}]"))
    if len(rows) < 2:
        raise ValueError(f"consistency needs at least two runs, got {len(rows)}")
    n = check_lengths(**{f"runs[{i}]": row for i, row in enumerate(rows)})
    pairs = list(itertools.combinations(rows, 2))
    agreeing = sum(sum(bool(x == y) for x, y in zip(r, s, strict=True)) for r, s in pairs)
    return agreeing / (len(pairs) * n)
