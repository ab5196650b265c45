"""The Terminal-Bench task sets of the tests and their environments: used when cached, built when missing,
never skipped.

``make terminalbench-envs`` (run by ``make test``) builds them ahead; without it the first test that
needs one builds it (minutes for a new base). Where image sandboxes cannot run (no root, no
bubblewrap, no mmdebstrap or package mirror) the tests fail with the reason instead of passing quietly.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_jeval.benchmarks._terminal.formats import find_tasks, load_task
from pytest_jeval.benchmarks._terminal.kit import build_kit, requirements_of
from pytest_jeval.sandbox.shell.environments import BuiltEnvironment, build_environment, plan_environment
from pytest_jeval.sandbox.shell.image_sandbox import check_image_sandboxes
from pytest_jeval.sandbox.shell.images import BuildError
from pytest_jeval.sandbox.shell.providers import ProviderUnavailable

TB_DATA = Path(__file__).resolve().parents[1] / "data" / "terminalbench"
HARBOR = TB_DATA / "harbor"
TB1 = TB_DATA / "tb1"
RUNNABLE_HARBOR = ("count-lines", "fix-median", "jq-report")
NOT_RUNNABLE_HARBOR = {"alpine-base": "unsupported-base", "broken-dockerfile": "dockerfile-syntax",
                       "needs-gpu": "gpu", "verifier-downloads": "verifier-network",
                       "verifier-apt-install": "verifier-network"}
TB1_TASKS = ("greeting", "sum-numbers")


def require_image_sandboxes() -> None:
    """pytest.fail (never skip) when image sandboxes cannot run here."""
    try:
        check_image_sandboxes()
    except ProviderUnavailable as exc:
        pytest.fail(f"the Terminal-Bench tests need image sandboxes: {exc}")


@functools.cache
def built(task_dir: Path) -> BuiltEnvironment:
    """The task's environment and verifier kit, from the cache or built now."""
    require_image_sandboxes()
    task = load_task(task_dir)
    assert task.dockerfile is not None
    try:
        env = build_environment(plan_environment(task.dockerfile, task.context), log=False)
        build_kit(requirements_of([p.read_text() for p in task.test_scripts]), log=False)
    except BuildError as exc:
        pytest.fail(f"the environment of {task.id} could not be built: {exc}. Run `make terminalbench-envs`.")
    return env


def ensure_task_sets() -> None:
    """Every runnable environment of the test task sets, built when missing."""
    for folder in (HARBOR, TB1):
        for path in find_tasks(folder):
            if path.name in NOT_RUNNABLE_HARBOR and path.name != "verifier-apt-install":
                continue
            built(path)


def eventually(check: Callable[[], bool], within: float = 30.0) -> bool:
    """True once ``check()`` holds (polled; a generous bound: killed processes take a moment to go)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def processes_with(marker: bytes) -> list[int]:
    """Host processes whose command line contains ``marker``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def host_overlay_mounts() -> list[str]:
    """Overlay mounts the host's own mount table shows (the sandboxes' live only in their namespaces)."""
    return [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if " - overlay " in line and "jeval" in line]
