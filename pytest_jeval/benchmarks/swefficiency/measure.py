"""swefficiency's cost measure: instructions executed by the workload's timed calls, under callgrind.

Upstream times a workload script (``timeit.repeat(workload, number=..., repeat=..., setup=setup)``, then
``Mean:`` and ``Std Dev:`` printed) in a pinned container and takes speedup = mean before / mean after. On a
shared two-core machine wall time varies by tens of percent, so the score here uses a deterministic cost:
the instructions (callgrind's ``Ir``) executed inside the timed part of every ``timeit`` call - exactly the
calls upstream times, summed over the repeats - with ``PYTHONHASHSEED=0``. A small runner
(:data:`RUNNER`) executes the workload script and gives each ``timeit.Timer`` a timer that switches
callgrind's instrumentation on when timing starts and off when it stops (``CALLGRIND_START_INSTRUMENTATION``
and ``..._STOP_...``, from a tiny library compiled once with the valgrind headers, :func:`helper_library`);
setup, imports and the interpreter's start are not counted (and run several times faster, uninstrumented).
A workload that never calls ``timeit`` is counted whole (``scope:
process``). The same code measured again gives the same count to within :data:`REPEAT_PRECISION`
(memory alignment moves a few hundred instructions); speedup ratios are stated to :data:`PRECISION`.
Wall time (the script run natively, upstream's mean) is recorded and never scored.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.cache import build_once, digest
from pytest_jeval.benchmarks._swe.evaluate import Checkout
from pytest_jeval.benchmarks._swe.sandboxed import JEVAL_DIR

__all__ = ["COST_MEASURE", "PRECISION", "REPEAT_PRECISION", "Cost", "MeasureError", "MeasureUnavailable",
           "helper_library",
           "measure", "parse_wall"]

PRECISION = 1e-3
"""Relative precision stated for speedups and speedup ratios."""
REPEAT_PRECISION = 1e-4
"""Relative spread of one workload's instruction count measured again."""
COST_MEASURE = ("instructions executed in the workload's timed calls (callgrind Ir, summed over timeit's repeats; "
                "PYTHONHASHSEED=0); wall time recorded, never scored")
