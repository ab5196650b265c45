"""Per-sample JSONL records: built on the process that ran the item, as JSON builtins."""

from __future__ import annotations

from typing import Any, Optional

from pytest_jeval.config import ModelEntry
from pytest_jeval.engines.base import Reply
from pytest_jeval.results.sanitize import clean_record, token_count
from pytest_jeval.runtime import ItemCase
from pytest_jeval.telemetry.efficiency import mbu_pct, mfu_pct, throughput_tok_per_sec
from pytest_jeval.telemetry.pricing import cost_usd

#: The reference record fields, in order. Unmeasured values are ``null``, never a made-up 0.
RECORD_FIELDS = (
    "record_id",
    "benchmark",
    "model",
    "backend",
    "model_answer",
    "is_correct",
    "score",
    "latency_seconds",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "error",
    "scoring_metadata",
    "ttft",
    "energy_joules",
    "power_watts",
    "gpu_utilization_pct",
    "throughput_tok_per_sec",
    "mfu_pct",
    "mbu_pct",
    "ipw",
    "ipj",
)

#: Fields pytest-jeval adds after the reference ones.
EXTRA_FIELDS = (
    "subject",
    "question",
    "expected",
    "extracted",
    "unscored",
    "cached",
    "attempts",
    "judge_prompt_tokens",
    "judge_completion_tokens",
    "judge_cost_usd",
    "call_windows",
    "request",
)


def _sum(values: list[Optional[int]]) -> Optional[int]:
    known = [v for v in values if v is not None]
    return sum(known) if known and len(known) == len(values) else None


def _plain(value: Any) -> Any:
    """Convert to JSON builtins (xdist ships records in reports)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return _plain(item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _cost(model: str, usage: list[tuple[Optional[int], Optional[int]]], entry: Optional[Any]) -> Optional[float]:
    """Summed cost of the calls (their (prompt, completion) tokens); None when any call's cost is unknown."""
    if not usage:
        return None
    costs = [
        cost_usd(
            model,
            prompt,
            completion,
            price_in_per_mtok=getattr(entry, "price_in_per_mtok", None),
            price_out_per_mtok=getattr(entry, "price_out_per_mtok", None),
        )
        for prompt, completion in usage
    ]
    return None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))


def _usage(replies: list[Reply], who: str, notes: list[str]) -> list[tuple[Optional[int], Optional[int]]]:
    """Each reply's (prompt, completion) token counts; odd values (strings, negative, NaN) become None, noted."""
    return [(token_count(r.prompt_tokens, f"{who}prompt_tokens", notes),
             token_count(r.completion_tokens, f"{who}completion_tokens", notes)) for r in replies]


def build_record(
    case: ItemCase,
    *,
    backend: str = "direct",
    failure: Optional[str] = None,
    model_entry: Optional[ModelEntry] = None,
    judge_model: Optional[str] = None,
    judge_prices: Optional[Any] = None,
) -> dict[str, Any]:
    """The record of one finished item.

    ``failure`` is the text of an exception raised outside scoring (a crashing
    scorer, for example); it is kept in ``scoring_metadata`` and the sample counts
    as wrong. ``model_entry`` gives prices and hardware figures (cost, MFU, MBU).
    """
    replies = case.replies
    last = replies[-1] if replies else None
    score = case.score
    metadata: dict[str, Any] = dict(score.metadata) if score is not None else {}
    if failure is not None and case.error is None:
        metadata["exception"] = failure
    if case.error is not None:
        is_correct: Optional[bool] = None
        value: Optional[float] = None
        unscored = False
    elif score is None:
        is_correct = failure is None
        value = 1.0 if is_correct else 0.0
        unscored = False
    else:
        is_correct = score.correct
        value = score.numeric
        unscored = score.unscored
    notes: list[str] = []
    usage = _usage(replies, "", notes)
    judge_usage = _usage(case.judge_replies, "judge_", notes)
    latency = sum(r.latency_seconds for r in replies if r.latency_seconds is not None) if replies else None
    completion = _sum([c for _, c in usage]) if replies else None
    prompt = _sum([p for p, _ in usage]) if replies else None
    throughput = throughput_tok_per_sec(completion, latency)
    ttft = last.ttft if last is not None else None
    mfu = mbu = None
    if model_entry is not None:
        params = model_entry.param_count_b or None
        active = model_entry.active_params_b or params
        mfu = mfu_pct(completion, prompt, latency, active, model_entry.gpu_peak_tflops or None, model_entry.num_gpus)
        mbu = mbu_pct(completion, latency, params, model_entry.gpu_peak_bandwidth_gb_s or None, model_entry.num_gpus)
    windows = [[r.started_at, r.ended_at] for r in replies if not r.cached and r.started_at is not None and r.ended_at is not None]
    record: dict[str, Any] = {
        "record_id": case.sample.id,
        "benchmark": case.benchmark,
        "model": case.model,
        "backend": backend,
        "model_answer": last.text if last is not None else None,
        "is_correct": is_correct,
        "score": value,
        "latency_seconds": latency,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost_usd": _cost(case.model, usage, model_entry),
        "error": case.error,
        "scoring_metadata": metadata,
        "ttft": ttft,
        "energy_joules": None,
        "power_watts": None,
        "gpu_utilization_pct": None,
        "throughput_tok_per_sec": throughput,
        "mfu_pct": mfu,
        "mbu_pct": mbu,
        "ipw": None,
        "ipj": None,
        "subject": case.sample.subject,
        "question": case.sample.input,
        "expected": score.expected if score is not None and score.expected is not None else case.sample.target,
        "extracted": score.extracted if score is not None else None,
        "unscored": unscored,
        "cached": bool(replies) and all(r.cached for r in replies),
        "attempts": sum(r.attempts for r in replies) if replies else None,
        "judge_prompt_tokens": _sum([p for p, _ in judge_usage]) if case.judge_replies else None,
        "judge_completion_tokens": _sum([c for _, c in judge_usage]) if case.judge_replies else None,
        "judge_cost_usd": _cost(judge_model, judge_usage, judge_prices) if judge_model else None,
        "call_windows": windows or None,
        "request": dict(last.sent) if last is not None and last.sent else None,
    }
    if score is not None:
        for key, val in score.fields.items():
            if key in RECORD_FIELDS:
                raise ValueError(f"Score.fields may not replace the reference field {key!r}")
            record[key] = val
    return clean_record({k: _plain(v) for k, v in record.items()}, notes)
