"""A small scripted stand-in for ``pynvml``: GPUs whose energy counter and power are functions of time."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

# -- a small fake pynvml -------------------------------------------------


class NVMLError(Exception):
    """Mimics pynvml.NVMLError: carries an error code, prints its name."""

    _names: ClassVar[dict[int, str]] = {3: "Not Supported", 15: "GPU is lost", 12: "NVML Shared Library Not Found"}

    def __init__(self, value: int = 999) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return self._names.get(self.value, "Unknown Error")


class NVMLError_NotSupported(NVMLError):
    def __init__(self) -> None:
        super().__init__(3)


class NVMLError_GpuIsLost(NVMLError):
    def __init__(self) -> None:
        super().__init__(15)


class FakeGpu:
    """One scripted device.  ``power_w(t)`` in watts; ``energy_j(t)`` cumulative joules or None."""

    def __init__(
        self,
        uuid: str,
        power_w: Callable[[float], float],
        energy_j: Callable[[float], float] | None = None,
        *,
        name: str = "Fake H200",
        util: Callable[[float], float] = lambda t: 50.0,
        lost_at: float | None = None,
    ) -> None:
        self.uuid = uuid
        self.name = name
        self.power_w = power_w
        self.energy_j = energy_j
        self.util = util
        self.lost_at = lost_at


class FakeNvml(types.ModuleType):
    """A module object with the handful of pynvml functions the sampler calls."""

    def __init__(self, gpus: Iterable[FakeGpu], *, init_error: int | None = None) -> None:
        super().__init__("pynvml")
        self.gpus = list(gpus)
        self.now = 0.0
        self.init_error = init_error
        self.inits = 0
        self.shutdowns = 0
        self.NVMLError = NVMLError
        self.NVMLError_NotSupported = NVMLError_NotSupported
        self.NVMLError_GpuIsLost = NVMLError_GpuIsLost

    def _check(self, gpu: FakeGpu) -> FakeGpu:
        if gpu.lost_at is not None and self.now >= gpu.lost_at:
            raise NVMLError_GpuIsLost()
        return gpu

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise NVMLError(self.init_error)
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self.gpus[index]

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> FakeGpu:
        for gpu in self.gpus:
            if gpu.uuid.lower() == uuid.lower():
                return gpu
        raise NVMLError(6)

    def nvmlDeviceGetUUID(self, gpu: FakeGpu) -> bytes:
        return gpu.uuid.encode()  # old pynvml versions return bytes

    def nvmlDeviceGetName(self, gpu: FakeGpu) -> str:
        return gpu.name

    def nvmlDeviceGetTotalEnergyConsumption(self, gpu: FakeGpu) -> int:
        self._check(gpu)
        if gpu.energy_j is None:
            raise NVMLError_NotSupported()
        return round(gpu.energy_j(self.now) * 1000)

    def nvmlDeviceGetPowerUsage(self, gpu: FakeGpu) -> int:
        return round(self._check(gpu).power_w(self.now) * 1000)

    def nvmlDeviceGetUtilizationRates(self, gpu: FakeGpu) -> Any:
        return types.SimpleNamespace(gpu=self._check(gpu).util(self.now), memory=0)

    def nvmlDeviceGetMemoryInfo(self, gpu: FakeGpu) -> Any:
        self._check(gpu)
        return types.SimpleNamespace(used=1 << 30, total=1 << 34, free=(1 << 34) - (1 << 30))
