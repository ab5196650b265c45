"""Background GPU sampling through NVML: energy, power, utilisation and memory.

A :class:`GpuSampler` polls every measured device at a fixed interval
(default 50 ms) from a daemon thread and keeps one time series per device.
Energy comes from the device's cumulative energy counter
(``nvmlDeviceGetTotalEnergyConsumption``, millijoules since the driver was
loaded) where the device supports it, and otherwise from trapezoidal
integration of ``nvmlDeviceGetPowerUsage`` (milliwatts).  The series is turned
into contiguous :class:`Interval` records (energy between consecutive polls,
summed over devices) that :mod:`pytest_jeval.telemetry.attribution` splits
among the model calls in flight.

The sampler never breaks a run: without ``pynvml``, without a driver, without
visible devices, or when a device starts failing, it switches itself (or that
device) off, keeps what was measured so far, and explains why in
:meth:`GpuSampler.notice`.

``pynvml`` is imported lazily inside :meth:`GpuSampler.start`, so importing
this module costs nothing and tests can install a stand-in module in
``sys.modules["pynvml"]``.  Polling can be driven by hand with
:meth:`GpuSampler.poll_once` and an injected clock.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "DEFAULT_INTERVAL_S",
    "EnergyMethod",
    "GpuSample",
    "GpuSampler",
    "Interval",
    "MeasuredDevice",
]

DEFAULT_INTERVAL_S = 0.05
"""Default polling period in seconds (20 Hz)."""

EnergyMethod = Literal["counter", "power"]
"""How a device's energy is measured: the NVML energy counter, or integrated power."""


@dataclasses.dataclass(frozen=True, slots=True)
class GpuSample:
    """One poll of one device."""

    t: float
    """Clock time of the poll (``time.perf_counter()`` unless a clock was injected)."""
    energy_mj: float | None
    """Energy counter reading in millijoules since driver load; None in power mode."""
    power_mw: float | None
    """Power draw in milliwatts; None when the device does not report it."""
    gpu_util_pct: float | None
    """Share of the last sample period in which a kernel ran (0-100)."""
    mem_used_bytes: int | None
    """Device memory in use, in bytes."""


@dataclasses.dataclass(frozen=True, slots=True)
class Interval:
    """Energy measured between two consecutive polls, summed over devices."""

    t0: float
    t1: float
    joules: float
    util_pct: float | None
    """Mean over the contributing devices of the utilisation read at ``t1``
    (NVML reports utilisation over the period that ends at the read)."""


@dataclasses.dataclass(frozen=True)
class MeasuredDevice:
    """A device the sampler measured, and how."""

    index: int
    """NVML (physical, PCI-bus ordered) index."""
    name: str
    uuid: str
    energy_method: EnergyMethod
    fallback_reason: str | None = None
    """Why the energy counter was not used (power mode chosen automatically)."""
    failed_at: float | None = None
    """Clock time of the poll at which the device started failing; None if it never did."""
    error: str | None = None
    """The NVML error that stopped the device being measured."""


_Clock = Callable[[], float]


