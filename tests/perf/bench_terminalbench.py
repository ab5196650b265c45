#!/usr/bin/env python
"""Cost of Terminal-Bench environments without Docker, run by hand (not collected by pytest).

From the repository root (as root, after ``make terminalbench-envs``)::

    .venv/bin/python tests/perf/bench_terminalbench.py             # cached builds, start-up, disk, oracle run
    .venv/bin/python tests/perf/bench_terminalbench.py --cold      # also a cold build in an empty cache

Prints, for the test task sets (tests/data/terminalbench/harbor and tb1):

- build time per task: cold (``--cold``: an empty cache folder, so both Debian bases, each layer and the
  verifier kit are built; needs the package mirrors) and cached (the same calls again);
- disk per task: its own layer, and the shared base it stands on; the total for the set against what
  one full root filesystem per task would take;
- start-up per task: a new sandbox (its namespaces and overlay) and its first command (median, p90);
- the whole oracle run over both sets (``jeval tasks check``: oracle and nop on every task, pytest
  ``-n 2``), wall-clock seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_jeval.benchmarks._terminal.formats import find_tasks, load_task
from pytest_jeval.benchmarks._terminal.kit import build_kit, requirements_of
from pytest_jeval.benchmarks._terminal.runner import static_network_need
from pytest_jeval.sandbox.shell.environments import BuiltEnvironment, build_environment, plan_environment
from pytest_jeval.sandbox.shell.image_sandbox import ImageSandbox
from pytest_jeval.sandbox.shell.images import tree_bytes

REPO = Path(__file__).resolve().parents[2]
SETS = [REPO / "tests" / "data" / "terminalbench" / "harbor", REPO / "tests" / "data" / "terminalbench" / "tb1"]


def runnable() -> list[Path]:
    """The task folders of the sets that run here."""
    out = []
    for folder in SETS:
        for path in find_tasks(folder):
            task = load_task(path)
            if task.not_runnable or static_network_need(task) or task.dockerfile is None:
                continue
            try:
                plan_environment(task.dockerfile, task.context)
            except Exception:
                continue
            out.append(path)
    return out


def build_all(paths: list[Path]) -> tuple[dict[str, BuiltEnvironment], dict[str, float]]:
    """Every environment and kit: the built environments and the seconds each call took."""
    envs, seconds = {}, {}
    for path in paths:
        task = load_task(path)
        assert task.dockerfile is not None
        start = time.perf_counter()
        envs[task.id] = build_environment(plan_environment(task.dockerfile, task.context), log=False)
        build_kit(requirements_of([p.read_text() for p in task.test_scripts]), log=False)
        seconds[task.id] = time.perf_counter() - start
    return envs, seconds


def startup(env: BuiltEnvironment, runs: int) -> tuple[float, float]:
    """Median and p90 ms of a new sandbox and its first command, then its stop."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        box = ImageSandbox(env.lowers, env=dict(env.env), workdir=env.workdir, uid=env.uid, gid=env.gid)
        box.exec("true", timeout=60)
        samples.append((time.perf_counter() - start) * 1000)
        box.stop()
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.9 * len(samples)))]


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cold", action="store_true", help="also build everything once in an empty cache folder")
    parser.add_argument("--runs", type=int, default=10, help="start-ups per task (default 10)")
    args = parser.parse_args()
    paths = runnable()
    print(f"{len(paths)} runnable tasks: {', '.join(p.name for p in paths)}")
    if args.cold:
        with tempfile.TemporaryDirectory(prefix="jeval-cold-") as tmp:
            os.environ["JEVAL_ROOTFS_DIR"] = tmp
            start = time.perf_counter()
            _envs, cold = build_all(paths)
            total = time.perf_counter() - start
            print(f"cold build (empty cache: 2 bases, {len(paths)} layers, the kits): {total:.1f} s in all")
            for name, seconds in cold.items():
                print(f"  {name:22} {seconds:7.1f} s")
            subprocess.run(["rm", "-rf", tmp], check=False)
            del os.environ["JEVAL_ROOTFS_DIR"]
    envs, cached = build_all(paths)
    print("per task: cached build call, the layer's own first build, its layer on disk, start-up (median / p90)")
    bases: dict[Path, int] = {}
    for name, env in envs.items():
        median, p90 = startup(env, args.runs)
        bases[env.base_root] = env.base_bytes
        print(f"  {name:22} {cached[name] * 1000:7.1f} ms  {env.first_build_seconds:6.1f} s  "
              f"{env.layer_bytes / 2**20:6.2f} MiB  {median:6.0f} / {p90:.0f} ms")
    layers = sum(tree_bytes(env.layer) for env in envs.values())
    shared = sum(bases.values())
    naive = sum(env.base_bytes + env.layer_bytes for env in envs.values())
    print(f"disk: {len(bases)} shared base(s) {shared / 2**20:.0f} MiB + layers {layers / 2**20:.1f} MiB = "
          f"{(shared + layers) / 2**20:.0f} MiB for {len(envs)} tasks (a root filesystem each: "
          f"{naive / 2**20:.0f} MiB)")
    kit = build_kit(["pytest==8.4.1"], log=False)
    print(f"the verifier runtime (Debian trixie python3, shared by every task): {tree_bytes(kit.runtime) / 2**20:.0f} MiB;"
          f" a kit: {tree_bytes(kit.path) / 2**20:.1f} MiB")
    start = time.perf_counter()
    for folder in SETS:
        done = subprocess.run([sys.executable, "-m", "pytest_jeval", "tasks", "check", str(folder), "--", "-n", "2"],
                              capture_output=True, text=True, check=False)
        print(f"  {folder.name}: {done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr}")
    print(f"whole oracle+nop run over both sets (jeval tasks check, -n 2): {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
