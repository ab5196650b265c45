"""HumanEval-style functional checking and turning execution results into scores."""

from __future__ import annotations

import re

from pytest_jeval.core.score import Score
from pytest_jeval.sandbox.process import ExecResult, run_harness

STDERR_TAIL_CHARS = 2000


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
    """Execute a HumanEval completion against its tests in the sandbox, with the verdict out of its reach.

    ``prompt + completion`` runs in its own process (the callee). The task's
    ``prompt`` and ``test`` run in the trusted harness, which calls
    ``check(candidate)`` with a proxy: each call goes to the callee and its return
    value comes back as a plain value (exactly a built-in type, see ``_values``).
    So a return value of another type (an ``int`` subclass, an object whose ``__eq__``
    always agrees) fails, while genuine values compare with Python's own ``==`` as
    in the official harness. The run is ``ok`` iff the harness reports that
    ``check`` returned; exiting early (``sys.exit``, ``os._exit``), ``-O``
    re-execution, printing markers or patching modules cannot produce that report.
    """
    if not entry_point.isidentifier():
        raise ValueError(f"entry_point must be a Python identifier, got {entry_point!r}")
    job = {"mode": "humaneval", "prompt": prompt, "code": prompt + completion, "test": test,
           "entry_point": entry_point}
    return run_harness(job, timeout=timeout, memory_mb=memory_mb)


_REASONS = {"ok": "passed", "timeout": "timeout", "memory": "memory", "killed": "killed"}
_ASSERTION = re.compile(r"^AssertionError\b", re.MULTILINE)


def execution_reason(result: ExecResult) -> str:
    """Why a run passed or failed: passed, wrong answer, exception, timeout, memory or killed.

    For a harness run the reason is the harness's verdict (never the program's stderr).
    """
    if result.verdict is not None and result.status != "timeout":
        reason = str(result.verdict.get("reason"))
        if result.status == "ok":
            return "passed"
        return reason if reason in ("wrong answer", "exception", "memory", "timeout", "killed") else "exception"
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
