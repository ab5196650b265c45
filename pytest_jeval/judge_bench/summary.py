"""Judge-benchmark summary metrics, computed from the JSONL records alone.

How records enter each metric:

* **Errored** records (``error`` not null: the endpoint failed after retries) are
  left out of every metric below; they are counted in the core ``errors``.
* **accuracy** / **accuracy_ci**: correct / (records that did not error), with the
  Wilson 95% interval - the core summary's own rule, so unscored records (reply
  outside the allowed labels, an item the evaluator could not judge) and records
  of a crashed evaluator count as wrong.
* **Label metrics** - ``confusion_matrix``, ``precision``/``recall``/``f1``,
  ``cohen_kappa``, ``mae``, ``rmse``, ``signed_mean_error``, ``mae_expected_level`` - use the
  *judged* records: not errored, with a ``predicted`` value (so unscored ones are
  out; their count is ``total - errors - n_judged``).
* **Calibration** - ``ece``, ``reliability``, ``brier`` - use the judged records
  whose ``probability`` is not null; the outcome is ``is_correct``.
* **routing** coverages are shares of all non-errored records; a record without a
  probability is never routed.
* **consistency** uses the records whose ``repeat_predictions`` has no null (an
  unscored repeat takes the item out).
"""

from __future__ import annotations

from typing import Any

from pytest_jeval.scoring.metrics import (
    brier_score,
    cohen_kappa,
    confusion_matrix,
    consistency,
    expected_calibration_error,
    mean_absolute_error,
    precision_recall_f1,
    reliability_bins,
    root_mean_squared_error,
    signed_mean_error,
    wilson_interval,
)

#: Number of equal-width, right-closed probability bins for ECE and the reliability diagram.
ECE_BINS = 10
#: Routing: auto-accept at probability >= AUTO_ACCEPT; human review for REVIEW_LOW <= probability <= REVIEW_HIGH.
AUTO_ACCEPT = 0.9
REVIEW_LOW, REVIEW_HIGH = 0.4, 0.6


def _routed(base: list[dict[str, Any]], chosen: list[dict[str, Any]]) -> dict[str, Any]:
    covered = len(chosen)
    correct = sum(1 for r in chosen if r.get("is_correct") is True)
    return {
        "n": covered,
        "coverage": covered / len(base) if base else None,
        "accuracy": correct / covered if covered else None,
    }


def routing(base: list[dict[str, Any]]) -> dict[str, Any]:
    """Auto-accept (p >= 0.9) and human-review (0.4 <= p <= 0.6) bands with coverage and accuracy."""
    probs = [(r, r.get("probability")) for r in base]
    auto = [r for r, p in probs if p is not None and p >= AUTO_ACCEPT]
    review = [r for r, p in probs if p is not None and REVIEW_LOW <= p <= REVIEW_HIGH]
    return {
        "auto_accept": {"threshold": AUTO_ACCEPT, **_routed(base, auto)},
        "human_review": {"range": [REVIEW_LOW, REVIEW_HIGH], **_routed(base, review)},
    }


def _first_kind(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in records if r.get("case_kind") is not None), None)


def _consistency(base: list[dict[str, Any]]) -> tuple[float | None, int]:
    rows = [r["repeat_predictions"] for r in base
            if isinstance(r.get("repeat_predictions"), list) and len(r["repeat_predictions"]) >= 2
            and all(p is not None for p in r["repeat_predictions"])]
    if not rows:
        return None, 0
    width = min(len(row) for row in rows)
    runs = [[row[k] for row in rows] for k in range(width)]
    return consistency(runs), len(rows)


def judge_metrics(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge-benchmark summary block of one (benchmark, model) JSONL (see the module docstring)."""
    base = [r for r in records if r.get("error") is None]
    head = _first_kind(records)
    kind = head.get("case_kind") if head else None
    labels = list(head.get("labels") or []) if head else []
    n = len(base)
    correct = sum(1 for r in base if r.get("is_correct") is True)
    judged = [r for r in base
              if r.get("case_kind") is not None and r.get("predicted") is not None and r.get("gold") is not None]
    pred = [r["predicted"] for r in judged]
    gold = [r["gold"] for r in judged]
    out: dict[str, Any] = {
        "case_kind": kind,
        "scale": head.get("scale") if head else None,
        "evaluator": head.get("evaluator") if head else None,
        "accuracy": correct / n if n else None,
        "accuracy_ci": list(wilson_interval(correct, n)) if n else None,
        "tolerance": head.get("tolerance", 0) if head else None,
        "n_judged": len(judged),
        "confusion_matrix": None,
        "f1_average": "binary" if kind == "boolean" else "macro",
        "precision": None, "recall": None, "f1": None,
        "cohen_kappa": None,
        "kappa_weights": "quadratic" if kind == "score" else None,
        "mae": None, "rmse": None, "signed_mean_error": None, "mae_expected_level": None,
    }
    if judged:
        matrix, order = confusion_matrix(pred, gold, labels=labels or None)
        out["confusion_matrix"] = {"labels": list(order), "matrix": matrix.tolist(), "rows": "gold",
                                   "columns": "predicted"}
        if kind == "boolean":
            p, r, f = precision_recall_f1(pred, gold, positive=True, average="binary")
        else:
            p, r, f = precision_recall_f1(pred, gold, average="macro")
        out.update(precision=p, recall=r, f1=f)
        out["cohen_kappa"] = cohen_kappa(gold, pred, labels=labels or None,
                                         weights="quadratic" if kind == "score" else None)
        if kind == "score":
            out["mae"] = mean_absolute_error(pred, gold)
            out["rmse"] = root_mean_squared_error(pred, gold)  # beside MAE: catastrophic misses weigh more
            out["signed_mean_error"] = signed_mean_error(pred, gold)
            graded = [r for r in judged if r.get("expected_level") is not None]
            if graded:
                out["mae_expected_level"] = mean_absolute_error(
                    [r["expected_level"] for r in graded], [r["gold"] for r in graded])
    calibrated = [r for r in judged if r.get("probability") is not None]
    probs = [float(r["probability"]) for r in calibrated]
    hits = [1 if r.get("is_correct") is True else 0 for r in calibrated]
    out["n_with_probability"] = len(calibrated)
    out["ece"] = expected_calibration_error(probs, hits, n_bins=ECE_BINS) if calibrated else None
    out["ece_bins"] = ECE_BINS
    out["reliability"] = reliability_bins(probs, hits, n_bins=ECE_BINS) if calibrated else None
    out["brier"] = brier_score(probs, hits) if calibrated else None
    out["low_mass_count"] = sum(1 for r in base if r.get("low_mass") is True)
    out["consistency"], out["consistency_items"] = _consistency(base)
    out["routing"] = routing(base)
    flags = [r["position_consistent"] for r in judged if r.get("position_consistent") is not None]
    out["position_consistency"] = sum(1 for f in flags if f) / len(flags) if flags else None
    return out
