"""GPU energy through the plugin, with a stand-in ``pynvml`` serving a live counter."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest

from tests.support.gsm import JevalProject
from tests.support.holds import HoldUntilConcurrent
from tests.support.nvml import FakeGpu, FakeNvml

WATTS = 300.0


class LiveNvml(FakeNvml):
    """The fake NVML on the real monotonic clock: a GPU drawing a constant 300 W."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()
        super().__init__([FakeGpu("GPU-live", lambda t: WATTS, lambda t: WATTS * t)])

    @property  # type: ignore[override]
    def now(self) -> float:
        return time.monotonic() - self._t0

    @now.setter
    def now(self, value: float) -> None:
        pass


def _energy_run(p: JevalProject, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any], Any]:
    p.server.latency = 0.2
    # the first four calls are answered together: they overlap, however slow the machine
    p.server.responder = HoldUntilConcurrent(p.script, 4)
    suite = p.suite(extra_run="max_concurrency = 4\ncache = false")
    result = p.pytester.runpytest("--jeval-config", str(suite), "--jeval-energy", *args)
    aggregate = json.loads((p.pytester.path / "out" / "summary.json").read_text())
    return p.records(), aggregate, result


def _covered(windows: list[list[float]], others: list[list[float]]) -> float:
    """Seconds of ``windows`` during which at least one of ``others`` was open too."""
    total = 0.0
    for t0, t1 in windows:
        cuts = sorted((max(t0, a), min(t1, b)) for a, b in others if a < t1 and b > t0)
        end = t0
        for a, b in cuts:
            if b > end:
                total += b - max(a, end)
                end = b
    return total


def test_energy_is_shared_among_concurrent_calls(jeval_project: JevalProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", LiveNvml())
    records, aggregate, result = _energy_run(jeval_project)
    tel = aggregate["telemetry"]
    assert tel["available"] and tel["devices"][0]["energy_method"] == "counter"
    total, attributed, idle = tel["total_energy_joules"], tel["attributed_energy_joules"], tel["idle_energy_joules"]
    assert total > 0 and attributed > 0
    assert attributed + idle == pytest.approx(total, rel=1e-6)
    measured = [r for r in records if r["energy_joules"] is not None]
    # every answered sample is measured; the errored one made no successful call
    assert {r["record_id"] for r in records if r["energy_joules"] is None} == {"gsm8k-3"}
    # conserved: per-sample energy sums to the attributed energy within 1%
    assert sum(r["energy_joules"] for r in measured) == pytest.approx(attributed, rel=0.01)
    # no sample is charged more than the full 300 W for its whole window, and a sample whose calls
    # overlapped others' for most of their time is charged a share of it
    shared = 0
    for r in measured:
        duration = sum(t1 - t0 for t0, t1 in r["call_windows"])
        assert r["energy_joules"] <= WATTS * duration * 1.05
        assert r["power_watts"] == pytest.approx(r["energy_joules"] / duration)
        others = [w for o in measured if o is not r for w in o["call_windows"]]
        if _covered(r["call_windows"], others) >= 0.9 * duration:
            assert r["energy_joules"] < WATTS * duration * 0.9, r["record_id"]
            shared += 1
    assert shared >= 3  # at least the three calls that joined the first held one
    ok = next(r for r in records if r["record_id"] == "gsm8k-0")
    assert ok["ipj"] == pytest.approx(1.0 / ok["energy_joules"]) and ok["ipw"] == pytest.approx(1.0 / ok["power_watts"])
    wrong = next(r for r in records if r["record_id"] == "gsm8k-1")
    assert wrong["ipj"] == 0.0
    s = jeval_project.summary()
    assert s["total_energy_joules"] == pytest.approx(sum(r["energy_joules"] for r in measured))
    assert s["ipj"] == pytest.approx(s["accuracy"] / s["total_energy_joules"])
    assert s["energy_stats"]["max"] == pytest.approx(max(r["energy_joules"] for r in measured))
    result.stdout.fnmatch_lines(["energy: * J measured, * J attributed to calls, * J idle"])


def test_without_nvml_fields_are_null_and_one_notice(jeval_project: JevalProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails like on a machine without the library
    records, aggregate, result = _energy_run(jeval_project)
    assert all(r[f] is None for r in records for f in ("energy_joules", "power_watts", "gpu_utilization_pct", "ipw", "ipj"))
    assert aggregate["telemetry"]["available"] is False
    notices = [line for line in result.outlines if "GPU telemetry is off" in line]
    assert len(notices) == 1 and "pynvml is not importable" in notices[0]
    result.assert_outcomes(passed=6, failed=3, errors=1)  # the run went on
