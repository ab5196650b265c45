"""PinchBench's task files, read from the user's clone of github.com/pinchbench/skill (the suite's ``data_dir``).

A task is a Markdown file ``tasks/task_*.md`` (in the order of ``tasks/manifest.yaml`` when the clone has one):
YAML front matter between ``---`` lines (``id``, ``name``, ``category``, ``grading_type``: ``automated``,
``llm_judge`` or ``hybrid``, ``timeout_seconds``, ``workspace_files``, ``grading_weights``, and for a multi-session
task ``sessions``: prompts in order, each ``{"id", "prompt", "new_session"?}``), then ``## `` sections: Prompt,
Expected Behavior, Grading Criteria (``- [ ]`` items), Automated Checks (a ```python block defining
``grade(transcript, workspace_path) -> dict``), LLM Judge Rubric. A workspace file is ``{"path", "content"}`` (the
text itself) or ``{"source", "dest"}`` (a file of the clone's ``assets/``). The graders are code: they stay in the
user's clone and run only in the sandbox (:mod:`.grading`).

pytest-jeval adds one optional section, ``## Oracle Solution``: a ```json list of steps, ``{"tool": name,
"arguments": {...}}`` or ``{"say": text}``, that the ``oracle`` agent replays (upstream's tasks have none).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import yaml

__all__ = ["GRADING_TYPES", "Task", "TaskError", "load_task", "task_files"]

GRADING_TYPES = ("automated", "llm_judge", "hybrid")


class TaskError(ValueError):
    """A task file that does not follow the format; the message names the file and what is wrong."""


@dataclasses.dataclass(frozen=True)
class Task:
    """One parsed task (see the module docstring)."""

    id: str
    name: str
    category: str
    grading_type: str
    timeout_seconds: float
    workspace_files: list[dict[str, Any]]
    prompt: str
    expected_behavior: str
    grading_criteria: list[str]
    automated_checks: str | None
    """The grader's Python source (the ```python block of Automated Checks), or None."""
    llm_judge_rubric: str | None
    grading_weights: dict[str, float] | None
    sessions: list[dict[str, Any]]
    """The prompts of a multi-session task in order (``[]`` for a single prompt)."""
    oracle: list[dict[str, Any]] | None
    frontmatter: dict[str, Any]
    path: str

    def prompts(self) -> list[tuple[str, bool]]:
        """Every prompt the agent gets, in order, and whether it opens a new session."""
        if not self.sessions:
            return [(self.prompt, False)]
        return [(str(s.get("prompt") or s.get("message") or ""), bool(s.get("new_session"))) for s in self.sessions]


def _sections(body: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in body.split("\n"):
        header = re.match(r"^##\s+(.+)$", line)
        if header:
            if name is not None:
                sections[name] = "\n".join(lines).strip()
            name, lines = header.group(1).strip(), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        sections[name] = "\n".join(lines).strip()
    return sections


def _block(text: str | None, lang: str) -> str | None:
    if not text:
        return None
    found = re.search(rf"```{lang}\s*(.*?)\s*```", text, re.DOTALL)
    return found.group(1) if found else None


def load_task(path: Path) -> Task:
    """Parse one task file; TaskError naming the file when it does not follow the format."""
    text = path.read_text(encoding="utf-8")
    found = re.match(r"^---\s*\n(.*?)\n---\s*\n(.*)$", text, re.DOTALL)
    if not found:
        raise TaskError(f"{path}: no YAML front matter between --- lines")
    try:
        meta = yaml.safe_load(found.group(1)) or {}
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: the front matter is not YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise TaskError(f"{path}: the front matter is not a mapping")
    sections = _sections(found.group(2))
    grading = str(meta.get("grading_type") or "automated")
    if grading not in GRADING_TYPES:
        raise TaskError(f"{path}: grading_type {grading!r} is not one of {', '.join(GRADING_TYPES)}")
    criteria = [m.group(1) for line in sections.get("Grading Criteria", "").split("\n")
                if (m := re.match(r"^-\s+\[[ x]\]\s+(.+)$", line.strip()))]
    weights = meta.get("grading_weights")
    oracle_text = _block(sections.get("Oracle Solution"), "json")
    try:
        oracle = json.loads(oracle_text) if oracle_text is not None else None
    except ValueError as exc:
        raise TaskError(f"{path}: the Oracle Solution is not JSON: {exc}") from None
    sessions = meta.get("sessions") or []
    if not isinstance(sessions, list) or not all(isinstance(s, (str, dict)) for s in sessions):
        raise TaskError(f"{path}: sessions must be a list of prompts")
    task = Task(
        id=str(meta.get("id") or path.stem), name=str(meta.get("name") or ""), category=str(meta.get("category") or ""),
        grading_type=grading, timeout_seconds=float(meta.get("timeout_seconds") or 120),
        workspace_files=list(meta.get("workspace_files") or []), prompt=sections.get("Prompt", "").strip(),
        expected_behavior=sections.get("Expected Behavior", "").strip(), grading_criteria=criteria,
        automated_checks=_block(sections.get("Automated Checks"), "python"),
        llm_judge_rubric=sections.get("LLM Judge Rubric"),
        grading_weights={str(k): float(v) for k, v in weights.items()} if isinstance(weights, dict) else None,
        sessions=[s if isinstance(s, dict) else {"prompt": s} for s in sessions], oracle=oracle, frontmatter=meta,
        path=str(path))
    if not task.prompt and not task.sessions:
        raise TaskError(f"{path}: no ## Prompt section")
    return task


def task_files(clone: Path) -> list[Path]:
    """The task files of a clone: ``tasks/manifest.yaml``'s order when there is one, else ``tasks/task_*.md``
    sorted (upstream's ``TaskLoader`` glob)."""
    tasks = clone / "tasks"
    manifest = tasks / "manifest.yaml"
    if manifest.is_file():
        listed = (yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}).get("tasks") or []
        return [tasks / f"{name}.md" for name in listed]
    return sorted(tasks.glob("task_*.md"))
