"""Telemetry for a whole run: one GPU sampler on the controller, attribution at the end.

Every model call's window (``time.monotonic``, which is one system-wide clock on
Linux, so worker processes' windows compare with the controller's samples) is
kept in its record as ``call_windows``. When the run ends, the controller
splits each sampling interval's energy among the calls in flight during it
(:class:`~pytest_jeval.telemetry.attribution.EnergyLedger`) and fills each
record's ``energy_joules``, ``power_watts``, ``gpu_utilization_pct``, ``ipw``
and ``ipj``. Per-sample energy then sums to the attributed energy of the run;
the rest is the idle share.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pytest_jeval.telemetry.attribution import AttributionResult, EnergyLedger
from pytest_jeval.telemetry.efficiency import ipj, ipw
from pytest_jeval.telemetry.nvml import GpuSampler


class RunTelemetry:
    """Owns the sampler; turns call windows into per-record energy."""

    def __init__(self, devices: Sequence[int] | None = None, interval: float = 0.05) -> None:
        self.sampler = GpuSampler(devices, interval, clock=time.monotonic)
        self.result: AttributionResult | None = None

    def start(self) -> bool:
        """Start sampling; False (with :meth:`notice` saying why) when no GPU can be measured."""
        return self.sampler.start()

    def stop(self) -> None:
        """Stop sampling (idempotent)."""
        self.sampler.stop()

    def notice(self) -> str | None:
        """One line for the terminal when telemetry is off or incomplete."""
        return self.sampler.notice()

    def attribute(self, records: Sequence[dict[str, Any]]) -> None:
        """Fill the energy fields of ``records`` in place from their ``call_windows``."""
        self.stop()
        ledger = EnergyLedger()
        owners: dict[str, list[str]] = {}
        for n, rec in enumerate(records):
            for k, window in enumerate(rec.get("call_windows") or ()):
                call_id = f"{n}:{k}"
                ledger.record(call_id, float(window[0]), float(window[1]))
                owners.setdefault(str(n), []).append(call_id)
        measured = self.sampler.available or self.sampler.measured_devices
        self.result = ledger.attribute(self.sampler.intervals()) if measured else None
        if self.result is None:
            return
        for n, rec in enumerate(records):
            calls = [self.result.calls[c] for c in owners.get(str(n), []) if c in self.result.calls]
            energies = [c.energy_joules for c in calls]
            if not calls or any(e is None for e in energies):
                continue
            energy = float(sum(e for e in energies if e is not None))
            duration = sum(c.duration for c in calls)
            utils = [(c.gpu_utilization_pct, c.duration) for c in calls if c.gpu_utilization_pct is not None]
            rec["energy_joules"] = energy
            rec["power_watts"] = energy / duration if duration > 0 else None
            rec["gpu_utilization_pct"] = (
                sum(u * d for u, d in utils) / sum(d for _, d in utils)
                if utils and sum(d for _, d in utils) > 0 else None
            )
            rec["ipw"] = ipw(rec.get("score"), rec["power_watts"])
            rec["ipj"] = ipj(rec.get("score"), energy)

    def summary(self) -> dict[str, Any]:
        """The run-level telemetry block: devices, methods, total, attributed and idle energy."""
        devices = [
            {"index": d.index, "name": d.name, "uuid": d.uuid, "energy_method": d.energy_method, "error": d.error}
            for d in self.sampler.measured_devices
        ]
        block: dict[str, Any] = {
            "available": bool(devices),
            "notice": self.notice(),
            "devices": devices,
            "total_energy_joules": None,
            "attributed_energy_joules": None,
            "idle_energy_joules": None,
            "idle_fraction": None,
        }
        if self.result is not None:
            block.update(
                total_energy_joules=self.result.total_joules,
                attributed_energy_joules=self.result.attributed_joules,
                idle_energy_joules=self.result.idle_joules,
                idle_fraction=self.result.idle_fraction,
            )
        return block
