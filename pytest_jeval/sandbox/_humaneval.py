"""HumanEval-style functional checking and turning execution results into scores."""

from __future__ import annotations

import dataclasses
import re
import secrets

from ..score import Score
from ._runner import ExecResult, run_python

STDERR_TAIL_CHARS = 2000
_SENTINEL_PREFIX = "__jeval_check_completed_"


def build_humaneval_program(prompt: str, completion: str, test: str, entry_point: str) -> str:
    """The program HumanEval's gold defines: ``prompt + completion + test`` and the call ``check(entry_point)``.

    Raises ``ValueError`` when ``entry_point`` is not a plain identifier (it is
    pasted into code).
    """
    if not entry_point.isidentifier():
        raise ValueError(f"entry_point must be a Python identifier, got {entry_point!r}")
    return prompt + completion + "\n" + test + f"\ncheck({entry_point})\n"


def check_humaneval(
    prompt: str, completion: str, test: str, entry_point: str, *, timeout: float = 10.0, memory_mb: int = 1024
) -> ExecResult:
    """Execute a HumanEval completion against its tests in the sandbox.

    ``check(entry_point)`` is always called. A random sentinel printed after it
    returns must appear in stdout, so a completion that exits early with status 0
    (``sys.exit()``, ``os._exit(0)``) is reported as ``error``, never as a pass.
    """
    sentinel = _SENTINEL_PREFIX + secrets.token_hex(16)
    program = build_humaneval_program(prompt, completion, test, entry_point) + f"print({sentinel!r})\n"
    result = run_python(program, timeout=timeout, memory_mb=memory_mb)
    completed = sentinel in result.stdout
    stdout = result.stdout.replace(sentinel + "\n", "").replace(sentinel, "")
    if result.status == "ok" and not completed:
        note = "jeval: the program exited with status 0 before check() completed\n"
        return dataclasses.replace(result, status="error", stdout=stdout, stderr=result.stderr + note)
    return dataclasses.replace(result, stdout=stdout)


_REASONS = {"ok": "passed", "timeout": "timeout", "memory": "memory", "killed": "killed"}
_ASSERTION = re.compile(r"^AssertionError\b", re.MULTILINE)


def execution_reason(result: ExecResult) -> str:
    """Why a run passed or failed: passed, wrong answer, exception, timeout, memory or killed."""
    if result.status == "error":
        return "wrong answer" if _ASSERTION.search(result.stderr[-STDERR_TAIL_CHARS:]) else "exception"
    return _REASONS[result.status]


def score_execution(result: ExecResult) -> Score:
    """A ``Score``: correct iff the run's status is ``ok``.

    Metadata: ``status``, ``reason`` (passed / wrong answer / exception / timeout /
    memory / killed), ``stderr_tail``, ``returncode``, ``duration`` and ``isolation``.
    """
    return Score(
        correct=result.status == "ok",
        extracted=result.status,
        expected="ok",
        metadata={
            "status": result.status,
            "reason": execution_reason(result),
            "stderr_tail": result.stderr[-STDERR_TAIL_CHARS:],
            "returncode": result.returncode,
            "duration": round(result.duration, 4),
            "isolation": list(result.isolation),
        },
    )
