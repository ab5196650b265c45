"""Grading one patch on a fresh copy of an instance's prepared checkout (SWE-bench's ``run_instance``).

The model's patch never runs where it was made: the agent's workspace is dropped and its ``git diff`` is
applied to a new copy of the instance's checkout, so files it left outside the diff (a ``conftest.py``, a
fake ``pytest``) are not there. The test files are reset and ``test_patch`` applied after it, and the
patch may not touch them (:mod:`.patches`), so it cannot change the tests that grade it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from pytest_jeval.benchmarks._swe.grading import (
    END,
    NO,
    START,
    TEST_PATCH_FAILED,
    eval_script,
    exit_status,
    extract_status_map,
    grade_report,
    resolution,
)
from pytest_jeval.benchmarks._swe.patches import APPLIED, PATCH_FILE, SWEBENCH_APPLY, apply_script, test_file_violations
from pytest_jeval.benchmarks._swe.prepare import Prepared
from pytest_jeval.benchmarks._swe.sandboxed import run_script
from pytest_jeval.benchmarks._swe.trees import copy_tree, room_for
from pytest_jeval.sandbox import ExecResult

__all__ = ["END", "START", "Checkout", "Graded", "apply_patch", "grade_patch", "precheck", "tail"]

LOG_TAIL = 3000
MAX_LOG = 8 * 1024 * 1024
APPLY_TIMEOUT = 600.0


def tail(text: str, n: int = LOG_TAIL) -> str:
    """The last ``n`` characters (marked when cut)."""
    return text if len(text) <= n else "[...]\n" + text[-n:]


class Checkout:
    """A fresh copy of a prepared checkout in a private workspace, removed on exit."""

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self.path: Path | None = None

    def __enter__(self) -> Checkout:
        from pytest_jeval.sandbox.workdir import make_workspace_dir

        disk_bytes, files = room_for(self.prepared.tree.path)
        self.path = Path(make_workspace_dir(disk_bytes=disk_bytes, files=files))
        try:
            copy_tree(self.prepared.tree.path, self.path)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        from pytest_jeval.sandbox.workdir import remove_workspace_dir

        if self.path is not None:  # as root the copy is a size-limited file system of its own: unmounted here
            remove_workspace_dir(self.path)
            self.path = None

    def write(self, relative: str, text: str) -> None:
        """Write a harness file into the copy (before any sandboxed run touched it)."""
        assert self.path is not None
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def run(self, script: str, *, timeout: float, max_output: int = 65_536, **kwargs: Any) -> ExecResult:
        """Run ``script`` in the copy (see :func:`.sandboxed.run_script`)."""
        assert self.path is not None
        return run_script(self.path, script, self.prepared.env, timeout=timeout, max_output=max_output, **kwargs)


@dataclasses.dataclass
class Graded:
    """What grading one patch found."""

    resolution: str
    reason: str | None = None
    """Why it is not resolved when no test said so (empty, refused, not applied, tests never ran)."""
    applied_with: str | None = None
    statuses: dict[str, str] = dataclasses.field(default_factory=dict)
    report: dict[str, Any] | None = None
    log: str = ""
    exit_code: int | None = None
    seconds: float = 0.0
    unscored: str | None = None
    """A harness failure (the test patch did not apply): the patch cannot be judged."""


def apply_patch(checkout: Checkout, patch: str, methods: tuple[str, ...] = SWEBENCH_APPLY) -> tuple[str | None, str]:
    """``(the method that applied the patch or None, the output)``."""
    checkout.write(PATCH_FILE, patch)
    done = checkout.run("exec 2>&1\n" + apply_script(methods), timeout=APPLY_TIMEOUT)
    output = (done.stdout + done.stderr).strip()
    for line in output.splitlines():
        if line.startswith(APPLIED):
            return line[len(APPLIED):].strip(), output
    return None, output


def precheck(patch: str | None, test_patch: str) -> str | None:
    """Why a patch fails before anything runs (none, or it touches the tests), or None."""
    if patch is None or not patch.strip():
        return "the patch is empty: nothing was submitted"
    bad = test_file_violations(patch, test_patch)
    if bad:
        return f"the patch edits the tests that grade it: {', '.join(bad)}"
    return None


def grade_patch(prepared: Prepared, patch: str | None) -> Graded:
    """Apply ``patch`` and run the instance's tests as upstream does; the verdict (see :mod:`.grading`)."""
    inst, spec = prepared.instance, prepared.spec
    refused = precheck(patch, inst.test_patch)
    if refused is not None:
        return Graded(NO, reason=refused)
    assert patch is not None
    started = time.monotonic()
    with Checkout(prepared) as checkout:
        method, output = apply_patch(checkout, patch)
        if method is None:
            return Graded(NO, reason=f"the patch did not apply: {tail(output, 1500)}", log=output,
                          seconds=time.monotonic() - started)
        script = eval_script(repo=inst.repo, base_commit=inst.base_commit, test_patch=inst.test_patch,
                             test_cmd=spec.test_cmd, install=spec.install, eval_commands=spec.eval_commands)
        # one stream, in order, as upstream's container logs it
        done = checkout.run("exec 2>&1\n" + script, timeout=float(prepared.options["test_timeout"]), max_output=MAX_LOG)
    log = done.stdout + ("\n" + done.stderr if done.stderr else "")
    seconds = time.monotonic() - started
    if done.status == "timeout":
        limit = float(prepared.options["test_timeout"])
        return Graded(NO, reason=f"the tests timed out after {limit:g}s", applied_with=method, log=log, seconds=seconds)
    if TEST_PATCH_FAILED in log.split(START, 1)[0]:  # before the tests: nothing the patch printed
        return Graded(NO, applied_with=method, log=log, seconds=seconds,
                      unscored="the instance's test_patch did not apply to its checkout")
    statuses, invalid = extract_status_map(log, spec.log_parser)
    if invalid is not None:
        return Graded(NO, reason=invalid, applied_with=method, log=log, exit_code=exit_status(log), seconds=seconds)
    report = grade_report(statuses, inst.fail_to_pass, inst.pass_to_pass)
    return Graded(resolution(report), applied_with=method, statuses=statuses, report=report.as_dict(), log=log,
                  exit_code=exit_status(log), seconds=seconds)

