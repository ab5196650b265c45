"""GpuSampler against a scripted stand-in for ``pynvml``."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_jeval.telemetry.nvml import GpuSampler
from tests.support.nvml import FakeGpu, FakeNvml

UUIDS = [f"GPU-{c * 8}-0000-0000-0000-000000000000" for c in "abcd"]


def counter_gpu(uuid: str = UUIDS[0], **kw: Any) -> FakeGpu:
    """Counter: 5 kJ at t=0 (driver loaded earlier) plus 200 t + 10 t^2 J.

    The power reading is a flat 250 W, deliberately not the counter's
    derivative (real readings are 1 s averages), so integrating power instead
    of reading the counter gives a different answer.
    """
    return FakeGpu(uuid, lambda t: 250.0, lambda t: 5000 + 200 * t + 10 * t * t, **kw)


def power_only_gpu(uuid: str = UUIDS[1], **kw: Any) -> FakeGpu:
    """No energy counter; power 100 + 30 t W."""
    return FakeGpu(uuid, lambda t: 100 + 30 * t, None, **kw)


@pytest.fixture
def install(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeNvml]:
    def _install(*gpus: FakeGpu, **kw: Any) -> FakeNvml:
        fake = FakeNvml(gpus, **kw)
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        return fake

    return _install


def manual(fake: FakeNvml, **kw: Any) -> GpuSampler:
    """A sampler on the fake's clock, polled by hand; first sample at t=0."""
    kw.setdefault("environ", {})
    sampler = GpuSampler(clock=lambda: fake.now, **kw)
    fake.now = 0.0
    sampler.start(background=False)
    return sampler


def drive(sampler: GpuSampler, fake: FakeNvml, times: Iterable[float]) -> None:
    for t in times:
        fake.now = t
        sampler.poll_once(t)


def grid(end: float, step: float = 0.05) -> list[float]:
    return [round(k * step, 10) for k in range(1, round(end / step) + 1)]


# -- energy --------------------------------------------------------------


def test_counter_energy_equals_counter_delta(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu())
    sampler = manual(fake)
    times = [0.013, 0.071, 0.5, 0.52, 1.9, 3.0, 7.25, 10.0]  # irregular on purpose
    drive(sampler, fake, times)
    assert sampler.available and sampler.notice() is None
    assert sampler.energy_methods == {0: "counter"}
    expected = 200 * 10.0 + 10 * 100.0  # counter(10) - counter(0), joules
    assert sampler.total_energy() == pytest.approx(expected, rel=1e-12)
    intervals = sampler.intervals()
    assert [(i.t0, i.t1) for i in intervals] == list(zip([0.0, *times[:-1]], times, strict=True))
    # each interval is its own counter difference, not a neighbour's
    assert intervals[3].joules == pytest.approx(
        (200 * 0.52 + 10 * 0.52**2) - (200 * 0.5 + 10 * 0.25)
    )
    assert all(i.util_pct == 50.0 for i in intervals)


def test_power_integration_without_counter(install: Callable[..., FakeNvml]) -> None:
    fake = install(power_only_gpu())
    sampler = manual(fake)
    drive(sampler, fake, grid(10.0))
    (device,) = sampler.measured_devices
    assert device.energy_method == "power"
    assert device.fallback_reason is not None and "Not Supported" in device.fallback_reason
    # linear power: trapezoids are exact; integral of 100 + 30 t over [0, 10]
    assert sampler.total_energy() == pytest.approx(100 * 10 + 15 * 100, rel=1e-9)


def test_power_integration_of_a_curved_trace(install: Callable[..., FakeNvml]) -> None:
    gpu = FakeGpu(UUIDS[0], lambda t: 300 + 100 * math.sin(t), None)
    fake = install(gpu)
    sampler = manual(fake)
    drive(sampler, fake, grid(10.0))
    analytic = 300 * 10 + 100 * (1 - math.cos(10.0))
    # trapezoid error <= T dt^2 / 12 max|P''| = 10 * 0.0025 / 12 * 100 ~= 0.21 J;
    # mW rounding adds at most 10 s * 0.5 mW = 5 mJ
    assert sampler.total_energy() == pytest.approx(analytic, abs=0.25)


