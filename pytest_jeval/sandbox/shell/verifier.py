"""A terminal task's verdict: the checker runs with nothing of the agent's, and the harness decides.

:func:`verify` copies the task's ``tests/`` into the sandbox and runs ``bash /tests/test.sh`` as
the checker (``Sandbox.exec(..., checker=True)``: a fresh home and ``/tmp``, the harness's
environment, ``/tests`` read-only and a fresh ``/logs``, none of which the agent's commands ever
saw). The harness then reads the reward file (``/logs/verifier/reward.txt``, Terminal-Bench 2's
convention) itself, never through a link, and decides with :func:`decide`: a check passes only
when ``tests/test.sh`` exits 0 **and** the reward file, if there is one, says 1 or more. A reward
that disagrees with the exit status is a failure, and the verdict says why.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from pytest_jeval.sandbox.shell.providers import ExecOutcome, Sandbox

__all__ = ["CHECK_COMMAND", "REWARD_FILE", "Verdict", "decide", "verify"]

REWARD_FILE = "/logs/verifier/reward.txt"
"""Where a checker may write its reward (a number; 1 or more is a pass)."""
CHECK_COMMAND = "bash /tests/test.sh"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the checker did and what the harness made of it."""

    passed: bool
    reason: str
    """``passed``, or why not (the exit status, a timeout, a reward that is not a number or disagrees)."""
    outcome: ExecOutcome
    """The checker's exec."""
    reward: float | None
    """The reward file's number (None: no reward file, or not a number)."""
    reward_text: str | None = None
    """What the reward file held (its first 4 KiB; None: no reward file)."""


def decide(exit_status: int, timed_out: bool, reward_text: str | None) -> tuple[bool, str, float | None]:
    """``(passed, reason, reward)`` of a check from ``tests/test.sh``'s exit status and its reward file's text."""
    if timed_out:
        return False, "tests/test.sh timed out and was killed", None
    reward: float | None = None
    if reward_text is not None and reward_text.strip():
        try:
            reward = float(reward_text.strip())
        except ValueError:
            return False, f"the reward file holds {reward_text.strip()[:40]!r}, not a number", None
        if not math.isfinite(reward):
            return False, f"the reward file holds {reward_text.strip()[:40]!r}, not a finite number", None
    if exit_status != 0:
        if reward is not None and reward >= 1:
            return (False, f"the reward file says {reward:g} but tests/test.sh exited with status {exit_status}: "
                           "a reward that disagrees with the exit status is a failure", reward)
        return False, f"tests/test.sh exited with status {exit_status}", reward
    if reward is not None and reward < 1:
        return False, f"the reward file says {reward:g} (a pass needs 1)", reward
    return True, "passed", reward


def verify(sandbox: Sandbox, tests: Path, *, timeout: float, command: str = CHECK_COMMAND) -> Verdict:
    """Run the task's checker in ``sandbox`` after the episode and decide its verdict (see the module docstring)."""
    sandbox.copy_in(tests, "/tests")
    outcome = sandbox.exec(f"mkdir -p /logs/verifier && {command}", timeout=timeout, checker=True)
    text = sandbox.read_text(REWARD_FILE)
    passed, reason, reward = decide(outcome.returncode, outcome.timed_out, text)
    return Verdict(passed, reason, outcome, reward, text)
