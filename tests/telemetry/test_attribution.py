"""Energy attribution among overlapping model calls."""

from __future__ import annotations

import random
import threading

import pytest

from pytest_jeval.telemetry.attribution import EnergyLedger
from pytest_jeval.telemetry.nvml import Interval


def one_second_trace() -> list[Interval]:
    """Ten 1 s intervals; interval k draws 10*(k+1) W and reads 10*k % utilisation."""
    return [Interval(float(k), float(k + 1), 10.0 * (k + 1), 10.0 * k) for k in range(10)]


def scripted_ledger() -> EnergyLedger:
    ledger = EnergyLedger()
    ledger.record("A", 1.0, 4.0)
    ledger.record("B", 2.0, 3.5)  # inside A, overlaps C
    ledger.record("C", 3.0, 6.0)  # overlaps A and B, then alone
    # 6..8.5 nothing in flight (idle gap)
    ledger.record("D", 8.5, 9.0)  # half of one interval
    ledger.record("F", 9.5, 11.0)  # runs past the end of the measurement
    ledger.record("E", 20.0, 21.0)  # entirely outside the measurement
    return ledger


def test_shares_match_hand_computation() -> None:
    result = scripted_ledger().attribute(one_second_trace())
    calls = result.calls
    # [1,2] A alone 20 J; [2,3] A+B 30 J; [3,3.5] A+B+C 20 J; [3.5,4] A+C 20 J;
    # [4,5] C 50 J; [5,6] C 60 J; [8.5,9] D 45 J; [9.5,10] F 50 J.
    assert calls["A"].energy_joules == pytest.approx(20 + 15 + 20 / 3 + 10)
    assert calls["B"].energy_joules == pytest.approx(15 + 20 / 3)
    assert calls["C"].energy_joules == pytest.approx(20 / 3 + 10 + 50 + 60)
    assert calls["D"].energy_joules == pytest.approx(45.0)
    assert calls["F"].energy_joules == pytest.approx(50.0)
    # idle: [0,1] 10, [6,7] 70, [7,8] 80, [8,8.5] 45, [9,9.5] 50
    assert result.idle_joules == pytest.approx(10 + 70 + 80 + 45 + 50)
    assert result.total_joules == pytest.approx(550.0)
    assert result.idle_fraction == pytest.approx(255 / 550)


def test_totals_are_conserved() -> None:
    result = scripted_ledger().attribute(one_second_trace())
    per_call = sum(c.energy_joules or 0.0 for c in result.calls.values())
    assert per_call == pytest.approx(result.attributed_joules, rel=1e-12)
    assert per_call + result.idle_joules == pytest.approx(result.total_joules, rel=1e-9)


def test_power_and_utilisation_per_call() -> None:
    calls = scripted_ledger().attribute(one_second_trace()).calls
    assert calls["A"].power_watts == pytest.approx((45 + 20 / 3) / 3.0)
    assert calls["D"].power_watts == pytest.approx(90.0)
    # A overlaps intervals reading 10, 20, 30 % for 1 s each
    assert calls["A"].gpu_utilization_pct == pytest.approx(20.0)
    # B: 1 s at 20 %, 0.5 s at 30 %
    assert calls["B"].gpu_utilization_pct == pytest.approx((20 + 15) / 1.5)
    assert calls["D"].gpu_utilization_pct == pytest.approx(80.0)
    assert calls["A"].coverage == pytest.approx(1.0)
    assert calls["F"].coverage == pytest.approx(0.5 / 1.5)
    assert calls["F"].power_watts == pytest.approx(50 / 1.5)


def test_call_without_samples_gets_none() -> None:
    e = scripted_ledger().attribute(one_second_trace()).calls["E"]
    assert e.energy_joules is None
    assert e.power_watts is None
    assert e.gpu_utilization_pct is None
    assert e.coverage == 0.0


def test_no_intervals_at_all() -> None:
    result = scripted_ledger().attribute([])
    assert all(c.energy_joules is None for c in result.calls.values())
    assert result.total_joules == 0.0 and result.idle_fraction is None


def test_fully_overlapping_workers_split_equally() -> None:
    """The reference bug: 4 concurrent workers each absorbed all the joules."""
    trace = [Interval(k * 0.05, (k + 1) * 0.05, 200.0 * 0.05, 90.0) for k in range(200)]
    ledger = EnergyLedger()
    for w in range(4):
        ledger.record(w, 0.0, 10.0)
    result = ledger.attribute(trace)
    for w in range(4):
        assert result.calls[w].energy_joules == pytest.approx(500.0)
        assert result.calls[w].power_watts == pytest.approx(50.0)
    assert result.idle_joules == pytest.approx(0.0, abs=1e-9)


