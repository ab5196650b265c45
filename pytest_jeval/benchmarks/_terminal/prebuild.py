"""Build the environments and verifier kits of task folders ahead of a run (``make terminalbench-envs``).

    python -m pytest_jeval.benchmarks._terminal.prebuild DIR [DIR ...]

Each DIR is a folder of task folders (Harbor or Terminal-Bench 1 layout) or one task folder.
Tasks that cannot run here are listed with the reason and skipped; a failed build is an error
(exit status 1). Everything is cached (docs/terminal.md), so a second call does nothing; a run
builds what is missing by itself, so this only moves the waiting (minutes for a new base) ahead.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pytest_jeval.benchmarks._terminal.formats import TaskError, find_tasks, load_task
from pytest_jeval.benchmarks._terminal.kit import build_kit, requirements_of
from pytest_jeval.benchmarks._terminal.runner import static_network_need
from pytest_jeval.sandbox.shell.dockerfile import DockerfileError
from pytest_jeval.sandbox.shell.environments import EnvironmentRefused, build_environment, plan_environment
from pytest_jeval.sandbox.shell.images import BuildError


def main(argv: list[str] | None = None) -> int:
    """Build what the task folders need; 0 when every runnable task's environment is built."""
    parser = argparse.ArgumentParser(prog="python -m pytest_jeval.benchmarks._terminal.prebuild",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="DIR")
    args = parser.parse_args(argv)
    failed = 0
    for folder in map(Path, args.folders):
        for path in find_tasks(folder):
            try:
                task = load_task(path)
            except TaskError as exc:
                print(f"{path.name}: not a task: {exc}")
                failed += 1
                continue
            reason = task.not_runnable or static_network_need(task)
            if reason is None and task.dockerfile is not None:
                try:
                    plan = plan_environment(task.dockerfile, task.context)
                except (DockerfileError, EnvironmentRefused) as exc:
                    reason = str(exc)
            if reason is not None:
                print(f"{task.id}: cannot run here: {reason}")
                continue
            start = time.monotonic()
            try:
                built = build_environment(plan, timeout=task.build_timeout, log=False)
                build_kit(requirements_of([p.read_text(errors="replace") for p in task.test_scripts]), log=False)
            except BuildError as exc:
                print(f"{task.id}: build failed: {exc}")
                failed += 1
                continue
            print(f"{task.id}: {'cached' if built.cached else 'built'} ({built.plan.key}, layer "
                  f"{built.layer_bytes / 2**20:.1f} MiB, {time.monotonic() - start:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
