"""pytest_jeval.scoring.metrics: Wilson and bootstrap intervals, McNemar's test, metric_stats."""

from __future__ import annotations

import dataclasses
import statistics

import numpy as np
import pytest
from scipy import stats

from pytest_jeval.scoring.metrics import (
    McNemarResult,
    accuracy,
    bootstrap_interval,
    mcnemar,
    metric_stats,
    wilson_interval,
)

# -- Wilson ------------------------------------------------------------------------


def test_wilson_published_example() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion:
    # comparison of seven methods", Statist. Med. 17:857-872, Table I:
    # 81/263, 95% Wilson score interval (no continuity correction) 0.2553 to 0.3662.
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 21, 263])
@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_wilson_matches_scipy(n: int, confidence: float) -> None:
    # Every count for small n; a spread of counts (ends included) for n = 263.
    counts = range(n + 1) if n <= 40 else sorted({0, 1, 2, 40, 81, n // 2, 200, n - 1, n})
    for successes in counts:
        ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
        assert wilson_interval(successes, n, confidence) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_bounds() -> None:
    for n in range(1, 300):
        assert wilson_interval(0, n)[0] == 0.0, n
        assert wilson_interval(n, n)[1] == 1.0, n
        low, high = wilson_interval(n // 3, n)
        assert 0.0 <= low <= n // 3 / n <= high <= 1.0, n
    assert 0.0 < wilson_interval(0, 8)[1] < 1.0  # never a zero-width interval
    assert wilson_interval(5, 10, 0.99)[0] < wilson_interval(5, 10, 0.9)[0]


@pytest.mark.parametrize(
    "args",
    [(0, 0), (1, 0), (-1, 5), (6, 5), (1.5, 5), (1, 5.0), (True, 5), (1, 5, 1.0), (1, 5, 0.0), (1, 5, 95)],
)
def test_wilson_rejects_bad_input(args) -> None:
    with pytest.raises(ValueError):
        wilson_interval(*args)


# -- bootstrap ---------------------------------------------------------------------


def test_bootstrap_reproduces_the_documented_procedure() -> None:
    rng = np.random.default_rng(123)
    x = rng.normal(size=40)
    interval = bootstrap_interval(np.mean, x, n_resamples=500, confidence=0.9, seed=7)
    draws = np.random.default_rng(7).integers(0, 40, size=(500, 40))
    means = [np.mean(x[index]) for index in draws]
    assert interval == pytest.approx(tuple(np.percentile(means, [5.0, 95.0])), abs=1e-12)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    x = np.random.default_rng(1).normal(size=30)
    first = bootstrap_interval(np.mean, x, n_resamples=300, seed=3)
    assert bootstrap_interval(np.mean, x, n_resamples=300, seed=3) == first
    assert bootstrap_interval(np.mean, list(x), n_resamples=300, seed=3) == first
    assert bootstrap_interval(np.mean, x, n_resamples=300, seed=4) != first


def test_bootstrap_keeps_arrays_paired() -> None:
    # predicted == gold item by item: every paired resample has accuracy 1.
    labels = ["A", "B", "C", "A", "D"] * 6
    assert bootstrap_interval(accuracy, labels, list(labels), n_resamples=200) == (1.0, 1.0)


def test_bootstrap_interval_is_sensible() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 2, size=300)
    pred = np.where(rng.random(300) < 0.8, gold, 1 - gold)
    point = accuracy(pred, gold)
    low, high = bootstrap_interval(accuracy, pred, gold, n_resamples=600)
    assert low < point < high
    assert high - low == pytest.approx(2 * 1.96 * np.sqrt(point * (1 - point) / 300), rel=0.2)
    narrow = bootstrap_interval(accuracy, pred, gold, n_resamples=600, confidence=0.5)
    assert low < narrow[0] < narrow[1] < high


def test_bootstrap_keeps_mixed_labels_apart() -> None:
    seen = []

    def record(values) -> float:
        seen.extend(values.tolist())
        return 0.0

    bootstrap_interval(record, [1, "1"], n_resamples=20)
    assert 1 in seen and "1" in seen and all(v in (1, "1") for v in seen)
    assert any(type(v) is int for v in seen)


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one array"):
        bootstrap_interval(np.mean)
    with pytest.raises(ValueError, match="length mismatch"):
        bootstrap_interval(accuracy, [1, 2], [1])
    with pytest.raises(ValueError, match="empty"):
        bootstrap_interval(np.mean, [])
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_interval(np.mean, [1.0], n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval(np.mean, [1.0], confidence=1.5)
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_interval(lambda x: float("nan"), [1.0, 2.0])


# -- McNemar -----------------------------------------------------------------------


def paired(b: int, c: int, both_right: int = 0, both_wrong: int = 0) -> tuple[list[bool], list[bool]]:
    correct_a = [True] * b + [False] * c + [True] * both_right + [False] * both_wrong
    correct_b = [False] * b + [True] * c + [True] * both_right + [False] * both_wrong
    return correct_a, correct_b


def test_mcnemar_published_example() -> None:
    # Agresti (1990), Categorical Data Analysis, p. 350: presidential approval of
    # 1600 voters in two surveys (794 approve/approve, 150 approve/disapprove,
    # 86 disapprove/approve, 570 disapprove/disapprove). R's
    # `mcnemar.test(Performance)` (continuity corrected, the example of its help
    # page) prints: McNemar's chi-squared = 16.818, df = 1, p-value = 4.115e-05.
    first, second = paired(b=150, c=86, both_right=794, both_wrong=570)
    result = mcnemar(first, second)
    assert (result.b, result.c, result.method) == (150, 86, "chi2")
    assert round(result.statistic, 3) == 16.818
    assert result.p_value == pytest.approx(4.115e-05, abs=5e-09)


def test_mcnemar_exact_hand_worked() -> None:
    # b = 10, c = 2: two-sided binomial p = 2 * P(X <= 2 | 12, 1/2) = 2 * 79 / 4096.
    result = mcnemar(*paired(b=10, c=2, both_right=30, both_wrong=5))
    assert result == McNemarResult(
        b=10, c=2, statistic=2.0, p_value=pytest.approx(158 / 4096), method="exact"
    )


def test_mcnemar_orientation() -> None:
    # b counts A right & B wrong; swapping the models swaps b and c, not p.
    forward = mcnemar(*paired(b=7, c=1))
    backward = mcnemar(*reversed(paired(b=7, c=1)))
    assert (forward.b, forward.c) == (7, 1) and (backward.b, backward.c) == (1, 7)
    assert forward.p_value == pytest.approx(backward.p_value)


@pytest.mark.parametrize("b, c", [(0, 1), (3, 9), (12, 13), (25, 0)])
def test_mcnemar_exact_up_to_25_discordant(b: int, c: int) -> None:
    result = mcnemar(*paired(b, c, both_right=4))
    assert result.method == "exact"
    assert result.statistic == min(b, c)
    assert result.p_value == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, abs=1e-12)


@pytest.mark.parametrize("b, c", [(13, 13), (20, 6), (0, 26), (300, 250)])
def test_mcnemar_chi_square_above_25_discordant(b: int, c: int) -> None:
    result = mcnemar(*paired(b, c, both_wrong=3))
    statistic = (abs(b - c) - 1) ** 2 / (b + c)
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(statistic, abs=1e-12)
    assert result.p_value == pytest.approx(stats.chi2.sf(statistic, 1), abs=1e-12)


def test_mcnemar_without_discordant_pairs() -> None:
    result = mcnemar([True, False, True], [1, 0, 1])
    assert result == McNemarResult(b=0, c=0, statistic=0.0, p_value=1.0, method="exact")


def test_mcnemar_result_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        mcnemar([True], [False]).p_value = 0.0  # type: ignore[misc]


def test_mcnemar_rejects_non_binary() -> None:
    with pytest.raises(ValueError, match="0/1"):
        mcnemar([1, 2], [0, 1])
    with pytest.raises(ValueError, match="missing"):
        mcnemar([True, None], [True, False])


# -- metric_stats ------------------------------------------------------------------


def test_metric_stats_matches_statistics_module() -> None:
    rng = np.random.default_rng(5)
    for size in (1, 2, 7, 50):
        values = rng.normal(size=size).tolist()
        assert metric_stats([*values, None, None]) == pytest.approx(
            {
                "mean": statistics.fmean(values),
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "std": statistics.pstdev(values),
            },
            abs=1e-12,
        )


def test_metric_stats_hand_worked() -> None:
    assert metric_stats([2, None, 4, 4, 4, 5, 5, 7, 9]) == {
        "mean": 5.0,
        "median": 4.5,
        "min": 2.0,
        "max": 9.0,
        "std": 2.0,
    }


def test_metric_stats_without_values() -> None:
    assert metric_stats([]) is None
    assert metric_stats([None, None]) is None
    assert metric_stats(iter([])) is None


def test_metric_stats_rejects_nan_and_text() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        metric_stats([1.0, float("nan")])
    with pytest.raises(ValueError, match="numbers"):
        metric_stats([1.0, "2"])
