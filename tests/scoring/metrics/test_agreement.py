"""pytest_jeval.scoring.metrics: Cohen's kappa and run-to-run consistency."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_jeval.scoring.metrics import cohen_kappa, consistency

SEEDS = range(15)
SCALE = [0, 1, 2, 3, 4]


@pytest.fixture(scope="module")
def skm():
    return pytest.importorskip("sklearn.metrics")


def correlated_ratings(seed: int, values: list, *, min_n: int = 5, max_n: int = 80) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_n, max_n + 1))
    a = rng.choice(values, size=n)
    shift = rng.integers(-1, 2, size=n)
    b = np.where(rng.random(n) < 0.6, a, np.clip(a + shift, min(values), max(values)))
    b = np.where(rng.random(n) < 0.15, rng.choice(values, size=n), b)
    return a.tolist(), b.tolist()


def test_wikipedia_worked_example() -> None:
    # https://en.wikipedia.org/wiki/Cohen%27s_kappa#Simple_example: 50 grant
    # proposals, 20 yes/yes, 5 yes/no (A yes, B no), 10 no/yes, 15 no/no.
    # p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4.
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert cohen_kappa(b, a) == pytest.approx(0.4, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_matches_sklearn_on_a_contiguous_scale(skm, weights: str | None) -> None:
    for seed in SEEDS:
        a, b = correlated_ratings(seed, SCALE)
        expected = skm.cohen_kappa_score(a, b, labels=SCALE, weights=weights)
        assert not np.isnan(expected), f"seed={seed}"
        assert cohen_kappa(a, b, labels=SCALE, weights=weights) == pytest.approx(expected, abs=1e-9), (
            f"seed={seed}"
        )


def test_matches_sklearn_on_strings_unweighted(skm) -> None:
    for seed in SEEDS:
        a, b = correlated_ratings(seed, [0, 1, 2, 3])
        a, b = ["ABCD"[x] for x in a], ["ABCD"[x] for x in b]
        assert cohen_kappa(a, b) == pytest.approx(skm.cohen_kappa_score(a, b), abs=1e-9), f"seed={seed}"


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_observed_contiguous_labels_need_no_scale(skm, weights: str) -> None:
    # Every level 0-4 occurs, so label positions equal label values.
    a, b = correlated_ratings(3, SCALE, min_n=200, max_n=200)
    assert sorted(set(a) | set(b)) == SCALE
    expected = skm.cohen_kappa_score(a, b, weights=weights)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=1e-9)


def test_weights_use_label_values_not_positions(skm) -> None:
    # Only {0, 1, 4} of a 0-4 scale occur. Rows a, columns b:
    # O = 1/3 at (0,0), (1,4), (4,4); marginals a = (1/3, 1/3, 1/3), b = (1/3, 0, 2/3).
    # Linear, by value (/4): d_o = 1/3 * 3/4 = 1/4,
    #   d_e = 2/9 [0-4] + 1/36 [1-0] + 1/6 [1-4] + 1/9 [4-0] = 19/36 -> kappa = 1 - 9/19 = 10/19.
    # By position (0, 1, 2; sklearn without labels=): kappa = 1 - (1/6)/(1/2) = 2/3.
    a, b = [0, 1, 4], [0, 4, 4]
    ours = cohen_kappa(a, b, weights="linear")
    assert ours == pytest.approx(10 / 19, abs=1e-12)
    assert skm.cohen_kappa_score(a, b, weights="linear") == pytest.approx(2 / 3, abs=1e-12)
    # Passing the full scale changes nothing for us, and makes sklearn agree.
    assert cohen_kappa(a, b, labels=SCALE, weights="linear") == pytest.approx(ours, abs=1e-12)
    assert skm.cohen_kappa_score(a, b, labels=SCALE, weights="linear") == pytest.approx(ours, abs=1e-12)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_sparse_scale_matches_sklearn_given_the_full_scale(skm, weights: str) -> None:
    for seed in SEEDS:
        a, b = correlated_ratings(seed, [0, 1, 4])
        expected = skm.cohen_kappa_score(a, b, labels=SCALE, weights=weights)
        assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=1e-9), f"seed={seed}"


def test_weighted_kappa_is_invariant_to_shifting_and_scaling_values() -> None:
    a, b = correlated_ratings(11, SCALE)
    for weights in ("linear", "quadratic"):
        base = cohen_kappa(a, b, weights=weights)
        moved = cohen_kappa([10 + 2.5 * x for x in a], [10 + 2.5 * x for x in b], weights=weights)
        assert moved == pytest.approx(base, abs=1e-12)


def test_perfect_and_chance_agreement() -> None:
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    # Independent marginals: O == E exactly -> kappa 0.
    assert cohen_kappa([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0, abs=1e-12)
    # Systematic disagreement is negative.
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_degenerate_single_label(weights: str | None) -> None:
    # p_e == 1: both raters always said 3; sklearn returns NaN, we return 1.0.
    assert cohen_kappa([3, 3, 3], [3, 3, 3], weights=weights) == 1.0
    assert cohen_kappa([3, 3, 3], [3, 3, 3], labels=SCALE, weights=weights) == 1.0


def test_weights_need_numeric_labels() -> None:
    with pytest.raises(ValueError, match="numeric labels"):
        cohen_kappa(["a", "b"], ["b", "a"], weights="linear")
    with pytest.raises(ValueError, match="weights must be"):
        cohen_kappa([1, 2], [2, 1], weights="cubic")  # type: ignore[arg-type]


def test_ratings_outside_the_scale_are_rejected() -> None:
    with pytest.raises(ValueError, match="not among labels"):
        cohen_kappa([0, 7], [0, 1], labels=SCALE, weights="linear")


# -- consistency -------------------------------------------------------------------


def test_consistency_hand_worked() -> None:
    # 3 runs -> 3 pairs per item. Item 1: all agree (3/3); item 2: A,A,B (1/3);
    # item 3: A,B,C (0/3). Mean = (3 + 1 + 0) / (3 * 3) = 4/9.
    runs = [["A", "A", "A"], ["A", "A", "B"], ["A", "B", "C"]]
    assert consistency(runs) == pytest.approx(4 / 9)


def test_consistency_equals_the_pairwise_definition() -> None:
    for seed in range(10):
        rng = np.random.default_rng(seed)
        runs = rng.integers(0, 3, size=(int(rng.integers(2, 7)), int(rng.integers(1, 30))))
        r, n = runs.shape
        pairs = [(i, j) for i in range(r) for j in range(i + 1, r)]
        expected = np.mean([runs[i, k] == runs[j, k] for i, j in pairs for k in range(n)])
        assert consistency(runs) == pytest.approx(float(expected), abs=1e-12), f"seed={seed}"


def test_consistency_extremes_and_types() -> None:
    assert consistency([[True, False]] * 4) == 1.0
    assert consistency([["A", "B"], ["B", "A"]]) == 0.0
    assert consistency(np.array([[1, 2, 3], [1, 2, 4]])) == pytest.approx(2 / 3)
    assert consistency([[None, "A"], [None, "B"]]) == 0.5


def test_consistency_needs_two_runs_of_equal_length() -> None:
    with pytest.raises(ValueError, match="at least two runs"):
        consistency([["A", "B"]])
    with pytest.raises(ValueError, match="at least two runs"):
        consistency([])
    with pytest.raises(ValueError, match="length mismatch"):
        consistency([["A", "B"], ["A"]])
    with pytest.raises(ValueError, match="empty"):
        consistency([[], []])
    with pytest.raises(ValueError, match="2-D"):
        consistency(["A", "B"])
    with pytest.raises(ValueError, match="2-D"):
        consistency(np.array([1, 2, 3]))