def test_random_calls_conserve_energy() -> None:
    rng = random.Random(7)
    trace = []
    t = 0.0
    while t < 30.0:
        dt = rng.uniform(0.03, 0.07)
        trace.append(Interval(t, t + dt, rng.uniform(5, 40), rng.uniform(0, 100)))
        t += dt
    ledger = EnergyLedger()
    for k in range(300):
        start = rng.uniform(-1.0, 30.0)
        ledger.record(k, start, start + rng.expovariate(1.0))
    result = ledger.attribute(trace)
    per_call = sum(c.energy_joules or 0.0 for c in result.calls.values())
    assert per_call + result.idle_joules == pytest.approx(result.total_joules, rel=1e-9)
    assert result.total_joules == pytest.approx(sum(i.joules for i in trace), rel=1e-12)


def test_interval_shared_inside_one_sample_period() -> None:
    # one 50 ms interval at 100 W: A alone 30 ms, A and B together 20 ms
    ledger = EnergyLedger()
    ledger.record("A", 0.0, 0.05)
    ledger.record("B", 0.03, 0.06)
    calls = ledger.attribute([Interval(0.0, 0.05, 5.0, None)]).calls
    assert calls["A"].energy_joules == pytest.approx(100 * (0.03 + 0.01))
    assert calls["B"].energy_joules == pytest.approx(100 * 0.01)
    assert calls["B"].coverage == pytest.approx(2 / 3)
    assert calls["A"].gpu_utilization_pct is None


def test_weights_scale_shares() -> None:
    ledger = EnergyLedger()
    ledger.record("big", 0.0, 1.0, weight=3.0)
    ledger.record("small", 0.0, 1.0)
    calls = ledger.attribute([Interval(0.0, 1.0, 40.0, None)]).calls
    assert calls["big"].energy_joules == pytest.approx(30.0)
    assert calls["small"].energy_joules == pytest.approx(10.0)


def test_zero_length_call() -> None:
    ledger = EnergyLedger()
    ledger.record("inside", 0.5, 0.5)
    ledger.record("outside", 5.0, 5.0)
    result = ledger.attribute([Interval(0.0, 1.0, 10.0, 50.0)])
    assert result.calls["inside"].energy_joules == 0.0
    assert result.calls["inside"].power_watts is None
    assert result.calls["outside"].energy_joules is None
    assert result.idle_joules == pytest.approx(10.0)


def test_unsorted_and_degenerate_intervals() -> None:
    ledger = EnergyLedger()
    ledger.record("A", 0.0, 2.0)
    trace = [
        Interval(1.0, 2.0, 7.0, None),
        Interval(0.0, 1.0, 3.0, None),
        Interval(2.0, 2.0, 1.0, None),
    ]
    result = ledger.attribute(trace)
    assert result.calls["A"].energy_joules == pytest.approx(10.0)
    assert result.idle_joules == pytest.approx(1.0)  # zero-length interval: idle


def test_open_calls_are_not_attributed() -> None:
    ledger = EnergyLedger()
    ledger.begin("open", 0.0)
    ledger.record("done", 0.0, 1.0)
    result = ledger.attribute([Interval(0.0, 1.0, 10.0, None)])
    assert ledger.open_calls == 1 and len(ledger) == 1
    assert "open" not in result.calls
    assert result.calls["done"].energy_joules == pytest.approx(10.0)


def test_misuse_raises() -> None:
    ledger = EnergyLedger()
    ledger.begin("x", 1.0)
    with pytest.raises(ValueError):
        ledger.begin("x", 2.0)
    with pytest.raises(ValueError):
        ledger.end("x", 0.5)
    ledger.end("x", 1.5)  # still open after the bad end
    with pytest.raises(KeyError):
        ledger.end("never", 1.0)
    with pytest.raises(ValueError):
        ledger.begin("y", 0.0, weight=0.0)


def test_concurrent_begin_end_from_threads() -> None:
    ledger = EnergyLedger()
    barrier = threading.Barrier(8)

    def worker(w: int) -> None:
        barrier.wait()
        for k in range(200):
            ledger.begin((w, k), float(k))
            ledger.end((w, k), k + 0.5)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(ledger) == 1600 and ledger.open_calls == 0
    result = ledger.attribute([Interval(0.0, 200.0, 2000.0, None)])
    # 8 calls in flight for half of every second: each gets 10 W * 0.5 s / 8
    assert result.calls[(3, 17)].energy_joules == pytest.approx(10 * 0.5 / 8)
    assert result.idle_joules == pytest.approx(1000.0)
