"""LifelongAgentBench's operating-system tasks (``os_interaction``) in the project's shell sandbox.

Upstream runs each task as root in a fresh Ubuntu container: the task's ``initialization_command_item``
first, then the agent's bash commands (five rounds), then ``evaluation_info.evaluation_command_item``:
the task is passed when that check exits 0. Here the container is the bubblewrap sandbox of
:mod:`pytest_jeval.sandbox.shell.providers` (a read-only Debian root, writable ``/app`` and ``/tmp``, an
unprivileged user, no network). So a task whose skills administer users or groups is refused when it
is loaded (:data:`ROOT_SKILLS`), and a task whose initialization fails in the sandbox (it writes where
only root may) ends its episode as a harness error, never as a wrong answer.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from pytest_jeval.sandbox.shell.providers import ExecOutcome, Sandbox

ROOT_SKILLS = frozenset({"useradd", "usermod", "groupadd", "gpasswd", "chage", "chsh", "addgroup", "chown", "chgrp"})
"""Skills that need root (user and group administration): their tasks are refused here."""

INTERPRETERS = {"bash": "bash -s", "python": "python3 -"}
"""How a command item's script runs (its text on stdin); upstream's ``c`` and ``cpp`` items are refused."""

COMMAND_TIMEOUT = 20.0
"""Upstream's ``command_execution_timeout`` (seconds) for every command of a task."""


@dataclasses.dataclass(frozen=True)
class Command:
    """One upstream command item: an interpreter name and its script."""

    name: str
    script: str

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Command:
        """From ``{"command_name": ..., "script": ...}``."""
        return cls(name=str(item["command_name"]), script=str(item["script"]))


@dataclasses.dataclass(frozen=True)
class OsTask:
    """One ``os_interaction`` task, parsed from its row."""

    init: Command
    check: Command
    solution: Command
    skills: tuple[str, ...]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> OsTask:
        """From upstream's entry (``initialization_command_item``, ``evaluation_info``, ``skill_list``)."""
        info = row["evaluation_info"]
        return cls(init=Command.from_item(row["initialization_command_item"]),
                   check=Command.from_item(info["evaluation_command_item"]),
                   solution=Command.from_item(info["ground_truth_command_item"]),
                   skills=tuple(str(s) for s in row.get("skill_list") or ()))


def os_problem(task: OsTask) -> str | None:
    """Why this task cannot run in the sandbox, or None (see the module docstring)."""
    root = sorted(set(task.skills) & ROOT_SKILLS)
    if root:
        return (f"needs root for {', '.join(root)} (upstream runs as root in an Ubuntu container; the sandbox "
                "runs an unprivileged user over a read-only root filesystem)")
    for label, command in (("initialization", task.init), ("evaluation", task.check), ("solution", task.solution)):
        if command.name not in INTERPRETERS:
            return f"its {label} command is a {command.name!r} item; the sandbox runs bash and python items"
    return None


def run_item(sandbox: Sandbox, command: Command, timeout: float = COMMAND_TIMEOUT) -> ExecOutcome:
    """Run one command item in the sandbox (its script on the interpreter's stdin)."""
    return sandbox.exec(INTERPRETERS[command.name], timeout=timeout, stdin=command.script)


@dataclasses.dataclass
class OsState:
    """One episode's sandbox (``episode.state``) and the commands run so far."""

    task: OsTask
    sandbox: Sandbox
    rounds: int
    """Upstream's round limit: commands the episode may run."""
    executed: int = 0
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def passes(self) -> tuple[bool, ExecOutcome]:
        """Run the task's check: passed when it exits 0 within the timeout."""
        with self.lock:
            outcome = run_item(self.sandbox, self.task.check)
        return outcome.returncode == 0 and not outcome.timed_out, outcome


def describe(outcome: ExecOutcome) -> str:
    """What the agent sees of a command (upstream shows the output; the exit status is added here)."""
    text = (outcome.stdout + outcome.stderr).strip()
    if outcome.timed_out:
        return f"The command did not finish within {COMMAND_TIMEOUT:g} seconds and was killed."
    body = f"The output of the OS:\n\n{text}" if text else "The output of the OS is empty."
    return f"{body}\n(exit status {outcome.returncode})"

