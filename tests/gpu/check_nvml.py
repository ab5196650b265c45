"""Hand-run GPU check of pytest_jeval.telemetry against real NVML.

How to run (on a machine with an NVIDIA GPU and driver; not part of the test
suite, pytest does not collect this file)::

    cd <repo root>
    .venv/bin/python tests/gpu/check_nvml.py            # ~10 s burn, all visible GPUs
    .venv/bin/python tests/gpu/check_nvml.py --seconds 20 --device 0

What it checks, printing one PASS/FAIL/SKIP line per check and exiting
non-zero if any check FAILs:

1. Counter vs power integration.  A GPU burn of known duration runs (torch
   if importable, else cupy, else no burn: idle power is sampled instead)
   while two samplers record in parallel, one forced to the energy counter
   and one forced to power integration.  The window has idle margins before
   and after the burn, because NVML power readings on Ampere and newer are
   1 s averages that lag the load; the two totals must agree within 5 %.
2. Poll rate: the samplers' median poll spacing stays near the 50 ms interval.
3. Attribution.  During the burn, worker threads simulate concurrent model
   calls on an EnergyLedger; per-call energy plus the idle share must equal
   the measured total within 1 %, and every call must receive energy.  For
   comparison it prints what per-call counter windows (the reference
   implementation's method) would have summed to.
4. ``check_plugin_run()``: a hook for an end-to-end plugin run; skipped with
   a message when ``pytest_jeval.plugin`` cannot be imported.
"""

from __future__ import annotations

import argparse
import bisect
import importlib
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import itertools

from pytest_jeval.telemetry.attribution import EnergyLedger
from pytest_jeval.telemetry.nvml import GpuSampler, Interval

IDLE_BEFORE_S = 1.5
IDLE_AFTER_S = 2.5
AGREEMENT = 0.05
CONSERVATION = 0.01


class Report:
    """Collects PASS/FAIL/SKIP lines."""

    def __init__(self) -> None:
        self.failed = 0

    def line(self, status: str, what: str, detail: str = "") -> None:
        if status == "FAIL":
            self.failed += 1
        print(f"{status}: {what}" + (f" -- {detail}" if detail else ""), flush=True)


# -- load ---------------------------------------------------------------------


def make_burn() -> tuple[str, Callable[[float, threading.Event], int]]:
    """Pick a burn backend; returns its name and ``burn(seconds, stop) -> iterations``."""
    try:
        torch = importlib.import_module("torch")
        if torch.cuda.is_available():

            def torch_burn(seconds: float, stop: threading.Event) -> int:
                a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
                b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
                end, n = time.perf_counter() + seconds, 0
                while time.perf_counter() < end and not stop.is_set():
                    for _ in range(8):
                        a @ b
                    torch.cuda.synchronize()
                    n += 8
                return n

            return "torch", torch_burn
    except Exception:
        pass
    try:
        cp = importlib.import_module("cupy")
        cp.cuda.runtime.getDeviceCount()

        def cupy_burn(seconds: float, stop: threading.Event) -> int:
            a = cp.random.random((8192, 8192), dtype=cp.float32)
            b = cp.random.random((8192, 8192), dtype=cp.float32)
            end, n = time.perf_counter() + seconds, 0
            while time.perf_counter() < end and not stop.is_set():
                for _ in range(4):
                    a @ b
                cp.cuda.Device().synchronize()
                n += 4
            return n

        return "cupy", cupy_burn
    except Exception:
        pass

    def idle(seconds: float, stop: threading.Event) -> int:
        stop.wait(seconds)
        return 0

    return "none (idle power only: neither torch nor cupy can reach a GPU)", idle


# -- checks -------------------------------------------------------------------


def median_gap(sampler: GpuSampler) -> float | None:
    devices = sampler.measured_devices
    if not devices:
        return None
    series = sampler.samples(devices[0].index)
    gaps = [b.t - a.t for a, b in itertools.pairwise(series)]
    return statistics.median(gaps) if gaps else None


