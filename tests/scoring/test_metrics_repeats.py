"""pass@k and pass^k: the unbiased estimators, against values computed by hand."""

from __future__ import annotations

import pytest

from pytest_jeval.metrics import pass_at_k, pass_hat_k


def test_pass_at_k_is_one_minus_the_chance_that_k_draws_all_fail() -> None:
    # 5 trials, 2 passed: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k([(5, 2)], 1) == pytest.approx(0.4)
    assert pass_at_k([(5, 2)], 2) == pytest.approx(0.7)
    assert pass_at_k([(5, 2)], 4) == pytest.approx(1.0)  # any 4 of 5 include a success
    assert pass_at_k([(5, 0), (5, 5)], 3) == pytest.approx(0.5)  # averaged over tasks


def test_pass_hat_k_is_the_chance_that_k_draws_all_pass() -> None:
    # 4 trials, 3 passed: pass^1 = 3/4, pass^2 = C(3,2)/C(4,2) = 1/2, pass^3 = 1/4, pass^4 = 0
    assert [pass_hat_k([(4, 3)], k) for k in (1, 2, 3, 4)] == pytest.approx([0.75, 0.5, 0.25, 0.0])
    assert pass_hat_k([(4, 2), (4, 4)], 2) == pytest.approx((1 / 6 + 1) / 2)


def test_pass_hat_k_never_exceeds_pass_at_k() -> None:
    trials = [(6, c) for c in range(7)]
    for k in range(1, 7):
        assert pass_hat_k(trials, k) <= pass_at_k(trials, k)
    assert pass_hat_k(trials, 1) == pytest.approx(pass_at_k(trials, 1))  # both are the mean success rate at k = 1


@pytest.mark.parametrize(("trials", "k", "message"), [
    ([], 1, "empty"),
    ([(3, 1)], 4, "fewer than k = 4"),
    ([(3, 4)], 1, "4 successes out of 3"),
    ([(3, 1)], 0, "positive integer"),
])
def test_bad_input_is_a_value_error(trials: list[tuple[int, int]], k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_at_k(trials, k)
    with pytest.raises(ValueError, match=message):
        pass_hat_k(trials, k)
