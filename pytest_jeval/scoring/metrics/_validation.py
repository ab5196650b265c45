"""Input checks shared by the metric functions.

Every public metric funnels its arguments through these helpers so that bad
input fails early with a ValueError that names the argument, instead of
producing a NaN that spreads through a summary.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt


def as_labels(values: Iterable[Any], name: str) -> list[Any]:
    """Return *values* as a list of labels (strings, bools, numbers, ...)."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of labels, not a single string")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        items: list[Any] = values.tolist()
    else:
        try:
            items = list(values)
        except TypeError:
            raise ValueError(f"{name} must be a sequence, got {type(values).__name__}") from None
    for item in items:
        if isinstance(item, float) and math.isnan(item):
            raise ValueError(f"{name} contains NaN, which equals no label")
    return items


def check_lengths(**named: Any) -> int:
    """Check that the sized arguments are non-empty and equally long; return the length."""
    lengths = {name: len(value) for name, value in named.items()}
    for name, length in lengths.items():
        if length == 0:
            raise ValueError(f"{name} is empty: a metric needs at least one item")
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise ValueError(f"length mismatch: {detail}")
    return next(iter(lengths.values()))


def as_float_array(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    """Return *values* as a finite one-dimensional float array."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of numbers, not a single string")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must contain numbers only") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains a missing (None/NaN) or infinite value")
    return array


def as_probabilities(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    """Return *values* as a float array, checking that every value lies in [0, 1]."""
    array = as_float_array(values, name)
    if array.size and (array.min() < 0.0 or array.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1]; got values in [{array.min()}, {array.max()}]")
    return array


def as_binary(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    """Return *values* (bools or 0/1) as a float array of zeros and ones."""
    array = as_float_array(values, name)
    if not np.all((array == 0.0) | (array == 1.0)):
        raise ValueError(f"{name} must contain only 0/1 or False/True")
    return array


def check_confidence(confidence: float) -> float:
    """Check a confidence level in the open interval (0, 1)."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def check_positive_int(value: int, name: str) -> int:
    """Check that *value* is an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def union_of_labels(*sequences: list[Any]) -> list[Any]:
    """Labels seen in any of *sequences*, in order of first appearance."""
    return list(dict.fromkeys(item for sequence in sequences for item in sequence))


def resolve_labels(labels: Iterable[Any] | None, *sequences: list[Any]) -> list[Any]:
    """The label scale: *labels* checked against the data, or the sorted union seen.

    Given *labels* must be non-empty, free of duplicates and cover every value
    in *sequences*; a value outside the scale is an error, not silently dropped.
    """
    if labels is None:
        seen = union_of_labels(*sequences)
        try:
            return sorted(seen)
        except TypeError:
            raise ValueError(
                f"labels of mixed types cannot be sorted ({seen[:5]!r}...); pass labels= to give the order"
            ) from None
    scale = as_labels(labels, "labels")
    if not scale:
        raise ValueError("labels is empty")
    if len(set(scale)) != len(scale):
        raise ValueError(f"labels contains duplicates: {scale!r}")
    known = set(scale)
    unknown = [item for item in union_of_labels(*sequences) if item not in known]
    if unknown:
        raise ValueError(f"values {unknown[:5]!r} are not among labels {scale!r}")
    return scale
