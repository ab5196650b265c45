"""Repeats as measurement: pass@k and pass^k, the unbiased estimators over n trials per task.

* **pass@k** (Chen et al. 2021, HumanEval): the chance that at least one of k trials drawn from a task's
  n trials succeeds, ``1 - C(n - c, k) / C(n, k)``, averaged over tasks ("best of k").
* **pass^k** (Yao et al. 2024, tau-bench): the chance that all k trials drawn succeed, ``C(c, k) / C(n, k)``,
  averaged over tasks (reliability). Best-of-k is pass@k, not pass^k.

``c`` is a task's successful trials out of its ``n``; every task needs ``n >= k``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _counts(trials: Sequence[tuple[int, int]], k: int) -> list[tuple[int, int]]:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    counts = [(int(n), int(c)) for n, c in trials]
    if not counts:
        raise ValueError("trials is empty: no task to average over")
    for i, (n, c) in enumerate(counts):
        if not 0 <= c <= n:
            raise ValueError(f"task {i}: {c} successes out of {n} trials")
        if n < k:
            raise ValueError(f"task {i} has {n} trials, fewer than k = {k}")
    return counts


def pass_at_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """Mean over tasks of ``1 - C(n - c, k) / C(n, k)``; ``trials`` holds each task's ``(n, c)``."""
    return sum(1.0 - math.comb(n - c, k) / math.comb(n, k) for n, c in _counts(trials, k)) / len(trials)


def pass_hat_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """Mean over tasks of ``C(c, k) / C(n, k)``; ``trials`` holds each task's ``(n, c)``."""
    return sum(math.comb(c, k) / math.comb(n, k) for n, c in _counts(trials, k)) / len(trials)
