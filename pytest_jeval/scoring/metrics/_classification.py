"""Label metrics: accuracy, confusion matrix, precision / recall / F1."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._validation import (
    as_float_array,
    as_labels,
    check_lengths,
    resolve_labels,
    union_of_labels,
)

Average = Literal["binary", "macro", "micro"]

#: Relative slack on the tolerance test, so that |3.1 - 3.0| <= 0.1 holds
#: despite 3.1 - 3.0 == 0.10000000000000009 in binary floating point.
_TOLERANCE_RTOL = 1e-9

#: Labels taken as "positive" when ``positive=`` is not given, in this order.
#: ``True`` also matches ``1`` and ``1.0`` (they compare and hash equal).
_DEFAULT_POSITIVES: tuple[Any, ...] = (True, "yes")


def accuracy(predicted: Iterable[Any], gold: Iterable[Any], tolerance: float = 0) -> float:
    """Share of items on which the prediction matches the gold answer.

    ``accuracy = (1/n) * sum_i [match_i]`` where, for ``tolerance == 0``,
    ``match_i = (predicted_i == gold_i)`` -- exact agreement on any labels
    (strings, bools, numbers) -- and for ``tolerance > 0`` both sides must be
    numbers and ``match_i = |predicted_i - gold_i| <= tolerance`` (with a
    relative slack of 1e-9 on the tolerance to absorb float rounding).
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise ValueError(f"tolerance must be a number >= 0, got {tolerance!r}")
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if tolerance == 0:
        pred, ref = as_labels(predicted, "predicted"), as_labels(gold, "gold")
        n = check_lengths(predicted=pred, gold=ref)
        return sum(bool(p == g) for p, g in zip(pred, ref, strict=True)) / n
    pred_num, ref_num = as_float_array(predicted, "predicted"), as_float_array(gold, "gold")
    check_lengths(predicted=pred_num, gold=ref_num)
    distance = np.abs(pred_num - ref_num)
    within = distance <= tolerance * (1.0 + _TOLERANCE_RTOL)
    return float(np.mean(within))


def confusion_matrix(
    predicted: Iterable[Any], gold: Iterable[Any], labels: Iterable[Any] | None = None
) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """Count matrix ``M[i, j]`` = number of items with gold ``labels[i]`` predicted as ``labels[j]``.

    Rows are gold, columns are predicted (scikit-learn's convention). *labels*
    defaults to the sorted union of the labels seen in gold and predicted; when
    given, every observed label must be in it (unknown labels raise). Returns
    ``(matrix, labels)``.
    """
    pred, ref = as_labels(predicted, "predicted"), as_labels(gold, "gold")
    check_lengths(predicted=pred, gold=ref)
    scale = resolve_labels(labels, ref, pred)
    return _count_matrix(pred, ref, scale), scale


def _count_matrix(pred: list[Any], ref: list[Any], scale: list[Any]) -> npt.NDArray[np.int64]:
    index = {label: i for i, label in enumerate(scale)}
    k = len(scale)
    rows = np.fromiter((index[g] for g in ref), dtype=np.int64, count=len(ref))
    cols = np.fromiter((index[p] for p in pred), dtype=np.int64, count=len(pred))
    return np.bincount(rows * k + cols, minlength=k * k).reshape(k, k).astype(np.int64)


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, with 0/0 counted as 0 (sklearn's zero_division=0)."""
    return float(numerator) / float(denominator) if denominator else 0.0


def precision_recall_f1(
    predicted: Iterable[Any],
    gold: Iterable[Any],
    positive: Any = None,
    average: Average = "binary",
) -> tuple[float, float, float]:
    """Precision, recall and F1 of *predicted* against *gold*.

    Per class ``k``: ``P_k = TP_k / (TP_k + FP_k)``, ``R_k = TP_k / (TP_k + FN_k)``,
    ``F1_k = 2 TP_k / (2 TP_k + FP_k + FN_k)`` (= harmonic mean of P_k and R_k);
    a 0/0 ratio counts as 0.

    * ``average="binary"``: the scores of the class *positive* (one-vs-rest).
      *positive* defaults to ``True`` (which also matches ``1``) or ``"yes"``
      when present among the labels; otherwise pass ``positive=``.
    * ``average="macro"``: unweighted mean of ``P_k``, ``R_k``, ``F1_k`` over the
      classes that occur in gold or predicted.
    * ``average="micro"``: the formulas applied to the summed TP, FP, FN; for
      single-label data all three equal the accuracy.
    """
    pred, ref = as_labels(predicted, "predicted"), as_labels(gold, "gold")
    check_lengths(predicted=pred, gold=ref)
    if average not in ("binary", "macro", "micro"):
        raise ValueError(f"average must be 'binary', 'macro' or 'micro', got {average!r}")
    if average == "binary":
        return _binary_scores(pred, ref, positive)
    if positive is not None:
        raise ValueError(f"positive= is only used with average='binary', not {average!r}")
    scale = union_of_labels(ref, pred)
    matrix = _count_matrix(pred, ref, scale)
    tp = np.diag(matrix)
    fp = matrix.sum(axis=0) - tp
    fn = matrix.sum(axis=1) - tp
    if average == "micro":
        total_tp, total_fp, total_fn = int(tp.sum()), int(fp.sum()), int(fn.sum())
        return (
            _ratio(total_tp, total_tp + total_fp),
            _ratio(total_tp, total_tp + total_fn),
            _ratio(2 * total_tp, 2 * total_tp + total_fp + total_fn),
        )
    per_class = [
        (_ratio(t, t + f_p), _ratio(t, t + f_n), _ratio(2 * t, 2 * t + f_p + f_n))
        for t, f_p, f_n in zip(tp.tolist(), fp.tolist(), fn.tolist(), strict=True)
    ]
    precision, recall, f1 = (float(np.mean(column)) for column in zip(*per_class, strict=True))
    return precision, recall, f1


def _binary_scores(pred: list[Any], ref: list[Any], positive: Any) -> tuple[float, float, float]:
    if positive is None:
        seen = set(union_of_labels(ref, pred))
        candidates = [label for label in _DEFAULT_POSITIVES if label in seen]
        if not candidates:
            raise ValueError(
                f"cannot tell the positive label among {sorted(map(repr, seen))}; "
                "pass positive= (e.g. positive='B')"
            )
        positive = candidates[0]
    tp = sum(1 for p, g in zip(pred, ref, strict=True) if p == positive and g == positive)
    fp = sum(1 for p, g in zip(pred, ref, strict=True) if p == positive and g != positive)
    fn = sum(1 for p, g in zip(pred, ref, strict=True) if p != positive and g == positive)
    return _ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn)
