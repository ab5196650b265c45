"""pytest_jeval.scoring.metrics: expected calibration error, reliability bins, Brier score."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pytest_jeval.scoring.metrics import brier_score, expected_calibration_error, reliability_bins

SEEDS = range(15)
TOL = 1e-9
DECILE_EDGES = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


@pytest.fixture(scope="module")
def calibration_curve():
    return pytest.importorskip("sklearn.calibration").calibration_curve


def random_forecasts(seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    prob = rng.beta(0.7, 0.7, size=n)  # mass near 0 and 1, continuous: never on an edge
    outcome = (rng.random(n) < prob ** rng.uniform(0.5, 2.0)).astype(int)
    n_bins = int(rng.choice([1, 2, 3, 5, 7, 10, 15, 20]))
    return prob, outcome, n_bins


def reference_ece(prob, outcome, n_bins: int) -> float:
    """The definition, item by item: bin b is (b/n_bins, (b+1)/n_bins], 0 in bin 0."""
    total = 0.0
    for b in range(n_bins):
        lower, upper = b / n_bins, (b + 1) / n_bins
        members = [i for i, p in enumerate(prob) if lower < p <= upper or (b == 0 and p == 0.0)]
        if members:
            gap = np.mean([outcome[i] for i in members]) - np.mean([prob[i] for i in members])
            total += len(members) / len(prob) * abs(gap)
    return total


def test_reliability_bins_match_sklearn(calibration_curve) -> None:
    for seed in SEEDS:
        prob, outcome, n_bins = random_forecasts(seed)
        bins = reliability_bins(prob, outcome, n_bins=n_bins)
        assert len(bins) == n_bins, f"seed={seed}"
        assert sum(b["count"] for b in bins) == len(prob), f"seed={seed}"
        filled = [b for b in bins if b["count"]]
        prob_true, prob_pred = calibration_curve(outcome, prob, n_bins=n_bins, strategy="uniform")
        np.testing.assert_allclose(
            [b["observed_rate"] for b in filled], prob_true, rtol=0, atol=TOL, err_msg=f"seed={seed}"
        )
        np.testing.assert_allclose(
            [b["mean_confidence"] for b in filled], prob_pred, rtol=0, atol=TOL, err_msg=f"seed={seed}"
        )
        for b in bins:
            if b["count"] == 0:
                assert b["mean_confidence"] is None and b["observed_rate"] is None, f"seed={seed}"


def test_ece_matches_the_definition() -> None:
    for seed in SEEDS:
        prob, outcome, n_bins = random_forecasts(seed)
        expected = reference_ece(prob, outcome, n_bins)
        assert expected_calibration_error(prob, outcome, n_bins=n_bins) == pytest.approx(expected, abs=TOL), (
            f"seed={seed}"
        )


def test_brier_matches_sklearn() -> None:
    brier_score_loss = pytest.importorskip("sklearn.metrics").brier_score_loss
    for seed in SEEDS:
        prob, outcome, _ = random_forecasts(seed)
        expected = brier_score_loss(outcome, prob, labels=[0, 1])
        assert brier_score(prob, outcome) == pytest.approx(expected, abs=TOL), f"seed={seed}"


def test_ece_hand_worked() -> None:
    # 5 bins. Bin (0.6, 0.8]: 0.7, 0.7, 0.8 with outcomes 1, 0, 1 -> |2/3 - 0.7333|;
    # bin (0.8, 1.0]: 0.9 with outcome 1 -> |1 - 0.9|.
    # ECE = 3/4 * 0.0666... + 1/4 * 0.1 = 0.05 + 0.025 = 0.075.
    prob, outcome = [0.7, 0.7, 0.8, 0.9], [1, 0, 1, 1]
    assert expected_calibration_error(prob, outcome, n_bins=5) == pytest.approx(0.075, abs=1e-12)
    bins = reliability_bins(prob, outcome, n_bins=5)
    assert [b["count"] for b in bins] == [0, 0, 0, 3, 1]
    assert bins[3] == {
        "lower": 0.6,
        "upper": 0.8,
        "count": 3,
        "mean_confidence": pytest.approx(2.2 / 3),
        "observed_rate": pytest.approx(2 / 3),
    }


def test_edge_values_join_the_lower_bin() -> None:
    bins = reliability_bins(DECILE_EDGES, [0] * 11, n_bins=10)
    # 0.0 and 0.1 share bin 0 = [0, 0.1]; 0.2 is in bin 1 = (0.1, 0.2]; ...; 1.0 in bin 9.
    assert [b["count"] for b in bins] == [2, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    assert bins[0]["mean_confidence"] == pytest.approx(0.05)
    for b, edge in zip(bins[1:], DECILE_EDGES[2:], strict=True):
        assert b["mean_confidence"] == edge
    assert [(b["lower"], b["upper"]) for b in bins] == list(itertools.pairwise(DECILE_EDGES))


def test_edge_values_agree_with_sklearn_for_ten_bins(calibration_curve) -> None:
    outcome = [0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    filled = [b for b in reliability_bins(DECILE_EDGES, outcome) if b["count"]]
    prob_true, prob_pred = calibration_curve(outcome, DECILE_EDGES, n_bins=10)
    np.testing.assert_allclose([b["observed_rate"] for b in filled], prob_true, atol=TOL)
    np.testing.assert_allclose([b["mean_confidence"] for b in filled], prob_pred, atol=TOL)


def test_sklearn_can_differ_exactly_on_an_edge(calibration_curve) -> None:
    # sklearn's edges come from np.linspace, which can sit one ulp off b/n_bins:
    # with 6 bins its edge is 0.8333333333333333 < 5/6 == 0.8333333333333334, so
    # sklearn puts p = 5/6 in the top bin. By the right-closed convention it is
    # in bin 4, (4/6, 5/6], which is where we put it.
    edge = 5 / 6
    assert np.linspace(0, 1, 7)[5] < edge
    bins = reliability_bins([edge], [1], n_bins=6)
    assert [b["count"] for b in bins] == [0, 0, 0, 0, 1, 0]
    assert calibration_curve([1], [edge], n_bins=6)[1].tolist() == [edge]  # sklearn: only bin 5 filled...
    assert reliability_bins([edge + 1e-12], [1], n_bins=6)[5]["count"] == 1  # ...and off the edge we agree


def test_probabilities_exactly_zero_and_one() -> None:
    bins = reliability_bins([0.0, 0.0, 1.0, 1.0], [0, 0, 1, 1], n_bins=4)
    assert [b["count"] for b in bins] == [2, 0, 0, 2]
    assert expected_calibration_error([0.0, 1.0], [0, 1]) == 0.0
    assert expected_calibration_error([0.0, 1.0], [1, 0]) == 1.0
    assert brier_score([0.0, 1.0], [0, 1]) == 0.0
    assert brier_score([0.0, 1.0], [1, 0]) == 1.0


def test_single_bin_and_single_class() -> None:
    # One bin: ECE = |mean outcome - mean probability|.
    assert expected_calibration_error([0.2, 0.9], [1, 1], n_bins=1) == pytest.approx(0.45)
    assert expected_calibration_error([0.95, 0.85], [True, True], n_bins=10) == pytest.approx(0.1)


def test_empty_bins_contribute_nothing() -> None:
    bins = reliability_bins([0.55, 0.55], [1, 0], n_bins=100)
    assert sum(b["count"] == 0 for b in bins) == 99
    assert expected_calibration_error([0.55, 0.55], [1, 0], n_bins=100) == pytest.approx(0.05)


@pytest.mark.parametrize("func", [expected_calibration_error, reliability_bins, brier_score])
def test_probabilities_and_outcomes_are_checked(func) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        func([0.5, 1.2], [0, 1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        func([-0.1, 0.5], [0, 1])
    with pytest.raises(ValueError, match="missing"):
        func([float("nan"), 0.5], [0, 1])
    with pytest.raises(ValueError, match="0/1"):
        func([0.5, 0.5], [0, 2])


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True])
def test_n_bins_is_checked(n_bins) -> None:
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error([0.5], [1], n_bins=n_bins)
    with pytest.raises(ValueError, match="n_bins"):
        reliability_bins([0.5], [1], n_bins=n_bins)
