"""Per-sample JSONL records: built on the process that ran the item, as JSON builtins.

A record has three parts, each built by its own function: the verdict
(:func:`verdict_fields`, which holds the one Score-to-record mapping that
``jeval rescore`` reuses), the usage (tokens, cost, attempts) and the efficiency
figures (latency, throughput, MFU, MBU). :class:`Record` names every field.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from pytest_jeval.core.case import ItemCase
from pytest_jeval.core.chat import Reply
from pytest_jeval.core.score import Score
from pytest_jeval.results.sanitize import clean_record, token_count
from pytest_jeval.suite.config import BenchmarkEntry, ModelEntry
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
    "benchmark_label",
    "model_label",
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
    "turn_count",
    "tool_calls",
    "agent",
    "repeat",
    "repeat_of",
    "served",
    "judge",
    "judge_verdicts",
)


def _sum(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known and len(known) == len(values) else None


def plain(value: Any) -> Any:
    """Convert to JSON builtins (xdist ships records in reports)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return plain(item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _cost(model: str, usage: list[tuple[int | None, int | None]], entry: Any | None) -> float | None:
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


def _usage(replies: list[Reply], who: str, notes: list[str]) -> list[tuple[int | None, int | None]]:
    """Each reply's (prompt, completion) token counts; odd values (strings, negative, NaN) become None, noted."""
    return [(token_count(r.prompt_tokens, f"{who}prompt_tokens", notes),
             token_count(r.completion_tokens, f"{who}completion_tokens", notes)) for r in replies]


class Record(TypedDict):
    """One JSONL line: the reference fields, then pytest-jeval's (a ``Score.fields`` may add more)."""

    record_id: str
    benchmark: str
    model: str
    backend: str
    model_answer: str | None
    is_correct: bool | None
    score: float | None
    latency_seconds: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    error: str | None
    scoring_metadata: dict[str, Any]
    ttft: float | None
    energy_joules: float | None
    power_watts: float | None
    gpu_utilization_pct: float | None
    throughput_tok_per_sec: float | None
    mfu_pct: float | None
    mbu_pct: float | None
    ipw: float | None
    ipj: float | None
    benchmark_label: str | None
    model_label: str | None
    subject: str | None
    question: Any
    expected: Any
    extracted: Any
    unscored: bool
    cached: bool
    attempts: int | None
    judge_prompt_tokens: int | None
    judge_completion_tokens: int | None
    judge_cost_usd: float | None
    call_windows: list[list[float]] | None
    request: dict[str, Any] | None
    turn_count: int | None
    tool_calls: int | None
    agent: dict[str, Any] | None
    repeat: int | None
    repeat_of: str | None
    served: dict[str, Any] | None
    judge: dict[str, Any] | None
    judge_verdicts: list[Any] | None


def score_fields(score: Score, *, expected: Any) -> dict[str, Any]:
    """The record fields a ``Score`` fills (``expected`` when the score names no gold answer).

    This is the one mapping from a scorer's verdict to a record: the run and
    ``jeval rescore`` both use it.
    """
    out: dict[str, Any] = {
        "is_correct": score.correct,
        "score": score.numeric,
        "scoring_metadata": dict(score.metadata),
        "expected": score.expected if score.expected is not None else expected,
        "extracted": score.extracted,
        "unscored": score.unscored,
    }
    for key, val in score.fields.items():
        if key in RECORD_FIELDS:
            raise ValueError(f"Score.fields may not replace the reference field {key!r}")
        out[key] = val
    return out


def verdict_fields(score: Score | None, *, expected: Any, error: str | None = None,
                   failure: str | None = None) -> dict[str, Any]:
    """The verdict part of a record.

    ``error`` (the sample could not be answered) leaves it unjudged; ``failure`` is
    the text of an exception raised outside scoring (a crashing scorer): it is kept
    in ``scoring_metadata`` and, without a score, the sample counts as wrong. With
    neither score nor failure the test passed, so the sample is right.
    """
    if score is not None:
        out = score_fields(score, expected=expected)
    else:
        out = {"scoring_metadata": {}, "expected": expected, "extracted": None, "unscored": False}
    out["error"] = error
    if failure is not None and error is None:
        out["scoring_metadata"]["exception"] = failure
    if error is not None:
        out.update(is_correct=None, score=None, unscored=False)
    elif score is None:
        out.update(is_correct=failure is None, score=1.0 if failure is None else 0.0)
    return out


def usage_fields(case: ItemCase, *, model_entry: ModelEntry | None, judge_model: str | None,
                 judge_prices: Any | None, notes: list[str]) -> dict[str, Any]:
    """Tokens, cost, attempts and cache use of the item's calls (and its judge's)."""
    replies = case.replies
    usage = _usage(replies, "", notes)
    judge_usage = _usage(case.judge_replies, "judge_", notes)
    return {
        "prompt_tokens": _sum([p for p, _ in usage]) if replies else None,
        "completion_tokens": _sum([c for _, c in usage]) if replies else None,
        "cost_usd": _cost(model_entry.name if model_entry is not None else case.model, usage, model_entry),
        "cached": bool(replies) and all(r.cached for r in replies),
        "attempts": sum(r.attempts for r in replies) if replies else None,
        "judge_prompt_tokens": _sum([p for p, _ in judge_usage]) if case.judge_replies else None,
        "judge_completion_tokens": _sum([c for _, c in judge_usage]) if case.judge_replies else None,
        "judge_cost_usd": _cost(judge_model, judge_usage, judge_prices) if judge_model else None,
    }


def efficiency_fields(replies: list[Reply], *, prompt: int | None, completion: int | None,
                      model_entry: ModelEntry | None) -> dict[str, Any]:
    """Latency, time to first token, throughput, MFU and MBU, and the calls' time windows."""
    latency = sum(r.latency_seconds for r in replies if r.latency_seconds is not None) if replies else None
    mfu = mbu = None
    if model_entry is not None:
        params = model_entry.param_count_b or None
        active = model_entry.active_params_b or params
        mfu = mfu_pct(completion, prompt, latency, active, model_entry.gpu_peak_tflops or None, model_entry.num_gpus)
        mbu = mbu_pct(completion, latency, params, model_entry.gpu_peak_bandwidth_gb_s or None, model_entry.num_gpus)
    windows = [[r.started_at, r.ended_at] for r in replies
               if not r.cached and r.started_at is not None and r.ended_at is not None]
    return {
        "latency_seconds": latency,
        "ttft": replies[-1].ttft if replies else None,
        "throughput_tok_per_sec": throughput_tok_per_sec(completion, latency),
        "mfu_pct": mfu,
        "mbu_pct": mbu,
        "call_windows": windows or None,
    }


def build_record(
    case: ItemCase,
    *,
    backend: str = "direct",
    failure: str | None = None,
    model_entry: ModelEntry | None = None,
    judge_model: str | None = None,
    judge_prices: Any | None = None,
    benchmark_entry: BenchmarkEntry | None = None,
) -> Record:
    """The record of one finished item: its verdict, usage and efficiency parts, in field order.

    ``failure`` is the text of an exception raised outside scoring (see
    :func:`verdict_fields`). ``model_entry`` gives prices and hardware figures
    (cost, MFU, MBU); with ``benchmark_entry`` it also gives the names and labels
    the record carries (see :func:`identity_fields`).
    """
    replies = case.replies
    last = replies[-1] if replies else None
    notes: list[str] = []
    record: dict[str, Any] = dict.fromkeys(RECORD_FIELDS + EXTRA_FIELDS)
    record.update(
        record_id=case.sample.id,
        **identity_fields(case.benchmark, case.model, benchmark_entry, model_entry),
        backend=backend,
        model_answer=last.text if last is not None else None,
        subject=case.sample.subject,
        question=case.sample.input,
        request=dict(last.sent) if last is not None and last.sent else None,
        served=served_fields(replies),
    )
    usage = usage_fields(case, model_entry=model_entry, judge_model=judge_model, judge_prices=judge_prices,
                         notes=notes)
    record.update(usage)
    record.update(efficiency_fields(replies, prompt=usage["prompt_tokens"], completion=usage["completion_tokens"],
                                    model_entry=model_entry))
    record.update(verdict_fields(case.score, expected=case.sample.target, error=case.error, failure=failure))
    record.update(agent_fields(case))
    if case.judge_replies and judge_model:
        record["judge"] = {"model": judge_model}  # the judge that gave this verdict (and, with a gate, its validation)
    if case.sample.metadata.get("repeat") is not None:
        record.update(repeat=case.sample.metadata["repeat"], repeat_of=case.sample.metadata.get("repeat_of"))
    if case.sample.metadata.get("fewshot_ids") is not None:  # num_fewshot: the examples sent before the question
        record.update(fewshot_ids=case.sample.metadata["fewshot_ids"],
                      fewshot_split=case.sample.metadata.get("fewshot_split"))
    return cast(Record, clean_record({k: plain(v) for k, v in record.items()}, notes))


def served_fields(replies: list[Reply]) -> dict[str, Any] | None:
    """What the endpoint said it served the item's answer with: the reply's ``model``, its
    ``system_fingerprint`` and the ``seed`` the request sent (null when none), from the call that gave
    the answer; ``models`` / ``system_fingerprints`` list every distinct value when the item's calls
    disagree. None without a call."""
    if not replies:
        return None
    last = replies[-1]
    seed = dict(last.sent).get("seed")
    out: dict[str, Any] = {"model": last.model, "system_fingerprint": last.system_fingerprint,
                           "seed": seed if isinstance(seed, int) and not isinstance(seed, bool) else None}
    models = list(dict.fromkeys(r.model for r in replies))
    prints = list(dict.fromkeys(r.system_fingerprint for r in replies if r.system_fingerprint is not None))
    if len(models) > 1:
        out["models"] = models
    if len(prints) > 1:
        out["system_fingerprints"] = prints
    return out


def identity_fields(benchmark: str, model: str, benchmark_entry: BenchmarkEntry | None = None,
                    model_entry: ModelEntry | None = None) -> dict[str, Any]:
    """``benchmark`` and ``model`` (the benchmark's name and the model id sent), ``benchmark_label`` and
    ``model_label`` (the entries' labels, or None) of the pair whose keys are ``benchmark`` and ``model``."""
    return {
        "benchmark": benchmark_entry.name if benchmark_entry is not None else benchmark,
        "model": model_entry.name if model_entry is not None else model,
        "benchmark_label": benchmark_entry.label if benchmark_entry is not None else None,
        "model_label": model_entry.label if model_entry is not None else None,
    }


def pair_of(record: dict[str, Any]) -> tuple[str, str]:
    """The (benchmark key, model key) of a record: each entry's label, else its name."""
    return (str(record.get("benchmark_label") or record["benchmark"]),
            str(record.get("model_label") or record["model"]))


def agent_fields(case: ItemCase) -> dict[str, Any]:
    """``turn_count``, ``tool_calls`` (a count) and ``agent`` (stop reason, turns, tool calls and errors,
    tokens, wall and tool seconds) of an agent item; all None for a direct one."""
    ep = case.episode
    if ep is None:
        return {"turn_count": None, "tool_calls": None, "agent": None}
    agent = ep.summary()
    repeat = case.sample.metadata.get("repeat")
    if repeat is not None:
        agent["repeat"] = repeat
        agent["repeat_of"] = case.sample.metadata.get("repeat_of")
    return {"turn_count": ep.turns, "tool_calls": len(ep.tool_calls), "agent": agent}


def trajectory(case: ItemCase, record: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The full trajectory of an agent item (its messages and every tool call), keyed by ``record_id``,
    with the ``benchmark`` and ``model`` of its ``record`` (else the case's keys); keys are cut out of it.
    None for a direct item."""
    if case.episode is None:
        return None
    from pytest_jeval.core.redact import redact_value

    named = record if record is not None else {"benchmark": case.benchmark, "model": case.model}
    out = {"record_id": case.sample.id, "benchmark": named["benchmark"], "model": named["model"],
           **case.episode.trajectory()}
    redacted: dict[str, Any] = redact_value(plain(out), patterns=False)
    return redacted
