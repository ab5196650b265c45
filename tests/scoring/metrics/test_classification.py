"""pytest_jeval.scoring.metrics: accuracy, confusion matrix, precision/recall/F1, MAE.

Reference values come from scikit-learn 1.9.1 (a dev-only dependency) on
seeded random inputs, and from small hand-worked cases.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_jeval.scoring.metrics import (
    accuracy,
    confusion_matrix,
    mean_absolute_error,
    precision_recall_f1,
    signed_mean_error,
)

SEEDS = range(15)
TOL = 1e-9


@pytest.fixture(scope="module")
def skm():
    return pytest.importorskip("sklearn.metrics")


def random_labels(seed: int, alphabet: list, *, min_n: int = 1, max_n: int = 80) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_n, max_n + 1))
    # Bias towards agreement so that scores are spread over [0, 1].
    gold = rng.choice(len(alphabet), size=n)
    noise = rng.choice(len(alphabet), size=n)
    keep = rng.random(n) < rng.random()
    pred = np.where(keep, gold, noise)
    return [alphabet[i] for i in pred], [alphabet[i] for i in gold]


# -- accuracy -----------------------------------------------------------------


def test_accuracy_matches_sklearn(skm) -> None:
    for seed in SEEDS:
        alphabet = [["A", "B", "C", "D"], [True, False], [0, 1, 2, 3, 4], ["yes", "no"]][seed % 4]
        pred, gold = random_labels(seed, alphabet)
        assert accuracy(pred, gold) == pytest.approx(skm.accuracy_score(gold, pred), abs=TOL), f"seed={seed}"


def test_accuracy_exact_on_any_labels() -> None:
    assert accuracy(["A", "B", "C", "A"], ["A", "B", "D", "D"]) == 0.5
    assert accuracy([True, False, True], [True, True, True]) == pytest.approx(2 / 3)
    assert accuracy(np.array([1, 2, 3]), [1.0, 2.0, 4.0]) == pytest.approx(2 / 3)
    assert accuracy([None, "A"], ["A", "A"]) == 0.5  # an unscored answer counts as wrong


def test_accuracy_tolerance_on_a_scale() -> None:
    # Within one level on a 0-4 scale.
    assert accuracy([0, 2, 4, 1], [1, 4, 4, 3], tolerance=1) == 0.5
    assert accuracy([0, 2, 4, 1], [1, 4, 4, 3], tolerance=0) == 0.25
    assert accuracy([0, 2, 4, 1], [1, 4, 4, 3], tolerance=2) == 1.0


def test_accuracy_tolerance_absorbs_float_rounding() -> None:
    assert 3.1 - 3.0 > 0.1  # the float trap the slack is for
    assert accuracy([3.1, 2.8], [3.0, 3.0], tolerance=0.1) == 0.5


@pytest.mark.parametrize("tolerance", [-1, float("nan"), float("inf"), True, "1"])
def test_accuracy_rejects_bad_tolerance(tolerance) -> None:
    with pytest.raises(ValueError, match="tolerance"):
        accuracy([1], [1], tolerance=tolerance)


def test_accuracy_with_tolerance_needs_numbers() -> None:
    with pytest.raises(ValueError, match="numbers"):
        accuracy(["A"], ["B"], tolerance=1)


# -- confusion matrix ------------------------------------------------------------


def test_confusion_matrix_matches_sklearn(skm) -> None:
    for seed in SEEDS:
        alphabet = [["A", "B", "C", "D"], [0, 1, 2, 3, 4], [False, True]][seed % 3]
        pred, gold = random_labels(seed, alphabet)
        matrix, labels = confusion_matrix(pred, gold)
        assert labels == sorted(set(pred) | set(gold)), f"seed={seed}"
        np.testing.assert_array_equal(
            matrix, skm.confusion_matrix(gold, pred, labels=labels), err_msg=f"seed={seed}"
        )
        assert matrix.dtype.kind == "i"
        # An explicit label order is honoured (reversed here).
        matrix, labels = confusion_matrix(pred, gold, labels=alphabet[::-1])
        assert labels == alphabet[::-1]
        np.testing.assert_array_equal(
            matrix, skm.confusion_matrix(gold, pred, labels=alphabet[::-1]), err_msg=f"seed={seed}"
        )


def test_confusion_matrix_rows_are_gold_columns_predicted() -> None:
    matrix, labels = confusion_matrix(predicted=["b", "b", "a"], gold=["a", "b", "a"])
    assert labels == ["a", "b"]
    assert matrix.tolist() == [[1, 1], [0, 1]]


def test_confusion_matrix_single_class() -> None:
    matrix, labels = confusion_matrix(["x", "x"], ["x", "x"])
    assert labels == ["x"] and matrix.tolist() == [[2]]


def test_confusion_matrix_rejects_labels_outside_the_scale() -> None:
    with pytest.raises(ValueError, match="not among labels"):
        confusion_matrix([0, 5], [0, 1], labels=[0, 1, 2])
    with pytest.raises(ValueError, match="duplicates"):
        confusion_matrix([0], [0], labels=[0, 0])
    with pytest.raises(ValueError, match="labels is empty"):
        confusion_matrix([0], [0], labels=[])


def test_confusion_matrix_mixed_types_need_labels() -> None:
    with pytest.raises(ValueError, match="pass labels="):
        confusion_matrix(["A", 1], ["A", "A"])
    matrix, labels = confusion_matrix(["A", 1], ["A", "A"], labels=["A", 1])
    assert labels == ["A", 1]
    assert matrix.tolist() == [[1, 1], [0, 0]]


# -- precision / recall / F1 -------------------------------------------------------


def test_binary_scores_match_sklearn(skm) -> None:
    for seed in SEEDS:
        alphabet, positive = [([0, 1], 1), (["no", "yes"], "yes"), ([False, True], True)][seed % 3]
        pred, gold = random_labels(seed, alphabet)
        expected = skm.precision_recall_fscore_support(
            gold, pred, average="binary", pos_label=positive, zero_division=0
        )[:3]
        assert precision_recall_f1(pred, gold) == pytest.approx(
            expected, abs=TOL
        )  # default positive, f"seed={seed}"
        assert precision_recall_f1(pred, gold, positive=positive) == pytest.approx(expected, abs=TOL), (
            f"seed={seed}"
        )


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_averaged_scores_match_sklearn(skm, average: str) -> None:
    for seed in SEEDS:
        alphabet = [["A", "B", "C", "D"], [0, 1, 2, 3, 4, 5, 6], ["yes", "no"]][seed % 3]
        pred, gold = random_labels(seed, alphabet)
        expected = skm.precision_recall_fscore_support(gold, pred, average=average, zero_division=0)[:3]
        assert precision_recall_f1(pred, gold, average=average) == pytest.approx(expected, abs=TOL), (
            f"seed={seed}"
        )


def test_binary_is_one_vs_rest_on_multiclass(skm) -> None:
    for seed in SEEDS:
        pred, gold = random_labels(seed, ["A", "B", "C"])
        p, r, f, _ = skm.precision_recall_fscore_support(
            gold, pred, labels=["B"], average=None, zero_division=0
        )
        assert precision_recall_f1(pred, gold, positive="B") == pytest.approx((p[0], r[0], f[0]), abs=TOL), (
            f"seed={seed}"
        )


def test_micro_equals_accuracy_for_single_label_data() -> None:
    pred, gold = random_labels(7, ["A", "B", "C"])
    assert precision_recall_f1(pred, gold, average="micro") == pytest.approx((accuracy(pred, gold),) * 3)


def test_binary_hand_worked() -> None:
    # TP=2, FP=1, FN=3: P=2/3, R=2/5, F1 = 2*2 / (2*2 + 1 + 3) = 1/2.
    gold = [1, 1, 1, 1, 1, 0, 0]
    pred = [1, 1, 0, 0, 0, 1, 0]
    assert precision_recall_f1(pred, gold) == pytest.approx((2 / 3, 2 / 5, 1 / 2))


def test_undefined_ratios_count_as_zero() -> None:
    # Nothing predicted positive and no positive in gold: every ratio is 0/0.
    assert precision_recall_f1([0, 0], [0, 0], positive=1) == (0.0, 0.0, 0.0)
    # Macro over {A, B}: A is perfect for recall, B never predicted -> P_B = 0/0 = 0.
    precision, recall, f1 = precision_recall_f1(["A", "A"], ["A", "B"], average="macro")
    assert precision == pytest.approx((0.5 + 0.0) / 2)
    assert recall == pytest.approx((1.0 + 0.0) / 2)
    assert f1 == pytest.approx((2 / 3 + 0.0) / 2)


def test_binary_needs_a_positive_label_it_can_guess() -> None:
    with pytest.raises(ValueError, match="positive="):
        precision_recall_f1(["A", "B"], ["A", "A"])
    assert precision_recall_f1(["A", "B"], ["A", "A"], positive="A") == pytest.approx((1.0, 0.5, 2 / 3))


def test_average_and_positive_are_checked() -> None:
    with pytest.raises(ValueError, match="average"):
        precision_recall_f1([1], [1], average="weighted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only used with average='binary'"):
        precision_recall_f1([1], [1], positive=1, average="macro")


# -- numeric errors -----------------------------------------------------------------


def test_mean_absolute_error_matches_sklearn(skm) -> None:
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 100))
        pred, gold = rng.normal(size=n) * 3, rng.integers(0, 5, size=n)
        assert mean_absolute_error(pred, gold) == pytest.approx(
            skm.mean_absolute_error(gold, pred), abs=TOL
        ), f"seed={seed}"
        assert signed_mean_error(pred, gold) == pytest.approx(float(np.mean(pred - gold)), abs=TOL), (
            f"seed={seed}"
        )


def test_signed_mean_error_sign() -> None:
    assert signed_mean_error([3, 4, 4], [2, 4, 3]) == pytest.approx(2 / 3)  # runs high
    assert signed_mean_error([1, 1], [2, 4]) == pytest.approx(-2.0)  # runs low
    assert mean_absolute_error([3, 4, 1], [2, 4, 3]) == pytest.approx(1.0)


def test_numeric_errors_reject_missing_values() -> None:
    with pytest.raises(ValueError, match="missing"):
        mean_absolute_error([1.0, None], [1.0, 2.0])
    with pytest.raises(ValueError, match="missing"):
        signed_mean_error([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="numbers"):
        mean_absolute_error(["a"], [1.0])
