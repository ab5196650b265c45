"""Sandboxed execution of untrusted Python (generated code, HumanEval tests).

See the README section "Scoring and sandboxed execution" for the isolation applied on each platform.
"""

from __future__ import annotations

from ._humaneval import build_humaneval_program, check_humaneval, execution_reason, score_execution
from ._isolation import current_plan
from ._runner import ExecResult, SandboxError, run_many, run_python


def isolation() -> list[str]:
    """The isolation tags this machine's sandbox applies (probes on first use)."""
    return list(current_plan().tags)


__all__ = [
    "ExecResult",
    "SandboxError",
    "build_humaneval_program",
    "check_humaneval",
    "execution_reason",
    "isolation",
    "run_many",
    "run_python",
    "score_execution",
]
