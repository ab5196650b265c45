"""Sandboxed execution of untrusted Python (generated code, HumanEval tests).

See docs/sandbox.md for the isolation plans, the verdict channel and the tags
recorded with each run.
"""

from __future__ import annotations

from pytest_jeval.sandbox.humaneval import build_humaneval_program, check_humaneval, execution_reason, score_execution
from pytest_jeval.sandbox.plans import current_plan
from pytest_jeval.sandbox.process import ExecResult, SandboxError, run_harness, run_many, run_python
from pytest_jeval.sandbox.values import NotPlainValue, decode_value, encode_value
from pytest_jeval.sandbox.workdir import run_in_workspace


def isolation() -> list[str]:
    """The isolation tags this machine's sandbox applies to a run (probes on first use)."""
    from pytest_jeval.sandbox.quota import cgroup_support

    return [*current_plan().tags, *(("cgroup-memory", "cgroup-pids") if cgroup_support()[0] else ())]


__all__ = [
    "ExecResult",
    "NotPlainValue",
    "SandboxError",
    "build_humaneval_program",
    "check_humaneval",
    "decode_value",
    "encode_value",
    "execution_reason",
    "isolation",
    "run_harness",
    "run_in_workspace",
    "run_many",
    "run_python",
    "score_execution",
]
