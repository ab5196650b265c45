"""GPU telemetry for model calls: sampling, energy attribution, efficiency and cost.

- :mod:`.nvml`: :class:`GpuSampler` polls NVML in the background.
- :mod:`.attribution`: :class:`EnergyLedger` shares measured energy among
  concurrent calls.
- :mod:`.efficiency`: throughput, MFU, MBU, IPW and IPJ formulas.
- :mod:`.pricing`: exact-id price table and :func:`cost_usd`.

Nothing here imports ``pynvml`` until :meth:`GpuSampler.start` runs.
"""

from __future__ import annotations

from pytest_jeval.telemetry.attribution import AttributionResult, CallEnergy, EnergyLedger
from pytest_jeval.telemetry.efficiency import (
    decode_throughput_tok_per_sec,
    ipj,
    ipw,
    mbu_pct,
    mfu_pct,
    summary_ipj,
    summary_ipw,
    throughput_tok_per_sec,
)
from pytest_jeval.telemetry.nvml import DEFAULT_INTERVAL_S, GpuSample, GpuSampler, Interval, MeasuredDevice
from pytest_jeval.telemetry.pricing import PRICES, Price, cost_usd, price_for

__all__ = [
    "DEFAULT_INTERVAL_S",
    "PRICES",
    "AttributionResult",
    "CallEnergy",
    "EnergyLedger",
    "GpuSample",
    "GpuSampler",
    "Interval",
    "MeasuredDevice",
    "Price",
    "cost_usd",
    "decode_throughput_tok_per_sec",
    "ipj",
    "ipw",
    "mbu_pct",
    "mfu_pct",
    "price_for",
    "summary_ipj",
    "summary_ipw",
    "throughput_tok_per_sec",
]