def test_mixed_devices_are_summed(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu(), power_only_gpu())
    sampler = manual(fake)
    drive(sampler, fake, grid(4.0))
    assert sampler.energy_methods == {0: "counter", 1: "power"}
    expected = (200 * 4 + 10 * 16) + (100 * 4 + 15 * 16)
    assert sampler.total_energy() == pytest.approx(expected, rel=1e-9)
    assert len(sampler.samples(0)) == len(sampler.samples(1)) == 81
    sample = sampler.samples(0)[-1]
    assert sample.t == 4.0 and sample.mem_used_bytes == 1 << 30
    assert sample.power_mw == pytest.approx(250_000)


def test_forced_methods(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu(), power_only_gpu())
    forced_power = manual(fake, energy_method="power")
    assert forced_power.energy_methods == {0: "power", 1: "power"}
    forced_counter = manual(fake, energy_method="counter")
    assert forced_counter.energy_methods == {0: "counter"}
    assert "GPU 1" in (forced_counter.notice() or "")


def test_default_interval_is_at_most_50ms() -> None:
    assert GpuSampler().interval <= 0.05
    with pytest.raises(ValueError):
        GpuSampler(interval=0)


# -- failures ------------------------------------------------------------


def test_device_lost_midway_stops_measuring_it(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu(), power_only_gpu(lost_at=2.02))
    sampler = manual(fake)
    drive(sampler, fake, grid(4.0))
    healthy, lost = sampler.measured_devices
    assert healthy.failed_at is None
    assert lost.failed_at == pytest.approx(2.05) and "GPU is lost" in (lost.error or "")
    assert sampler.available  # the other device is still measured
    assert len(sampler.samples(1)) == 41  # t = 0 .. 2.0
    # device 1's energy stops at its last good sample; nothing is invented
    expected = (200 * 4 + 10 * 16) + (100 * 2 + 15 * 4)
    assert sampler.total_energy() == pytest.approx(expected, rel=1e-9)
    notice = sampler.notice()
    assert notice is not None and "\n" not in notice
    assert "GPU 1" in notice and "GPU is lost" in notice


def test_only_device_lost_turns_telemetry_off(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu(lost_at=1.0))
    sampler = manual(fake)
    drive(sampler, fake, grid(3.0))
    assert not sampler.available
    assert sampler.intervals()[-1].t1 == pytest.approx(0.95)
    assert sampler.total_energy() == pytest.approx(200 * 0.95 + 10 * 0.95**2)
    assert not sampler.poll_once(5.0)
    assert "stopped" in (sampler.notice() or "")
    sampler.stop()
    assert fake.shutdowns == 1


def test_no_pynvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError
    sampler = GpuSampler()
    assert sampler.start() is False
    assert not sampler.available
    assert sampler.reason is not None and "pynvml" in sampler.reason
    notice = sampler.notice()
    assert notice is not None and "\n" not in notice and "off" in notice
    assert sampler.intervals() == [] and sampler.total_energy() is None
    assert not sampler.poll_once()
    sampler.stop()


def test_init_failure(install: Callable[..., FakeNvml]) -> None:
    fake = install(counter_gpu(), init_error=12)
    sampler = GpuSampler(environ={})
    assert sampler.start() is False
    assert "NVML Shared Library Not Found" in (sampler.notice() or "")
    assert fake.shutdowns == 0


def test_no_devices(install: Callable[..., FakeNvml]) -> None:
    fake = install()
    sampler = GpuSampler(environ={})
    assert sampler.start() is False
    assert "no GPU" in (sampler.notice() or "")
    assert fake.shutdowns == fake.inits == 1


class SteppedTime:
    """The sampler thread's clock and its stop event, in lock step: waiting ``t`` seconds moves the clock
    by ``t`` at once. After ``lose_at`` waits the fake's device 1 is lost; after ``stop_at`` the thread is
    told to stop. The thread then runs its real loop, with no dependence on how fast the machine is."""

    def __init__(self, fake: FakeNvml, lose_at: int, stop_at: int) -> None:
        self.fake, self.lose_at, self.stop_at = fake, lose_at, stop_at
        self.now = 0.0
        self.waits: list[float] = []
        self.stopped = False

    def perf_counter(self) -> float:
        return self.now

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None and timeout >= 0
        self.waits.append(timeout)
        self.now += timeout
        if len(self.waits) == self.lose_at:
            self.fake.gpus[1].lost_at = -1.0  # every query on device 1 fails from now on
        return self.stopped or len(self.waits) >= self.stop_at

    def set(self) -> None:
        self.stopped = True

    def is_set(self) -> bool:
        return self.stopped


