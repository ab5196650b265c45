"""Split measured GPU energy among concurrent model calls.

Model calls run many at a time, so reading the energy counter at the start and
end of each call would charge every call for its neighbours' joules too.
Instead the :class:`~pytest_jeval.telemetry.nvml.GpuSampler` measures energy in
short contiguous intervals, an :class:`EnergyLedger` records when each call
was in flight, and :meth:`EnergyLedger.attribute` shares every interval's
energy among the calls in flight during it.

The rule
--------
Within an interval ``[t0, t1]`` holding ``E`` joules, power is taken as
constant, ``P = E / (t1 - t0)``.  At every instant that power is divided among
the calls in flight at that instant, in proportion to their weights (all 1 by
default, so equally per call).  A call therefore receives::

    E_c = sum over intervals I of  P_I * integral over (I ∩ call c) of  w_c / W(t) dt

where ``W(t)`` is the total weight of the calls in flight at ``t``.  Energy
at instants when no call is in flight (between calls, before the first,
after the last) is the *idle* share.  Each interval's energy is thus split
completely, so ``sum(E_c) + idle == total`` up to float rounding.

Example: in a 50 ms interval at ``P`` watts, call A runs alone for the first
30 ms and shares the last 20 ms with call B.  A receives
``P * (0.030 + 0.020 / 2)`` joules and B ``P * 0.020 / 2``; nothing is idle.

Per call, ``power_watts`` is the *mean attributed power*, ``E_c`` divided by
the call's duration, and ``gpu_utilization_pct`` is the mean of the
intervals' utilisation weighted by how long the call overlapped each.  A call
that overlaps no interval (telemetry was off, or had not started or had
already stopped) gets None for all three, never 0.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import threading
from collections.abc import Hashable, Iterable, Mapping

from pytest_jeval.telemetry.nvml import Interval

__all__ = ["AttributionResult", "CallEnergy", "EnergyLedger"]


@dataclasses.dataclass(frozen=True)
class CallEnergy:
    """What was attributed to one model call."""

    call_id: Hashable
    started_at: float
    ended_at: float
    energy_joules: float | None
    """Attributed energy; None when no measured interval overlaps the call."""
    power_watts: float | None
    """Mean attributed power: ``energy_joules / duration``; None for a zero-length call."""
    gpu_utilization_pct: float | None
    """Overlap-time-weighted mean of the intervals' GPU utilisation."""
    coverage: float
    """Share of the call's duration covered by measured intervals (0..1).
    Below 1 the call ran partly outside the measurement (energy is a lower bound)."""

    @property
    def duration(self) -> float:
        return self.ended_at - self.started_at


@dataclasses.dataclass(frozen=True)
class AttributionResult:
    """Per-call shares plus the totals they add up to."""

    calls: Mapping[Hashable, CallEnergy]
    total_joules: float
    """Energy of all intervals."""
    attributed_joules: float
    """Energy given to calls."""
    idle_joules: float
    """Energy measured while no call was in flight."""

    @property
    def idle_fraction(self) -> float | None:
        """``idle_joules / total_joules``; None when nothing was measured."""
        return self.idle_joules / self.total_joules if self.total_joules > 0 else None


@dataclasses.dataclass(frozen=True)
class _Call:
    call_id: Hashable
    start: float
    end: float
    weight: float


def _check_weight(weight: float) -> float:
    weight = float(weight)
    if not (weight > 0 and math.isfinite(weight)):
        raise ValueError(f"weight must be positive and finite, got {weight!r}")
    return weight


