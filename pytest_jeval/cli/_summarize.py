"""``jeval summarize``: a results file's summary, recomputed from its records."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pytest_jeval.cli._read import load_inputs, report_problems
from pytest_jeval.cli._table import fmt, fmt_ci, table, tokens
from pytest_jeval.results.reader import ResultFile, summary_differences, summary_path
from pytest_jeval.scoring.metrics import wilson_interval

#: Judge-benchmark summary fields shown when present (computed by ``pytest_jeval.judge_bench``).
JUDGE_FIELDS = ("precision", "recall", "f1", "cohen_kappa", "mae", "rmse", "signed_mean_error", "ece", "brier",
                "consistency")


def summary_lines(result: ResultFile) -> list[str]:
    """The reference's summarize block, plus the interval, unscored samples and subjects."""
    s = result.summary
    mean_latency = s.get("mean_latency_seconds")
    lines = [
        f"File:      {result.path}",
        f"Benchmark: {s.get('benchmark')}{_label(s, 'benchmark_label')}",
        f"Model:     {s.get('model')}{_label(s, 'model_label')}",
        f"Total:     {s['total_samples']}",
        f"Scored:    {s['scored_samples']}",
        f"Correct:   {s['correct']}",
        f"Accuracy:  {fmt(s.get('accuracy'), '.4f')}  95% CI {fmt_ci(s.get('accuracy_ci'), '.4f')}",
        f"Unscored:  {s['unscored']}",
        f"Errors:    {s['errors']}",
        f"Latency:   {'-' if mean_latency is None else f'{mean_latency:.3f}s mean'}",
        f"Tokens:    {tokens(s)} (prompt/completion)",
    ]
    if s.get("total_energy_joules") is not None:
        lines.append(f"Energy:    {s['total_energy_joules']:.1f} J")
    if s.get("total_cost_usd") is not None:
        lines.append(f"Cost:      ${s['total_cost_usd']:.4f}")
    judge = [f"{key} {_number(s[key])}" for key in JUDGE_FIELDS if isinstance(s.get(key), (int, float))]
    if judge:
        lines.append(f"Judge:     {', '.join(judge)}")
    subjects: dict[str, Any] = s.get("per_subject") or {}
    if subjects:
        lines += ["", "Per subject:"]
        rows = []
        for name, sub in subjects.items():
            answered = int(sub["total"] - sub["errors"])
            rows.append([name, str(int(sub["total"])), str(int(sub["correct"])), fmt(sub["accuracy"]),
                         fmt_ci(_wilson(int(sub["correct"]), answered)), str(int(sub["errors"]))])
        lines += ["  " + ln for ln in table(("subject", "n", "correct", "accuracy", "95% CI", "errors"), rows,
                                            right={1, 2, 3, 5})]
    return lines


def _label(summary: dict[str, Any], field: str) -> str:
    """`` (label X)`` where the suite entry had a label, else nothing."""
    label = summary.get(field)
    return f" (label {label})" if isinstance(label, str) and label else ""


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _wilson(correct: int, answered: int) -> Any:
    return wilson_interval(correct, answered) if answered else None


def warn_if_stale(result: ResultFile) -> bool:
    """Warn on stderr when the stored summary disagrees with the records; True if it does."""
    if result.stored is None:
        print(f"jeval: note: {summary_path(result.path)} not found; summary computed from the records",
              file=sys.stderr)
        return False
    diffs = summary_differences(result.stored, result.summary)
    if not diffs:
        return False
    print(f"jeval: warning: {summary_path(result.path)} differs from its records on {len(diffs)} field(s):",
          file=sys.stderr)
    for key, old, new in diffs:
        print(f"  {key}: stored {_short(old)}, recomputed {_short(new)}", file=sys.stderr)
    return True


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def run(args: argparse.Namespace) -> int:
    """Summarize each file; a stale stored summary is a warning, not a failure; skipped lines exit 1."""
    results = load_inputs(args.files)
    status = report_problems(results)
    if args.json:
        print(json.dumps([r.summary for r in results] if len(results) > 1 else results[0].summary, indent=2))
    else:
        for i, result in enumerate(results):
            if i:
                print()
            print("\n".join(summary_lines(result)))
    for result in results:
        warn_if_stale(result)
    return status
