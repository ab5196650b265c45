"""``backend = "command"``: any agent CLI, started as the benchmark's ``command`` with placeholders filled in.

``command = ["my-agent", "--prompt-file", "{prompt_file}"]``; the placeholders are
:data:`PLACEHOLDERS`. The answer is the agent's standard output, stripped.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from pytest_jeval.agents.external.base import AgentInvocation, BackendOptions

PLACEHOLDERS = ("prompt_file", "workspace", "model", "base_url")
"""What ``{...}`` in a ``command`` item may name."""

_FIELD = re.compile(r"\{([^{}]*)\}")


def placeholder_problem(command: list[str]) -> str | None:
    """Why ``command`` cannot be used (empty, an unknown placeholder, an unbalanced brace), or None."""
    if not command or not command[0].strip():
        return "command is empty; give the program and its arguments as a list"
    for i, item in enumerate(command):
        unknown = [name for name in _FIELD.findall(item) if name not in PLACEHOLDERS]
        if unknown:
            known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            return f"command[{i}] names an unknown placeholder {{{unknown[0]}}} (the placeholders are {known})"
        if "{" in _FIELD.sub("", item) or "}" in _FIELD.sub("", item):
            return f"command[{i}] has an unbalanced brace: {item!r}"
    return None


def fill(command: list[str], values: dict[str, str]) -> list[str]:
    """``command`` with every placeholder replaced."""
    return [_FIELD.sub(lambda m: values[m.group(1)], item) for item in command]


class CommandAgent:
    """The generic adapter: the benchmark's ``command``."""

    name = "command"

    def __init__(self, command: list[str]) -> None:
        self.command = list(command)

    def check(self) -> str | None:
        """Why the command cannot run here: a placeholder problem, or a program that is not found."""
        problem = placeholder_problem(self.command)
        if problem is not None:
            return problem
        program = self.command[0]
        if _FIELD.search(program):
            return None  # filled in per episode
        if os.sep in program:
            path = Path(program)
            if not (path.is_file() and os.access(path, os.X_OK)):
                return f"command[0]: {program} is not an executable file"
            return None
        if shutil.which(program) is None:
            return f"command[0]: {program!r} is not on PATH; install it or give its absolute path"
        return None

    def invocation(self, *, prompt_file: Path, workspace: Path, home: Path, model: str, base_url: str,
                   api_key: str) -> AgentInvocation:
        """The command with its placeholders filled in (the key is in the environment only)."""
        values = {"prompt_file": str(prompt_file), "workspace": str(workspace), "model": model,
                  "base_url": base_url}
        return AgentInvocation(argv=fill(self.command, values), env={})


def make_agent(options: BackendOptions) -> CommandAgent:
    """your own agent command ([[benchmarks]] command = [...]), one process per episode, behind a proxy."""
    return CommandAgent(list(options.command))
