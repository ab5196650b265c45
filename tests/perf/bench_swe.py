#!/usr/bin/env python
"""SWE-bench-format figures on the fixture repositories (tests/data/swebench), run by hand.

Not part of the test suite. From the repository root::

    .venv/bin/python tests/perf/bench_swe.py               # a fresh cache folder, removed at the end
    .venv/bin/python tests/perf/bench_swe.py --repeat 5    # measure each swefficiency workload 5 times

Printed: the seconds each environment and prepared checkout took to build (``builds.log``), the seconds
grading each swebench gold patch took (apply, install, tests), and for each swefficiency instance the
instruction counts before and after the expert patch, the expert speedup, the spread of ``--repeat``
measurements of the same checkout, and the wall-time means the workload printed natively (recorded, never
scored). Wall-clock figures depend on the machine's load; instruction counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "swebench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="jeval-swe-bench-"))
    os.chmod(cache, 0o755)
    os.environ["JEVAL_SWE_CACHE"] = str(cache)
    from pytest_jeval.benchmarks._swe.cache import builds
    from pytest_jeval.benchmarks._swe.evaluate import Checkout, apply_patch, grade_patch
    from pytest_jeval.benchmarks._swe.options import SwefficiencyOptions, SweOptions
    from pytest_jeval.benchmarks._swe.prepare import prepare
    from pytest_jeval.benchmarks.swebench import bench_swebench
    from pytest_jeval.benchmarks.swefficiency import bench_swefficiency
    from pytest_jeval.benchmarks.swefficiency.measure import helper_library, measure
    from pytest_jeval.core.benchmark import LoadContext

    try:
        options = {"repos_dir": DATA / "repos", "specs_file": DATA / "specs.json"}
        ctx = LoadContext(benchmark="swebench", subset=None, seed=0, data_dir=DATA, options=SweOptions(**options))
        print("swebench gold patches (fresh cache: the first instance of a repository builds its environment)")
        for line in (DATA / "swebench.jsonl").read_text().splitlines():
            row = json.loads(line)
            sample = bench_swebench.to_sample(row, 0, ctx)
            started = time.monotonic()
            prepared = prepare(sample.metadata)
            built = time.monotonic() - started
            graded = grade_patch(prepared, row["patch"])
            print(f"  {row['instance_id']:32} prepare {built:6.2f}s  grade {graded.seconds:5.2f}s  "
                  f"{graded.resolution}")
        ctx = LoadContext(benchmark="swefficiency", subset=None, seed=0, data_dir=DATA,
                          options=SwefficiencyOptions(**options))
        print(f"swefficiency workloads (instructions in the timed calls; {args.repeat} measurements each)")
        for line in (DATA / "swefficiency.jsonl").read_text().splitlines():
            row = json.loads(line)
            prepared = prepare(bench_swefficiency.to_sample(row, 0, ctx).metadata)
            helper = helper_library(prepared.cache)
            results = {}
            for kind in ("pre", "expert"):
                with Checkout(prepared) as checkout:
                    if kind == "expert":
                        apply_patch(checkout, row["patch"])
                    started = time.monotonic()
                    costs = [measure(checkout, row["workload"], helper, timeout=3600) for _ in range(args.repeat)]
                    seconds = (time.monotonic() - started) / args.repeat
                counts = [c.instructions for c in costs]
                results[kind] = counts[0]
                spread = max(counts) / min(counts) - 1
                walls = [c.wall_mean for c in costs if c.wall_mean is not None]
                print(f"  {row['instance_id']:32} {kind:6} {counts[0]:>12,} instr  spread {spread:.1e}  "
                      f"{seconds:5.1f}s per measurement  wall mean {min(walls) * 1000:7.2f}-{max(walls) * 1000:7.2f} ms")
            print(f"  {row['instance_id']:32} expert speedup {results['pre'] / results['expert']:.4f}")
        print("builds (seconds):")
        for entry in builds(cache):
            print(f"  {entry['kind']:12} {entry['seconds']:7.2f}  {Path(entry['path']).name}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
