"""Efficiency formulas: throughput, MFU, MBU, intelligence per watt and per joule.

Every function is pure and returns None when an input it needs is missing or
meaningless (unknown token counts, a zero duration, hardware figures left at
their ``0.0`` "unknown" default).  None means "not measured"; a function never
turns a missing input into a made-up 0.
"""

from __future__ import annotations

import math

__all__ = [
    "decode_throughput_tok_per_sec",
    "ipj",
    "ipw",
    "mbu_pct",
    "mfu_pct",
    "summary_ipj",
    "summary_ipw",
    "throughput_tok_per_sec",
]


def _positive(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def _count(x: int | None) -> bool:
    return x is not None and x >= 0


def throughput_tok_per_sec(completion_tokens: int | None, seconds: float | None) -> float | None:
    """Output tokens per second of wall time: ``completion_tokens / seconds``."""
    if not _count(completion_tokens) or not _positive(seconds):
        return None
    assert completion_tokens is not None and seconds is not None
    return completion_tokens / seconds


def decode_throughput_tok_per_sec(
    completion_tokens: int | None, latency_seconds: float | None, ttft: float | None
) -> float | None:
    """Decode-phase throughput of a streamed call: ``completion_tokens / (latency - ttft)``.

    None unless the time to first token is known (streaming) and smaller than
    the latency.
    """
    if ttft is None or latency_seconds is None or ttft < 0:
        return None
    return throughput_tok_per_sec(completion_tokens, latency_seconds - ttft)


def mfu_pct(
    completion_tokens: int | None,
    prompt_tokens: int | None,
    seconds: float | None,
    active_params_b: float | None,
    gpu_peak_tflops: float | None,
    num_gpus: int | None = 1,
) -> float | None:
    """Model FLOPs utilisation in percent.

    ``achieved = 2 * active_params * (prompt_tokens + completion_tokens) / seconds``
    (a forward pass costs about two FLOPs per active parameter per token;
    attention FLOPs are ignored), and
    ``MFU = achieved / (gpu_peak_tflops * 1e12 * num_gpus) * 100``.

    ``active_params_b`` is in billions; for dense models pass ``param_count_b``.
    Called with one sample's tokens and latency this is the sample's own share
    of the hardware; with run totals and the run's wall time it is the
    aggregate MFU.
    """
    if not (_count(completion_tokens) and _count(prompt_tokens)):
        return None
    if not (_positive(seconds) and _positive(active_params_b) and _positive(gpu_peak_tflops)):
        return None
    if num_gpus is None or num_gpus <= 0:
        return None
    assert completion_tokens is not None and prompt_tokens is not None
    assert seconds is not None and active_params_b is not None and gpu_peak_tflops is not None
    achieved = 2.0 * active_params_b * 1e9 * (prompt_tokens + completion_tokens) / seconds
    return achieved / (gpu_peak_tflops * 1e12 * num_gpus) * 100.0


def mbu_pct(
    completion_tokens: int | None,
    seconds: float | None,
    param_count_b: float | None,
    gpu_peak_bandwidth_gb_s: float | None,
    num_gpus: int | None = 1,
    bytes_per_param: float = 2.0,
) -> float | None:
    """Memory bandwidth utilisation in percent.

    Each decode step reads every weight once, so
    ``achieved = param_count * bytes_per_param * completion_tokens / seconds``
    bytes per second and
    ``MBU = achieved / (gpu_peak_bandwidth_gb_s * 1e9 * num_gpus) * 100``.
    KV-cache reads are ignored, and weights shared by a concurrent batch are
    counted once per call, so under batching this overstates the bytes moved.
    ``bytes_per_param`` is 2 for FP16/BF16, 1 for 8-bit, about 0.5 for 4-bit.
    """
    if not (_count(completion_tokens) and _positive(seconds)):
        return None
    if not (_positive(param_count_b) and _positive(gpu_peak_bandwidth_gb_s)):
        return None
    if num_gpus is None or num_gpus <= 0 or not _positive(bytes_per_param):
        return None
    assert completion_tokens is not None and seconds is not None
    assert param_count_b is not None and gpu_peak_bandwidth_gb_s is not None
    achieved = param_count_b * 1e9 * bytes_per_param * completion_tokens / seconds
    return achieved / (gpu_peak_bandwidth_gb_s * 1e9 * num_gpus) * 100.0


def _per_unit(score: float | None, denominator: float | None) -> float | None:
    if score is None or not _positive(denominator):
        return None
    assert denominator is not None
    return score / denominator


def ipw(score: float | None, power_watts: float | None) -> float | None:
    """Intelligence per watt of one sample: ``score / power_watts``.

    0 for an incorrect sample (score 0) with known power; None when the sample
    is unscored or its power is unknown or zero.
    """
    return _per_unit(score, power_watts)


def ipj(score: float | None, energy_joules: float | None) -> float | None:
    """Intelligence per joule of one sample: ``score / energy_joules``.

    Same rules as :func:`ipw`: 0 when incorrect, None when energy is unknown or zero.
    """
    return _per_unit(score, energy_joules)


def summary_ipw(accuracy: float | None, mean_power_watts: float | None) -> float | None:
    """Run-level intelligence per watt: ``accuracy / mean_power_watts``."""
    return _per_unit(accuracy, mean_power_watts)


def summary_ipj(accuracy: float | None, total_energy_joules: float | None) -> float | None:
    """Run-level intelligence per joule: ``accuracy / total_energy_joules``."""
    return _per_unit(accuracy, total_energy_joules)