def cumulative(intervals: list[Interval]) -> Callable[[float], float]:
    """Energy measured up to time t, linear within each interval."""
    times = [intervals[0].t0] + [iv.t1 for iv in intervals]
    totals = [0.0]
    for iv in intervals:
        totals.append(totals[-1] + iv.joules)

    def at(t: float) -> float:
        k = bisect.bisect_right(times, t) - 1
        if k < 0:
            return 0.0
        if k >= len(intervals):
            return totals[-1]
        iv = intervals[k]
        return totals[k] + iv.joules * (t - iv.t0) / (iv.t1 - iv.t0)

    return at


def simulate_calls(
    ledger: EnergyLedger, until: float, workers: int, seed: int = 0
) -> list[threading.Thread]:
    """Threads that record overlapping "model calls" of 0.2-1.5 s until ``until``."""

    def worker(w: int) -> None:
        rng = random.Random(seed * 100 + w)
        k = 0
        while True:
            time.sleep(rng.uniform(0.0, 0.3))
            duration = rng.uniform(0.2, 1.5)
            if time.perf_counter() + duration > until:
                return
            call_id = f"w{w}-c{k}"
            ledger.begin(call_id, time.perf_counter())
            time.sleep(duration)
            ledger.end(call_id, time.perf_counter())
            k += 1

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(workers)]
    for th in threads:
        th.start()
    return threads


def check_nvml(seconds: float, devices: list[int] | None, workers: int, report: Report) -> None:
    probe = GpuSampler(devices)
    if not probe.start(background=False):
        report.line("FAIL", "GPU telemetry available", probe.notice() or "unknown reason")
        return
    probe.stop()
    for d in probe.measured_devices:
        print(f"  device {d.index}: {d.name} {d.uuid} energy via {d.energy_method}")

    counter = GpuSampler(devices, energy_method="counter")
    power = GpuSampler(devices, energy_method="power")
    counter_ok = counter.start()
    if not counter_ok:
        print(f"  counter sampler: {counter.notice()}")
    if not power.start():
        report.line("FAIL", "power sampler started", power.notice() or "")
        counter.stop()
        return

    name, burn = make_burn()
    print(f"  burn backend: {name}; {seconds:.1f} s burn, {workers} simulated workers")
    ledger = EnergyLedger()
    stop = threading.Event()
    time.sleep(IDLE_BEFORE_S)
    burn_start = time.perf_counter()
    threads = simulate_calls(ledger, burn_start + seconds, workers)
    iterations = burn(seconds, stop)
    burn_end = time.perf_counter()
    for th in threads:
        th.join()
    time.sleep(IDLE_AFTER_S)
    counter.stop()
    power.stop()
    print(f"  burn ran {burn_end - burn_start:.2f} s, {iterations} matmuls")

    # 1. counter vs power integration
    e_power = power.total_energy()
    e_counter = counter.total_energy() if counter_ok else None
    if e_counter is None or e_power is None:
        report.line(
            "SKIP",
            "counter vs power agreement",
            f"counter={e_counter} J, power={e_power} J (energy counter unsupported?)",
        )
    else:
        ratio = e_power / e_counter
        detail = f"counter={e_counter:.1f} J, power={e_power:.1f} J, power/counter={ratio:.4f}"
        report.line("PASS" if abs(ratio - 1) <= AGREEMENT else "FAIL", "counter vs power", detail)

    # 2. poll rate
    for label, sampler in (("counter", counter), ("power", power)):
        gap = median_gap(sampler)
        if gap is None:
            continue
        ok = gap <= sampler.interval * 1.5
        detail = f"median poll gap {gap * 1000:.1f} ms (interval {sampler.interval * 1000:.0f} ms)"
        report.line("PASS" if ok else "FAIL", f"{label} sampler poll rate", detail)

    # 3. attribution under concurrency
    source = counter if e_counter is not None else power
    intervals = source.intervals()
    result = ledger.attribute(intervals)
    per_call = [c.energy_joules for c in result.calls.values()]
    missing = sum(e is None for e in per_call)
    summed = sum(e for e in per_call if e is not None) + result.idle_joules
    total = result.total_joules
    err = abs(summed - total) / total if total > 0 else float("inf")
    detail = (
        f"{len(per_call)} calls, attributed={result.attributed_joules:.1f} J, "
        f"idle={result.idle_joules:.1f} J, total={total:.1f} J, relative error={err:.2e}"
    )
    report.line("PASS" if err <= CONSERVATION else "FAIL", "per-call + idle == total", detail)
    report.line(
        "PASS" if per_call and missing == 0 else "FAIL",
        "every simulated call attributed",
        f"{missing} of {len(per_call)} calls got None",
    )
    if intervals and result.calls:
        at = cumulative(intervals)
        naive = sum(at(c.ended_at) - at(c.started_at) for c in result.calls.values())
        print(
            f"  per-call counter windows (reference method) would sum to {naive:.1f} J, "
            f"{naive / max(result.attributed_joules, 1e-9):.2f}x the attributed energy"
        )


