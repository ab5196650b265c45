"""Paired significance test between two models on the same items: McNemar."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from pytest_jeval.scoring.metrics._validation import as_binary, check_lengths

#: Up to this many discordant pairs (b + c) the exact binomial test is used.
EXACT_MAX_DISCORDANT = 25


@dataclasses.dataclass(frozen=True)
class McNemarResult:
    """Outcome of :func:`mcnemar`: the discordant counts, the statistic and its p-value."""

    b: int
    """Items model A got right and model B got wrong."""
    c: int
    """Items model A got wrong and model B got right."""
    statistic: float
    """``min(b, c)`` for the exact test; the corrected chi-square otherwise."""
    p_value: float
    """Two-sided p-value for H0: both kinds of disagreement are equally likely."""
    method: str
    """``"exact"`` (binomial) or ``"chi2"`` (chi-square with continuity correction)."""


def mcnemar(correct_a: npt.ArrayLike, correct_b: npt.ArrayLike) -> McNemarResult:
    """McNemar's test for two models scored on the same items.

    Only the discordant items count: ``b = #(A right, B wrong)`` and
    ``c = #(A wrong, B right)``. Under H0, ``b ~ Binomial(b + c, 1/2)``.

    * ``b + c <= 25``: exact two-sided binomial test
      (``scipy.stats.binomtest(b, b + c, 0.5)``); ``statistic = min(b, c)``
      (statsmodels' convention); ``method = "exact"``.
    * ``b + c > 25``: ``statistic = (|b - c| - 1)^2 / (b + c)`` (continuity
      corrected, as R's ``mcnemar.test``), ``p = P(chi2_1 >= statistic)``;
      ``method = "chi2"``.
    * ``b + c == 0``: no evidence either way: ``statistic = 0.0``,
      ``p_value = 1.0``, ``method = "exact"``.

    Inputs are per-item correctness as bools or 0/1.
    """
    right_a, right_b = as_binary(correct_a, "correct_a"), as_binary(correct_b, "correct_b")
    check_lengths(correct_a=right_a, correct_b=right_b)
    a_only = int(np.sum((right_a == 1.0) & (right_b == 0.0)))
    b_only = int(np.sum((right_a == 0.0) & (right_b == 1.0)))
    discordant = a_only + b_only
    if discordant == 0:
        return McNemarResult(b=0, c=0, statistic=0.0, p_value=1.0, method="exact")
    from scipy import stats  # imported lazily: scipy.stats is slow to import

    if discordant <= EXACT_MAX_DISCORDANT:
        p_value = float(stats.binomtest(a_only, discordant, 0.5).pvalue)
        return McNemarResult(a_only, b_only, float(min(a_only, b_only)), min(1.0, p_value), "exact")
    statistic = (abs(a_only - b_only) - 1) ** 2 / discordant
    p_value = float(stats.chi2.sf(statistic, df=1))
    return McNemarResult(a_only, b_only, float(statistic), p_value, "chi2")
