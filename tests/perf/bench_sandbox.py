#!/usr/bin/env python
"""Start-up cost of one sandboxed run, per isolation plan, run by hand.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    .venv/bin/python tests/perf/bench_sandbox.py              # 20 runs of each kind per plan
    .venv/bin/python tests/perf/bench_sandbox.py --runs 50

For every plan that works on this machine (probed, strongest first) it times, one run
at a time, (a) ``run_python("pass")``: a plain program (one interpreter), and (b)
``check_humaneval`` on a one-line function with one assert: the trusted harness plus
the callee (two interpreters and the pipe protocol). It prints the median and the
90th percentile wall time per run in milliseconds, as measured by the runner around
the whole call (run directory, uid, launch, wait, clean-up).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from pytest_jeval.sandbox import check_humaneval, run_python
from pytest_jeval.sandbox import plans as _isolation

PROMPT = 'def add(a, b):\n    """The sum."""\n'
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n"


def _time(fn: object, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1000)
        if result.status != "ok":
            raise SystemExit(f"a run failed: {result}")
    return out


def _fmt(ms: list[float]) -> str:
    ordered = sorted(ms)
    p90 = ordered[max(0, round(0.9 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):7.1f} ms   p90 {p90:7.1f} ms"


def main() -> None:
    """Probe every plan, then time both kinds of run under each."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="runs of each kind per plan (default 20)")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}   runs per figure: {args.runs}")
    for plan in _isolation.candidate_plans():
        os.environ["JEVAL_SANDBOX_ISOLATION"] = plan.name
        _isolation.reset_plan()
        if _isolation.current_plan().name != plan.name:
            print(f"{plan.name:24s} not available here")
            continue
        run_python("pass", timeout=10)  # warm the page cache
        plain = _time(lambda: run_python("pass", timeout=10), args.runs)
        checked = _time(lambda: check_humaneval(PROMPT, "    return a + b\n", TEST, "add", timeout=10), args.runs)
        print(f"{plan.name:24s} run_python   {_fmt(plain)}")
        print(f"{'':24s} humaneval    {_fmt(checked)}")
    os.environ.pop("JEVAL_SANDBOX_ISOLATION", None)
    _isolation.reset_plan()


if __name__ == "__main__":
    main()
