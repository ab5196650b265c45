#!/usr/bin/env python
"""Cost of the terminal-task sandbox, run by hand (not collected by pytest).

From the repository root, after ``make rootfs``::

    .venv/bin/python tests/perf/bench_terminal.py              # 30 execs of each
    .venv/bin/python tests/perf/bench_terminal.py --runs 50

Times, in one bubblewrap sandbox over the cached root filesystem: starting a sandbox
(a task's environment copied in) and stopping it; one exec of ``true`` (a fresh ``bwrap``
with its namespaces, the chown of the task tree to the run's uid and back); ``python3 -c
pass``; and one task end to end (start, setup, solve.sh, tests/test.sh, stop) for the
bundled ``make-build`` and ``git-restore-file`` tasks. Prints median and 90th percentile.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pytest_jeval.benchmarks._terminal.tasks import load_task
from pytest_jeval.benchmarks.terminal_lite import bench_terminal_lite as bench
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox.shell.providers import BubblewrapProvider
from pytest_jeval.sandbox.shell.rootfs import require_rootfs

TASKS = Path(bench.__file__).parent / "data" / "tasks"


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median and p90 of ``runs`` calls, in milliseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.9 * len(samples)))]


def whole_task(task_id: str) -> None:
    """One task as an episode runs it: start + setup, solve.sh, the checker, stop."""
    task = load_task(TASKS / task_id)
    sample = Sample(id=task.id, input=task.instruction, target="",
                    metadata={"task_dir": str(task.path), "sandbox": "bubblewrap"})
    env = bench.environment(sample, Path("."))
    try:
        env.sandbox.exec("bash -e", timeout=60, stdin=task.solution.read_text())
        assert env.check().passed, task_id
    finally:
        env.sandbox.stop()


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(f"rootfs: {require_rootfs()}")
    provider = BubblewrapProvider()
    env_dir = TASKS / "make-build" / "environment"
    rows: list[tuple[str, tuple[float, float]]] = []
    rows.append(("start + stop (make-build environment)", timed(lambda: provider.start(env_dir).stop(), args.runs)))
    box = provider.start(env_dir)
    box.exec("python3 -c 'for i in range(20000): open(f\"f{i}\", \"w\").close()'", timeout=120)
    rows.append(("exec `true` with 20,000 files in /app", timed(lambda: box.exec("true", timeout=30), args.runs)))
    box.stop()
    box = provider.start(env_dir)
    try:
        rows.append(("exec `true`", timed(lambda: box.exec("true", timeout=10), args.runs)))
        rows.append(("exec `python3 -c pass`", timed(lambda: box.exec("python3 -c pass", timeout=10), args.runs)))
    finally:
        box.stop()
    for task_id in ("make-build", "git-restore-file"):
        rows.append((f"whole task {task_id}", timed(lambda t=task_id: whole_task(t), max(3, args.runs // 3))))
    for label, (median, p90) in rows:
        print(f"{label:45s} median {median:8.1f} ms   p90 {p90:8.1f} ms")


if __name__ == "__main__":
    main()
