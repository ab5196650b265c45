"""Terminal-Bench 2 task folders.

A task is a folder::

    task.toml            metadata, agent and verifier timeouts
    instruction.md       what the agent is asked to do (its prompt)
    environment/         files copied into the task directory (/app); a Dockerfile here needs docker
    environment/setup.sh optional: run in the sandbox before the episode, never copied in
    tests/test.sh        the checker, copied in only after the episode; exit status 0 (or a reward
                         file /logs/verifier/reward.txt holding 1) is a pass
    solution/solve.sh    a reference solution (never shown to the agent)

``task.toml`` (every key optional)::

    version = "1.0"
    [metadata]
    category = "text-processing"
    difficulty = "easy"
    tags = ["awk"]
    [agent]
    timeout_sec = 600.0
    [verifier]
    timeout_sec = 120.0
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["TerminalTask", "load_task", "solution_blocks"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
SETUP = "setup.sh"
DOCKERFILE = "Dockerfile"


@dataclasses.dataclass(frozen=True)
class TerminalTask:
    """One task folder, checked."""

    id: str
    """The folder's name."""
    path: Path
    instruction: str
    category: str = ""
    difficulty: str = ""
    tags: tuple[str, ...] = ()
    agent_timeout: float | None = None
    """``[agent] timeout_sec`` (informational: the suite's episode_timeout bounds the episode)."""
    verifier_timeout: float = 120.0
    """``[verifier] timeout_sec``: how long tests/test.sh may run."""

    @property
    def environment(self) -> Path | None:
        """The ``environment/`` folder, or None."""
        folder = self.path / "environment"
        return folder if folder.is_dir() else None

    @property
    def setup_script(self) -> str | None:
        """The text of ``environment/setup.sh``, or None."""
        env = self.environment
        return (env / SETUP).read_text() if env is not None and (env / SETUP).is_file() else None

    @property
    def needs_docker(self) -> bool:
        """True when ``environment/`` holds a Dockerfile (only a docker provider can build it)."""
        env = self.environment
        return env is not None and (env / DOCKERFILE).exists()

    @property
    def tests(self) -> Path:
        """The ``tests/`` folder (with ``test.sh``)."""
        return self.path / "tests"

    @property
    def solution(self) -> Path:
        """``solution/solve.sh`` (may be missing in a user's folder)."""
        return self.path / "solution" / "solve.sh"


def _number(table: dict[str, Any], key: str, where: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{where}: {key} must be a positive number of seconds, not {value!r}")
    return float(value)


def load_task(path: Path) -> TerminalTask:
    """Read and check one task folder; ValueError saying what is missing or wrong."""
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"task folder {path} does not exist")
    if not _ID.match(path.name):
        raise ValueError(f"task folder name {path.name!r} must match {_ID.pattern}")
    for rel in ("task.toml", "instruction.md", "tests/test.sh"):
        if not (path / rel).is_file():
            raise ValueError(f"task {path.name}: {rel} is missing (layout: task.toml, instruction.md, "
                             "environment/, tests/test.sh, solution/solve.sh)")
    try:
        meta = tomllib.loads((path / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"task {path.name}: task.toml is not valid TOML: {exc}") from None
    instruction = (path / "instruction.md").read_text().strip()
    if not instruction:
        raise ValueError(f"task {path.name}: instruction.md is empty")
    metadata = meta.get("metadata", {})
    agent = meta.get("agent", {})
    verifier = meta.get("verifier", {})
    for name, table in (("metadata", metadata), ("agent", agent), ("verifier", verifier)):
        if not isinstance(table, dict):
            raise ValueError(f"task {path.name}: [{name}] must be a table")
    tags = metadata.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"task {path.name}: metadata.tags must be a list of strings")
    where = f"task {path.name} task.toml"
    return TerminalTask(
        id=path.name,
        path=path,
        instruction=instruction,
        category=str(metadata.get("category", "")),
        difficulty=str(metadata.get("difficulty", "")),
        tags=tuple(tags),
        agent_timeout=_number(agent, "timeout_sec", f"{where} [agent]"),
        verifier_timeout=_number(verifier, "timeout_sec", f"{where} [verifier]") or 120.0,
    )


def solution_blocks(task: TerminalTask) -> list[str]:
    """``solution/solve.sh`` as separate commands: its blank-line-separated blocks, without the
    shebang and comment-only lines (each block starts again in /app)."""
    text = task.solution.read_text()
    blocks = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [line for line in chunk.splitlines() if not line.lstrip().startswith("#")]
        if any(line.strip() for line in lines):
            blocks.append("\n".join(lines).strip("\n"))
    return blocks
