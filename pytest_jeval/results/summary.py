"""Summaries computed from JSONL records alone, so any summary can be recomputed from its file."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_jeval.core.chat import is_budget_error
from pytest_jeval.results.repeats import judge_repeat_summary, repeat_summary
from pytest_jeval.results.served import served_summary
from pytest_jeval.scoring.metrics import metric_stats, wilson_interval
from pytest_jeval.telemetry.efficiency import summary_ipj, summary_ipw

#: ``*_stats`` block name -> record field.
STATS_FIELDS = {
    "accuracy_stats": "score",
    "latency_stats": "latency_seconds",
    "ttft_stats": "ttft",
    "energy_stats": "energy_joules",
    "power_stats": "power_watts",
    "gpu_utilization_stats": "gpu_utilization_pct",
    "throughput_stats": "throughput_tok_per_sec",
    "mfu_stats": "mfu_pct",
    "mbu_stats": "mbu_pct",
    "ipw_stats": "ipw",
    "ipj_stats": "ipj",
}


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file: the newest line of each record id (at the place of its first
    line), since a run appends its new verdicts; a torn last line (killed writer) is ignored."""
    records: dict[str, dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "record_id" in rec:
            records[str(rec["record_id"])] = rec
    return list(records.values())


#: Record fields summed or averaged here: a value that is not a finite number counts as unknown.
NUMERIC_FIELDS = frozenset(STATS_FIELDS.values()) | {
    "cost_usd", "judge_cost_usd", "prompt_tokens", "completion_tokens", "judge_prompt_tokens",
    "judge_completion_tokens",
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _readable(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every numeric field a finite number or None."""
    if all(record.get(f) is None or _number(record[f]) is not None for f in NUMERIC_FIELDS):
        return record
    return {k: (_number(v) if k in NUMERIC_FIELDS else v) for k, v in record.items()}


def _total(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def _counts(records: list[dict[str, Any]]) -> dict[str, Any]:
    total = len(records)
    errors = sum(1 for r in records if r.get("error") is not None)
    correct = sum(1 for r in records if r.get("error") is None and r.get("is_correct") is True)
    unscored = sum(1 for r in records if r.get("error") is None and r.get("is_correct") is None)
    answered = total - errors
    accuracy = correct / answered if answered else None
    return {
        "total_samples": total,
        "scored_samples": answered - unscored,
        "correct": correct,
        "accuracy": accuracy,
        "accuracy_ci": list(wilson_interval(correct, answered)) if answered else None,
        "errors": errors,
        "error_rate": errors / total if total else None,
        "unscored": unscored,
    }


def summarize(
    records: list[dict[str, Any]],
    *,
    benchmark: str | None = None,
    model: str | None = None,
    category: str | None = None,
    benchmark_label: str | None = None,
    model_label: str | None = None,
    backend: str = "direct",
    started_at: float | None = None,
    ended_at: float | None = None,
) -> dict[str, Any]:
    """The summary of one (benchmark, model) run.

    Accuracy is correct / (samples that did not error); unscored answers count
    as wrong. ``accuracy_ci`` is the Wilson 95% interval on the same counts.
    A numeric field holding something else (a string, NaN) counts as unmeasured.
    ``benchmark_label`` and ``model_label`` (the suite entries' labels; by default the
    records') are there only when set.
    """
    records = [_readable(r) for r in records]
    first = records[0] if records else {}
    summary: dict[str, Any] = {
        "benchmark": benchmark or first.get("benchmark"),
        "category": category,
        "backend": backend,
        "model": model or first.get("model"),
    }
    for field, label in (("benchmark_label", benchmark_label), ("model_label", model_label)):
        label = label or first.get(field)
        if isinstance(label, str) and label:
            summary[field] = label
    summary.update(_counts(records))
    stopped = sum(1 for r in records if is_budget_error(r.get("error")))
    if stopped:
        summary["budget_exhausted"] = stopped  # errors of items the run budget stopped (--jeval-resume runs them)
    ok = [r for r in records if r.get("error") is None]
    latencies = [r["latency_seconds"] for r in records if r.get("latency_seconds") is not None]
    summary["mean_latency_seconds"] = sum(latencies) / len(latencies) if latencies else None
    summary["total_cost_usd"] = _total(r.get("cost_usd") for r in records)
    summary["judge_cost_usd"] = _total(r.get("judge_cost_usd") for r in records)
    summary["total_prompt_tokens"] = _total(r.get("prompt_tokens") for r in records)
    summary["total_completion_tokens"] = _total(r.get("completion_tokens") for r in records)
    subjects: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("subject") is not None:
            subjects.setdefault(str(r["subject"]), []).append(r)
    summary["per_subject"] = {
        name: {
            "accuracy": c["accuracy"],
            "total": float(c["total_samples"]),
            "scored": float(c["scored_samples"]),
            "correct": float(c["correct"]),
            "errors": float(c["errors"]),
        }
        for name, c in sorted((n, _counts(rs)) for n, rs in subjects.items())
    }
    summary["started_at"] = started_at
    summary["ended_at"] = ended_at
    for block, field in STATS_FIELDS.items():
        if field == "score":  # an unscored sample scores 0, as in accuracy
            summary[block] = metric_stats(0.0 if r.get(field) is None else r.get(field) for r in ok)
        else:
            summary[block] = metric_stats(r.get(field) for r in records)
    summary["total_energy_joules"] = _total(r.get("energy_joules") for r in records)
    power = summary["power_stats"]["mean"] if summary["power_stats"] else None
    summary["ipw"] = summary_ipw(summary["accuracy"], power)
    summary["ipj"] = summary_ipj(summary["accuracy"], summary["total_energy_joules"])
    served = served_summary(records)
    if served is not None:
        summary["served"] = served
    judged = judged_by(records)
    if judged is not None:
        summary["judged_by"] = judged
    shots = [r for r in records if isinstance(r.get("fewshot_ids"), list)]
    if shots:  # num_fewshot: each record lists its examples; the summary says how many and from which split
        summary["num_fewshot"] = max(len(r["fewshot_ids"]) for r in shots)
        summary["fewshot_split"] = shots[0].get("fewshot_split")
    repeats = repeat_summary(records)
    if repeats is not None:
        summary["repeats"] = repeats
    judge_repeats = judge_repeat_summary(records)
    if judge_repeats is not None:
        summary["judge_repeats"] = judge_repeats
    agent = agent_summary(records, repeats)
    if agent is not None:
        summary["agent"] = agent
        summary.update({"mean_turns": agent["mean_turns"], "tool_calls_per_episode": agent["tool_calls_per_episode"],
                        "stop_reasons": agent["stop_reasons"], "tool_error_rate": agent["tool_error_rate"]})
        if agent.get("pass_hat_k") is not None:
            summary["pass_hat_k"] = agent["pass_hat_k"]
            summary["pass_at_k"] = agent["pass_at_k"]
    return summary


def judged_by(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Which judge gave the verdicts (``judge`` of each record that asked one) and the validations behind them:
    ``models`` (verdicts per judge model), ``validated`` (verdicts a ``[judge] validate`` gate backed) and
    ``validations`` (each distinct validation's figures: accuracy, Cohen's kappa, ECE, ...). None when no
    record asked a judge."""
    judges = [r["judge"] for r in records if isinstance(r.get("judge"), dict)]
    if not judges:
        return None
    models: dict[str, int] = {}
    validations: dict[str, dict[str, Any]] = {}
    validated = 0
    for judge in judges:
        models[str(judge.get("model"))] = models.get(str(judge.get("model")), 0) + 1
        validation = judge.get("validation")
        if isinstance(validation, dict):
            validated += 1
            validations.setdefault(str(validation.get("id")), validation)
    return {"verdicts": len(judges), "models": dict(sorted(models.items())), "validated": validated,
            "validations": list(validations.values())}


def agent_summary(records: list[dict[str, Any]], repeats: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Mean turns, tool calls per episode, the stop-reason counts and the tool error rate of the
    agent records (and pass^k and pass@k over repeats, from ``repeats``, the summary's ``repeats`` block);
    None when no record is an agent episode."""
    episodes = [r["agent"] for r in records if isinstance(r.get("agent"), dict)]
    if not episodes:
        return None
    calls = sum(int(e.get("tool_calls") or 0) for e in episodes)
    errors = sum(int(e.get("tool_errors") or 0) for e in episodes)
    reasons: dict[str, int] = {}
    for e in episodes:
        reason = str(e.get("stop_reason"))
        reasons[reason] = reasons.get(reason, 0) + 1
    return {
        "episodes": len(episodes),
        "mean_turns": sum(int(e.get("turns") or 0) for e in episodes) / len(episodes),
        "tool_calls_per_episode": calls / len(episodes),
        "stop_reasons": dict(sorted(reasons.items())),
        "tool_error_rate": errors / calls if calls else None,
        "pass_hat_k": (block := repeats if repeats is not None else repeat_summary(records) or {}).get("pass_hat_k"),
        "pass_at_k": block.get("pass_at_k"),
    }


def pass_hat_k(records: list[dict[str, Any]]) -> dict[str, float] | None:
    """tau-bench's pass^k for k = 1..n over samples run n times (``repeats``): the mean over tasks
    of C(c, k) / C(n, k), c the task's correct runs. Errored runs count as not passed.
    None when no record is a repeat (the ``repeats`` block of :func:`repeat_summary` has it too)."""
    repeats = repeat_summary(records)
    return repeats["pass_hat_k"] if repeats is not None else None


def pass_at_k(records: list[dict[str, Any]]) -> dict[str, float] | None:
    """pass@k for k = 1..n over samples run n times: the mean over tasks of 1 - C(n - c, k) / C(n, k)
    ("at least one of k trials succeeds"). None when no record is a repeat."""
    repeats = repeat_summary(records)
    return repeats["pass_at_k"] if repeats is not None else None


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Write a summary JSON atomically, never through a link (see :mod:`pytest_jeval.core.files`)."""
    from pytest_jeval.core.files import write_atomic

    write_atomic(path, (json.dumps(summary, indent=2, sort_keys=False) + "\n").encode("utf-8"))