class EnergyLedger:
    """Thread-safe record of model-call windows, and their energy attribution.

    Timestamps must come from the sampler's clock (``time.perf_counter()`` by
    default).  Only ended calls are attributed; a call still open when
    :meth:`attribute` runs counts neither as in flight nor in the result.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Hashable, tuple[float, float]] = {}
        self._done: dict[Hashable, _Call] = {}

    def begin(self, call_id: Hashable, t: float, *, weight: float = 1.0) -> None:
        """Mark ``call_id`` in flight from ``t``.  ``weight`` scales its share (default 1)."""
        weight = _check_weight(weight)
        with self._lock:
            if call_id in self._open or call_id in self._done:
                raise ValueError(f"call {call_id!r} already recorded")
            self._open[call_id] = (float(t), weight)

    def end(self, call_id: Hashable, t: float) -> None:
        """Mark ``call_id`` finished at ``t``."""
        with self._lock:
            try:
                start, weight = self._open.pop(call_id)
            except KeyError:
                raise KeyError(f"call {call_id!r} was not begun") from None
            if t < start:
                self._open[call_id] = (start, weight)
                raise ValueError(f"call {call_id!r} ends ({t}) before it began ({start})")
            self._done[call_id] = _Call(call_id, start, float(t), weight)

    def record(self, call_id: Hashable, t0: float, t1: float, *, weight: float = 1.0) -> None:
        """Record a finished call in one step (e.g. from a reply's start/end times)."""
        self.begin(call_id, t0, weight=weight)
        self.end(call_id, t1)

    @property
    def open_calls(self) -> int:
        """Calls begun and not yet ended."""
        with self._lock:
            return len(self._open)

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def attribute(self, intervals: Iterable[Interval]) -> AttributionResult:
        """Share each interval's energy among the calls in flight (see the module doc)."""
        with self._lock:
            calls = sorted(self._done.values(), key=lambda c: (c.start, c.end))
        return _attribute(calls, sorted(intervals, key=lambda i: (i.t0, i.t1)))


def _timeline(calls: list[_Call]) -> tuple[list[float], list[tuple[tuple[int, ...], float]]]:
    """Breakpoints and, per elementary segment between them, (calls in flight, total weight)."""
    starts: dict[float, list[int]] = {}
    ends: dict[float, list[int]] = {}
    for k, c in enumerate(calls):
        if c.end > c.start:
            starts.setdefault(c.start, []).append(k)
            ends.setdefault(c.end, []).append(k)
    points = sorted(set(starts) | set(ends))
    active: dict[int, None] = {}
    segments: list[tuple[tuple[int, ...], float]] = []
    for b in points[:-1]:
        for k in ends.get(b, ()):
            active.pop(k, None)
        for k in starts.get(b, ()):
            active[k] = None
        members = tuple(active)
        segments.append((members, sum(calls[k].weight for k in members)))
    return points, segments


def _attribute(calls: list[_Call], intervals: list[Interval]) -> AttributionResult:
    points, segments = _timeline(calls)
    n = len(calls)
    energy = [0.0] * n
    overlap = [0.0] * n
    util_num = [0.0] * n
    util_den = [0.0] * n
    total = 0.0
    idle = 0.0
    for iv in intervals:
        total += iv.joules
        span = iv.t1 - iv.t0
        if span <= 0:
            idle += iv.joules
            continue
        power = iv.joules / span
        busy = 0.0
        i = max(bisect.bisect_right(points, iv.t0) - 1, 0)
        while i < len(segments) and points[i] < iv.t1:
            a, b = max(iv.t0, points[i]), min(iv.t1, points[i + 1])
            members, weight = segments[i]
            i += 1
            if b <= a or not members:
                continue
            length = b - a
            busy += length
            for k in members:
                energy[k] += power * length * calls[k].weight / weight
                overlap[k] += length
                if iv.util_pct is not None:
                    util_num[k] += length * iv.util_pct
                    util_den[k] += length
        idle += power * (span - busy)

    starts = [iv.t0 for iv in intervals]
    result: dict[Hashable, CallEnergy] = {}
    for k, c in enumerate(calls):
        duration = c.end - c.start
        if duration > 0:
            seen = overlap[k] > 0
            coverage = min(overlap[k] / duration, 1.0)
        else:  # a zero-length call is covered if an interval contains its instant
            j = bisect.bisect_right(starts, c.start) - 1
            seen = j >= 0 and intervals[j].t1 >= c.start
            coverage = 1.0 if seen else 0.0
        e = energy[k] if seen else None
        result[c.call_id] = CallEnergy(
            call_id=c.call_id,
            started_at=c.start,
            ended_at=c.end,
            energy_joules=e,
            power_watts=e / duration if e is not None and duration > 0 else None,
            gpu_utilization_pct=util_num[k] / util_den[k] if util_den[k] > 0 else None,
            coverage=coverage,
        )
    attributed = sum(energy)
    return AttributionResult(result, total, attributed, idle)