def check_plugin_run(report: Report | None = None) -> None:
    """End to end: the plugin against the bundled local model with ``--jeval-energy``.

    Checks that the per-sample ``energy_joules`` of the JSONL sum to the energy the
    run attributed to calls (within 1%), and that attributed + idle equals the total
    the sampler measured.
    """
    import json
    import subprocess
    import tempfile
    import textwrap
    from pathlib import Path

    report = report or Report()
    try:
        importlib.import_module("pytest_jeval.plugin")
    except Exception as exc:
        report.line("SKIP", "plugin run", f"pytest_jeval.plugin not importable ({exc})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite.toml"
        suite.write_text(textwrap.dedent(
            """
            [defaults]
            max_tokens = 32
            [run]
            output_dir = "out"
            cache = false
            max_concurrency = 4
            [[models]]
            name = "smollm2-135m"
            engine = "local"
            [[benchmarks]]
            name = "quickstart"
            """
        ))
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "--jeval-energy", "-q", "-p", "no:cacheprovider"],
            cwd=tmp, capture_output=True, text=True,
        )
        aggregate_path = Path(tmp) / "out" / "summary.json"
        if not aggregate_path.exists():
            report.line("FAIL", "plugin run", f"no summary written (exit {proc.returncode}): {proc.stdout[-800:]}")
            return
        tel = json.loads(aggregate_path.read_text())["telemetry"]
        records = [json.loads(x) for x in (Path(tmp) / "out" / "quickstart_smollm2-135m.jsonl").read_text().splitlines()]
        energies = [r["energy_joules"] for r in records if r["energy_joules"] is not None]
        if not tel["available"] or tel["total_energy_joules"] is None:
            report.line("FAIL", "plugin run", f"telemetry unavailable: {tel['notice']}")
            return
        total, attributed, idle = tel["total_energy_joules"], tel["attributed_energy_joules"], tel["idle_energy_joules"]
        summed = sum(energies)
        detail = (f"{len(energies)}/{len(records)} samples measured, sum {summed:.2f} J, attributed {attributed:.2f} J, "
                  f"idle {idle:.2f} J, total {total:.2f} J")
        ok = attributed > 0 and abs(summed - attributed) <= 0.01 * attributed and abs(attributed + idle - total) <= 1e-6 * max(total, 1)
        report.line("PASS" if ok else "FAIL", "plugin run: per-sample energy sums to the attributed total", detail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="burn duration")
    parser.add_argument("--device", type=int, action="append", help="NVML index (repeatable)")
    parser.add_argument("--workers", type=int, default=4, help="simulated concurrent calls")
    args = parser.parse_args(argv)
    report = Report()
    check_nvml(args.seconds, args.device, args.workers, report)
    check_plugin_run(report)
    print("RESULT:", "FAIL" if report.failed else "PASS", flush=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