def _text(value: Any) -> str:
    """NVML strings arrive as ``str`` or ``bytes`` depending on the pynvml version."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _describe(exc: BaseException) -> str:
    """A short description of an NVML (or other) error."""
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text}" if text and text != name else name


class _Device:
    """Mutable per-device state owned by the sampler."""

    def __init__(self, index: int, handle: Any, name: str, uuid: str) -> None:
        self.index = index
        self.handle = handle
        self.name = name
        self.uuid = uuid
        self.method: EnergyMethod = "counter"
        self.fallback_reason: str | None = None
        self.has_power = False
        self.has_util = False
        self.has_mem = False
        self.series: list[GpuSample] = []
        self.failed_at: float | None = None
        self.error: str | None = None

    @property
    def alive(self) -> bool:
        return self.failed_at is None

    def public(self) -> MeasuredDevice:
        return MeasuredDevice(
            index=self.index,
            name=self.name,
            uuid=self.uuid,
            energy_method=self.method,
            fallback_reason=self.fallback_reason,
            failed_at=self.failed_at,
            error=self.error,
        )

    def label(self) -> str:
        return f"GPU {self.index} ({self.name})" if self.name else f"GPU {self.index}"


class GpuSampler:
    """Poll NVML in a background thread and keep a per-device time series.

    Parameters
    ----------
    devices:
        NVML (physical) device indices to measure.  ``None`` (the default)
        measures every device visible to this process: all devices, or those
        named by ``CUDA_VISIBLE_DEVICES`` (indices or GPU UUIDs).
    interval:
        Polling period in seconds; default 0.05.
    clock:
        Source of sample timestamps; default ``time.perf_counter``, the clock
        model-call timestamps use.  The thread's own scheduling always uses
        real time.
    energy_method:
        ``"auto"`` (counter where supported, else power integration),
        ``"counter"`` (only devices with the counter are measured) or
        ``"power"`` (always integrate power).
    environ:
        Where to read ``CUDA_VISIBLE_DEVICES``; default ``os.environ``.
    """

    def __init__(
        self,
        devices: Sequence[int] | None = None,
        interval: float = DEFAULT_INTERVAL_S,
        *,
        clock: _Clock = time.perf_counter,
        energy_method: Literal["auto", "counter", "power"] = "auto",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval!r}")
        if energy_method not in ("auto", "counter", "power"):
            raise ValueError(f"energy_method must be auto, counter or power, got {energy_method!r}")
        self.interval = float(interval)
        self._requested = None if devices is None else [int(i) for i in devices]
        self._clock = clock
        self._energy_method = energy_method
        self._environ = os.environ if environ is None else environ
        self._nvml: Any = None
        self._devices: list[_Device] = []
        self._excluded: dict[str, str] = {}
        self._poll_times: list[float] = []
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._stopped = False
        self.available = False
        """True once started with at least one device measured, until every device has failed."""
        self.reason: str | None = "not started"
        """Why telemetry is off (or partly off); None when everything selected is measured."""

    # -- lifecycle -------------------------------------------------------

    def start(self, *, background: bool = True) -> bool:
        """Initialise NVML, choose and probe devices, take the first sample.

        With ``background=True`` a daemon thread then polls every
        ``interval`` seconds until :meth:`stop`; with ``False`` the caller
        drives :meth:`poll_once`.  Returns :attr:`available`; never raises
        for NVML problems.
        """
        if self._started:
            raise RuntimeError("GpuSampler.start() called twice")
        self._started = True
        try:
            nvml = importlib.import_module("pynvml")
        except Exception as exc:  # ImportError, or a broken install
            return self._off(f"pynvml is not importable ({_describe(exc)})")
        try:
            nvml.nvmlInit()
        except Exception as exc:
            return self._off(f"NVML could not be initialised ({_describe(exc)})")
        self._nvml = nvml
        try:
            selected = self._select_devices(nvml)
            for index, handle in selected:
                device = self._probe(nvml, index, handle)
                if device is not None:
                    self._devices.append(device)
        except Exception as exc:
            self._devices = []
            self._shutdown()
            return self._off(f"NVML device discovery failed ({_describe(exc)})")
        if not self._devices:
            self._shutdown()
            detail = "; ".join(f"{k}: {v}" for k, v in self._excluded.items())
            return self._off("no GPU could be measured" + (f" ({detail})" if detail else ""))
        self.available = True
        self._update_reason()
        self.poll_once()
        if background:
            self._thread = threading.Thread(target=self._run, name="jeval-gpu-sampler", daemon=True)
            self._thread.start()
        return self.available

    def stop(self) -> None:
        """Stop the thread, take a final sample and shut NVML down.  Idempotent."""
        if self._stopped or not self._started:
            self._stopped = True
            return
        self._stopped = True
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._nvml is not None:
            self.poll_once()
            self._shutdown()

    def __enter__(self) -> GpuSampler:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- polling ---------------------------------------------------------

    def poll_once(self, t: float | None = None) -> bool:
        """Sample every live device once at time ``t`` (default: the clock).

        Returns False, sampling nothing, when no device is live or ``t`` is not
        later than the previous poll.  A device whose query raises stops being
        measured from this poll on; its earlier samples are kept.
        """
        if self._nvml is None:
            return False
        nvml = self._nvml
        with self._lock:
            live = [d for d in self._devices if d.alive]
            if not live:
                return False
            now = self._clock() if t is None else float(t)
            if self._poll_times and now <= self._poll_times[-1]:
                return False
            self._poll_times.append(now)
            for device in live:
                try:
                    sample = self._read(nvml, device, now)
                except Exception as exc:
                    device.failed_at = now
                    device.error = _describe(exc)
                    continue
                device.series.append(sample)
            if not any(d.alive for d in self._devices):
                self.available = False
            self._update_reason()
            return True

    @staticmethod
    def _read(nvml: Any, device: _Device, t: float) -> GpuSample:
        h = device.handle
        energy = (
            float(nvml.nvmlDeviceGetTotalEnergyConsumption(h))
            if device.method == "counter"
            else None
        )
        power = float(nvml.nvmlDeviceGetPowerUsage(h)) if device.has_power else None
        util = float(nvml.nvmlDeviceGetUtilizationRates(h).gpu) if device.has_util else None
        mem = int(nvml.nvmlDeviceGetMemoryInfo(h).used) if device.has_mem else None
        return GpuSample(t, energy, power, util, mem)

    def _run(self) -> None:
        """Thread body: poll on a fixed real-time grid until stopped."""
        deadline = time.perf_counter() + self.interval
        while not self._stop_event.wait(max(0.0, deadline - time.perf_counter())):
            try:
                self.poll_once()
            except Exception as exc:  # a bug here must not kill the run
                with self._lock:
                    for device in self._devices:
                        if device.alive:
                            device.failed_at = self._poll_times[-1] if self._poll_times else 0.0
                            device.error = f"sampler error: {_describe(exc)}"
                    self.available = False
                    self._update_reason()
                return
            if not self.available:
                return
            deadline += self.interval
            now = time.perf_counter()
            if deadline < now:  # fell behind: skip missed ticks, do not burst
                deadline = now

    # -- device selection and probing -----------------------------------

    def _select_devices(self, nvml: Any) -> list[tuple[int, Any]]:
        count = int(nvml.nvmlDeviceGetCount())
        if count <= 0:
            self._excluded["NVML"] = "the driver reports no devices"
            return []
        if self._requested is not None:
            chosen = []
            for index in dict.fromkeys(self._requested):
                if 0 <= index < count:
                    chosen.append(index)
                else:
                    self._excluded[f"device {index}"] = f"no such device (count is {count})"
            return [(i, nvml.nvmlDeviceGetHandleByIndex(i)) for i in sorted(chosen)]
        visible = self._environ.get("CUDA_VISIBLE_DEVICES")
        if visible is None:
            return [(i, nvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
        return sorted(self._parse_visible(nvml, visible, count), key=lambda pair: pair[0])

    def _parse_visible(self, nvml: Any, visible: str, count: int) -> list[tuple[int, Any]]:
        """Resolve ``CUDA_VISIBLE_DEVICES`` like CUDA does: stop at the first invalid entry.

        Entries are device indices or GPU UUIDs.  A UUID is matched against
        ``nvmlDeviceGetUUID`` of every device, then looked up with
        ``nvmlDeviceGetHandleByUUID``; failing both, a unique prefix of a
        device's UUID (``GPU-`` may be omitted) is accepted, as CUDA does.
        MIG instances are not measurable: NVML reports neither power nor
        energy per instance.

        Indices are read as NVML indices, which follow PCI bus order.  CUDA
        numbers devices fastest-first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``;
        on machines with mixed GPU models use UUIDs or set that variable.
        """
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        uuids: list[str] = []
        for handle in handles:
            try:
                uuids.append(_text(nvml.nvmlDeviceGetUUID(handle)))
            except Exception:
                uuids.append("")
        chosen: list[int] = []
        for raw in visible.split(","):
            entry = raw.strip()
            if not entry:
                break
            index = self._resolve_entry(nvml, entry, uuids, count)
            if index is None:
                break
            if index not in chosen:
                chosen.append(index)
        if not chosen:
            self._excluded["CUDA_VISIBLE_DEVICES"] = f"{visible!r} names no measurable GPU"
        return [(i, handles[i]) for i in chosen]

    def _resolve_entry(self, nvml: Any, entry: str, uuids: list[str], count: int) -> int | None:
        key = f"CUDA_VISIBLE_DEVICES entry {entry!r}"
        if entry.lstrip("-").isdigit():
            index = int(entry)
            if 0 <= index < count:
                return index
            self._excluded[key] = "not a valid device index; later entries ignored"
            return None
        if entry.upper().startswith("MIG-"):
            self._excluded[key] = "MIG instance: NVML reports no per-instance power or energy"
            return None
        if entry in uuids:
            return uuids.index(entry)
        try:
            canonical = _text(nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByUUID(entry)))
        except Exception:
            canonical = ""
        if canonical and canonical in uuids:
            return uuids.index(canonical)
        wanted = entry if entry.startswith("GPU-") else "GPU-" + entry
        matches = [i for i, u in enumerate(uuids) if u and u.startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        why = "ambiguous UUID prefix" if matches else "no GPU has this UUID"
        self._excluded[key] = f"{why}; later entries ignored"
        return None

    def _probe(self, nvml: Any, index: int, handle: Any) -> _Device | None:
        """Find out once what the device supports; None when it cannot be measured."""
        try:
            name = _text(nvml.nvmlDeviceGetName(handle))
        except Exception:
            name = ""
        try:
            uuid = _text(nvml.nvmlDeviceGetUUID(handle))
        except Exception:
            uuid = ""
        device = _Device(index, handle, name, uuid)
        counter_error: str | None = None
        power_error = ""
        if self._energy_method == "power":
            counter_error = "power integration requested"
        else:
            try:
                nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
            except Exception as exc:
                counter_error = f"energy counter unavailable ({_describe(exc)})"
        try:
            nvml.nvmlDeviceGetPowerUsage(handle)
            device.has_power = True
        except Exception as exc:
            power_error = _describe(exc)
        if counter_error is None:
            device.method = "counter"
        elif self._energy_method == "counter":
            self._excluded[device.label()] = counter_error
            return None
        elif device.has_power:
            device.method = "power"
            device.fallback_reason = counter_error
        else:
            self._excluded[device.label()] = f"{counter_error}; power unavailable ({power_error})"
            return None
        try:
            _ = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
            device.has_util = True
        except Exception:
            pass
        try:
            _ = nvml.nvmlDeviceGetMemoryInfo(handle).used
            device.has_mem = True
        except Exception:
            pass
        return device

    def _shutdown(self) -> None:
        nvml, self._nvml = self._nvml, None
        if nvml is not None:
            try:
                nvml.nvmlShutdown()
            except Exception:
                pass

    # -- status ----------------------------------------------------------

    def _off(self, reason: str) -> bool:
        self.available = False
        self.reason = reason
        return False

    def _update_reason(self) -> None:
        problems = [f"{k} not measured: {v}" for k, v in self._excluded.items()]
        for d in self._devices:
            if not d.alive:
                problems.append(
                    f"{d.label()} stopped being measured at t={d.failed_at:.3f} ({d.error});"
                    " its energy after that point is not counted"
                )
        if not self.available and self._devices:
            problems.insert(0, "every measured GPU failed")
        self.reason = "; ".join(problems) or None

    def notice(self) -> str | None:
        """One line for the user when telemetry is off or incomplete, else None.

        Call it after :meth:`stop` for the final word: devices can fail midway.
        """
        if not self._started:
            return "GPU telemetry: not started."
        if not self.available and not self._devices:
            return f"GPU telemetry is off: {self.reason}. Energy and power fields will be null."
        if not self.available:
            return f"GPU telemetry stopped during the run: {self.reason}."
        if self.reason:
            return f"GPU telemetry is incomplete: {self.reason}."
        return None

    @property
    def measured_devices(self) -> tuple[MeasuredDevice, ...]:
        """Every device that was measured (including ones that failed later), in NVML order."""
        with self._lock:
            return tuple(d.public() for d in self._devices)

    @property
    def energy_methods(self) -> dict[int, EnergyMethod]:
        """Energy method per measured device index."""
        return {d.index: d.method for d in self._devices}

    # -- results ---------------------------------------------------------

    def samples(self, index: int) -> list[GpuSample]:
        """The time series of one measured device (a copy)."""
        with self._lock:
            for d in self._devices:
                if d.index == index:
                    return list(d.series)
        raise KeyError(f"device {index} is not measured")

    def intervals(self) -> list[Interval]:
        """Energy between consecutive polls, summed over the devices live at both ends.

        Counter devices contribute the counter difference (a negative one, from
        a driver reload, contributes nothing); power devices contribute the
        trapezoid ``(P0 + P1) / 2 * (t1 - t0)``.  A poll pair to which no device
        contributes yields no interval, so the list may have gaps.
        """
        with self._lock:
            times = list(self._poll_times)
            series = [list(d.series) for d in self._devices]
            methods = [d.method for d in self._devices]
        out: list[Interval] = []
        for k in range(len(times) - 1):
            t0, t1 = times[k], times[k + 1]
            joules = 0.0
            utils: list[float] = []
            contributed = False
            for s, method in zip(series, methods, strict=True):
                if len(s) <= k + 1:
                    continue
                a, b = s[k], s[k + 1]
                if method == "counter":
                    assert a.energy_mj is not None and b.energy_mj is not None
                    delta = b.energy_mj - a.energy_mj
                    joules += max(delta, 0.0) / 1000.0
                else:
                    assert a.power_mw is not None and b.power_mw is not None
                    joules += (a.power_mw + b.power_mw) / 2.0 / 1000.0 * (t1 - t0)
                contributed = True
                if b.gpu_util_pct is not None:
                    utils.append(b.gpu_util_pct)
            if contributed:
                util = sum(utils) / len(utils) if utils else None
                out.append(Interval(t0, t1, joules, util))
        return out

    def total_energy(self) -> float | None:
        """Joules over all intervals; None when nothing was measured."""
        intervals = self.intervals()
        if not intervals:
            return None
        return sum(i.joules for i in intervals)
