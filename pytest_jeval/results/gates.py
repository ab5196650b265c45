"""Gates: thresholds in the suite that decide the exit status when they are set."""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval.suite.plan import EvalPlan


@dataclasses.dataclass(frozen=True)
class GateResult:
    """One gate checked against one (benchmark, model) summary."""

    gate: str
    """``min_accuracy`` or ``max_error_rate``."""
    benchmark: str
    model: str
    threshold: float
    measured: float | None
    passed: bool

    def describe(self) -> str:
        """One line: verdict, gate, threshold and the measured value."""
        op = ">=" if self.gate == "min_accuracy" else "<="
        value = "n/a" if self.measured is None else f"{self.measured:.4f}"
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} {self.benchmark} x {self.model}: {self.gate} {op} {self.threshold:g} (measured {value})"


def has_gates(plan: EvalPlan) -> bool:
    """True when the suite sets any gate."""
    return plan.suite.run.max_error_rate is not None or any(
        b.entry.min_accuracy is not None for b in plan.benchmarks.values()
    )


def evaluate_gates(plan: EvalPlan, summaries: dict[tuple[str, str], dict[str, Any]]) -> list[GateResult]:
    """Check every gate on every (benchmark, model) that has results."""
    results = []
    max_error_rate = plan.suite.run.max_error_rate
    for (bench, model), summary in summaries.items():
        threshold = plan.benchmarks[bench].entry.min_accuracy
        if threshold is not None:
            acc = summary.get("accuracy")
            results.append(
                GateResult("min_accuracy", bench, model, threshold, acc, acc is not None and acc >= threshold)
            )
        if max_error_rate is not None:
            rate = summary.get("error_rate")
            results.append(
                GateResult(
                    "max_error_rate", bench, model, max_error_rate, rate, rate is not None and rate <= max_error_rate
                )
            )
    return results