HELPER_SOURCE = """#include <valgrind/callgrind.h>
void jeval_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void jeval_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""
RUNNER = '''"""Run a workload script, counting only the timed part of its timeit calls (pytest-jeval's swefficiency)."""
import ctypes
import runpy
import sys
import time
import timeit

library, script, mode = sys.argv[1], sys.argv[2], sys.argv[3]
helper = ctypes.CDLL(library)
state = {"on": False, "regions": 0}
original = timeit.Timer.timeit


def timer():
    if not state["on"]:
        now = time.perf_counter()
        state["on"] = True
        state["regions"] += 1
        helper.jeval_start()
        return now
    helper.jeval_stop()
    state["on"] = False
    return time.perf_counter()


def timed(self, number=timeit.default_number):
    self.timer = timer
    return original(self, number)


if mode == "timed":
    timeit.Timer.timeit = timed
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    print(f"JEVAL_REGIONS {state['regions']}", file=sys.stderr)
'''
NO_PYC = {"PYTHONDONTWRITEBYTECODE": "1"}
"""Measuring leaves the checkout as it found it (no bytecode files), so later runs start from the same state."""
_COST = re.compile(r"^JEVAL_COST totals: (\d+)", re.M)
_REGIONS = re.compile(r"^JEVAL_REGIONS (\d+)", re.M)


class MeasureError(RuntimeError):
    """The workload could not be measured (it failed or timed out); the message holds its output."""


class MeasureUnavailable(RuntimeError):
    """valgrind or the helper cannot be had here (the message says what to install)."""


@dataclasses.dataclass(frozen=True)
class Cost:
    """One measurement of a workload."""

    instructions: int
    scope: str
    """``timed`` (the timeit calls) or ``process`` (the whole script)."""
    regions: int
    wall_mean: float | None
    wall_std: float | None
    wall_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON builtins."""
        return dataclasses.asdict(self)


def helper_library(cache: Path) -> Path:
    """The compiled helper library in the cache (built once with ``cc`` and valgrind's headers)."""
    if shutil.which("valgrind") is None:
        raise MeasureUnavailable("swefficiency measures with valgrind's callgrind: make valgrind "
                                 "(apt-get install -y valgrind)")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise MeasureUnavailable("swefficiency compiles a small valgrind helper: install a C compiler (apt-get "
                                 "install -y gcc)")
    version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    final = cache / "tools" / f"callgrind-regions-{digest(HELPER_SOURCE, version)}"

    def build(folder: Path) -> dict[str, Any]:
        (folder / "regions.c").write_text(HELPER_SOURCE)
        done = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(folder / "libjevalregions.so"),
                               str(folder / "regions.c")], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise MeasureUnavailable(f"the callgrind helper does not compile (valgrind's headers come with the "
                                     f"valgrind package: make valgrind): {done.stderr.strip()[-1500:]}")
        return {"valgrind": version}

    build_once(final, build, kind="tool", root=cache)
    return final / "libjevalregions.so"


def parse_wall(output: str) -> tuple[float | None, float | None]:
    """Upstream's reading of a workload's output: the numbers after ``Mean:`` and ``Std Dev:``."""
    found = re.findall(r"(?:Mean|Std\s*Dev):\s*([\S]+)", output)
    try:
        return (float(found[0]), float(found[1])) if len(found) >= 2 else (None, None)
    except ValueError:
        return None, None


def _callgrind(checkout: Checkout, helper: Path, mode: str, prefix: str, timeout: float) -> tuple[int | None, int, str]:
    runner, workload = f"{JEVAL_DIR}/measure.py", f"{JEVAL_DIR}/workload.py"
    instrument = "no" if mode == "timed" else "yes"
    script = (f"exec 2>&1\n{prefix}"
              f"PYTHONHASHSEED=0 valgrind --tool=callgrind --instr-atstart={instrument} "
              f"--callgrind-out-file=/tmp/jeval.callgrind --log-file=/tmp/jeval.valgrind "
              f"python -B {runner} {helper} {workload} {mode}\n"
              "echo \"JEVAL_EXIT $?\"\n"
              "grep -h '^totals:' /tmp/jeval.callgrind | tail -n 1 | sed 's/^/JEVAL_COST /'\n")
    done = checkout.run(script, timeout=timeout, max_output=1 << 20, ro_paths=(str(helper.parent),), extra_env=NO_PYC)
    out = done.stdout
    if done.status == "timeout":
        raise MeasureError(f"the workload under callgrind ran past {timeout:g}s")
    costs, regions = _COST.findall(out), _REGIONS.findall(out)
    return (int(costs[-1]) if costs else None), (int(regions[-1]) if regions else 0), out


def measure(checkout: Checkout, workload: str, helper: Path, *, prefix: str = "", timeout: float) -> Cost:
    """Measure ``workload`` in the checkout (its recipe's ``prefix`` commands first): the instruction count,
    and the wall time of one native run."""
    checkout.write(f"{JEVAL_DIR}/measure.py", RUNNER)
    checkout.write(f"{JEVAL_DIR}/workload.py", workload)
    count, regions, out = _callgrind(checkout, helper, "timed", prefix, timeout)
    scope = "timed"
    if count is not None and regions == 0:  # no timeit call: the whole script is the cost
        count, regions, out = _callgrind(checkout, helper, "process", prefix, timeout)
        scope = "process"
    if count is None or "JEVAL_EXIT 0" not in out:
        raise MeasureError(f"the workload failed under callgrind:\n{out.strip()[-2000:]}")
    if count <= 0:
        raise MeasureError(f"callgrind counted no instructions:\n{out.strip()[-2000:]}")
    native = checkout.run(f"exec 2>&1\n{prefix}python -B {JEVAL_DIR}/workload.py\n", timeout=timeout, extra_env=NO_PYC)
    mean, std = parse_wall(native.stdout)
    error = None if native.ok and mean is not None else \
        f"the native run printed no Mean/Std Dev: {native.stdout[-500:]}"
    return Cost(count, scope, regions, mean, std, error)