def test_background_thread_polls_and_survives_a_lost_gpu(
    install: Callable[..., FakeNvml], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pytest_jeval.telemetry.nvml as nvml_module

    fake = install(counter_gpu(), power_only_gpu())
    fake.now = 0.0
    stepped = SteppedTime(fake, lose_at=10, stop_at=20)
    monkeypatch.setattr(nvml_module, "time", types.SimpleNamespace(perf_counter=stepped.perf_counter))
    sampler = GpuSampler(interval=0.005, clock=stepped.perf_counter, environ={})
    sampler._stop_event = stepped  # type: ignore[assignment]
    assert sampler.start()
    assert sampler._thread is not None
    sampler._thread.join(timeout=60)  # the thread stops itself after stop_at waits
    assert not sampler._thread.is_alive()
    sampler.stop()
    # the thread waited one interval between polls, on a fixed grid: no drift, no burst, no busy loop
    assert stepped.waits == pytest.approx([0.005] * 20)
    series = sampler.samples(0)
    assert len(series) == 21  # the first at start, one per wait until the thread stops, the last at stop()
    assert [b.t - a.t for a, b in itertools.pairwise(series)] == pytest.approx([0.005] * 20)
    # device 1 was measured until it was lost, then dropped; device 0 went on
    assert len(sampler.samples(1)) == 10
    assert sampler.measured_devices[1].failed_at == pytest.approx(10 * 0.005)
    assert fake.shutdowns == 1
    sampler.stop()  # idempotent


# -- device selection ----------------------------------------------------


def four_gpus(install: Callable[..., FakeNvml]) -> FakeNvml:
    return install(*(counter_gpu(u, name=f"Fake {k}") for k, u in enumerate(UUIDS)))


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        ("2,0", [0, 2]),
        ("3", [3]),
        (UUIDS[2], [2]),
        (UUIDS[2].upper(), [2]),  # only nvmlDeviceGetHandleByUUID resolves this spelling
        (f"1,{UUIDS[3]}", [1, 3]),
        ("GPU-cccc", [2]),  # unique prefix, as CUDA accepts
        ("dddd", [3]),  # prefix without "GPU-"
        ("1,-1,3", [1]),  # CUDA stops at the first invalid entry
        ("1,9,3", [1]),
    ],
)
def test_cuda_visible_devices(
    install: Callable[..., FakeNvml], visible: str, expected: list[int]
) -> None:
    fake = four_gpus(install)
    sampler = manual(fake, environ={"CUDA_VISIBLE_DEVICES": visible})
    assert [d.index for d in sampler.measured_devices] == expected
    assert [d.uuid for d in sampler.measured_devices] == [UUIDS[i] for i in expected]


def test_cuda_visible_devices_from_os_environ(
    install: Callable[..., FakeNvml], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = four_gpus(install)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", f"{UUIDS[1]},3")
    sampler = GpuSampler(clock=lambda: fake.now)
    assert sampler.start(background=False)
    assert [(d.index, d.name) for d in sampler.measured_devices] == [(1, "Fake 1"), (3, "Fake 3")]


@pytest.mark.parametrize("visible", ["", "-1", "GPU-ffff", "MIG-0a0b0c0d"])
def test_cuda_visible_devices_hiding_everything(
    install: Callable[..., FakeNvml], visible: str
) -> None:
    fake = four_gpus(install)
    sampler = GpuSampler(clock=lambda: fake.now, environ={"CUDA_VISIBLE_DEVICES": visible})
    assert sampler.start(background=False) is False
    notice = sampler.notice()
    assert notice is not None and "CUDA_VISIBLE_DEVICES" in notice


def test_explicit_devices_override_environment(install: Callable[..., FakeNvml]) -> None:
    fake = four_gpus(install)
    sampler = manual(fake, devices=[3, 1, 7], environ={"CUDA_VISIBLE_DEVICES": "0"})
    assert [d.index for d in sampler.measured_devices] == [1, 3]
    assert "device 7" in (sampler.notice() or "")


def test_importing_telemetry_does_not_import_pynvml() -> None:
    code = "import sys, pytest_jeval.telemetry; sys.exit('pynvml' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
