"""The terminal-task root filesystem for the tests: used when cached, built when missing, never skipped.

Without bwrap, mmdebstrap or the Debian mirror the tests fail with the command to run
(``make rootfs``), so a CI machine that cannot run them says so instead of passing quietly.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_jeval.benchmarks.terminal_lite import bench_terminal_lite as bench
from pytest_jeval.sandbox.shell.rootfs import RootfsError, build_rootfs, check_rootfs, rootfs_path

TASKS_DIR = Path(bench.__file__).parent / "data" / "tasks"


def ensure_rootfs() -> Path:
    """The cached root filesystem, built now if missing; pytest.fail (never skip) when impossible."""
    if shutil.which("bwrap") is None:
        pytest.fail("terminal tests need bubblewrap: run `make bubblewrap` (apt-get install -y bubblewrap)")
    if not check_rootfs():
        return rootfs_path()
    try:
        return build_rootfs()
    except RootfsError as exc:
        pytest.fail(f"the terminal-task root filesystem is missing and could not be built: {exc}. Run `make rootfs`.")
