"""Retail tasks: what the simulated user wants, the gold actions, and the strings the agent must say.

One JSONL line per task::

    {"id": "retail-001", "category": "cancel", "user_id": "...", "instruction": "You are ... (hidden from the agent)",
     "actions": [{"name": "cancel_pending_order", "arguments": {"order_id": "#W...", "reason": "..."}}],
     "outputs": ["231.43"], "user_turns": ["Hi, I'd like to cancel an order.", "...", "###STOP###"]}

``user_turns[0]`` opens the episode (the first user message); the rest are what
the scripted user says after each agent answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks.retail.tools import TOOLS_BY_NAME
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.sample import Sample


def _strings(row: Mapping[str, Any], key: str) -> list[str]:
    value = row.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
        raise ValueError(f"task {row.get('id')!r}: {key} must be a list of strings")
    return list(value)


def parse_actions(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's gold actions as ``[{"name", "arguments"}]``; an unknown tool name is a ValueError."""
    raw = row.get("actions")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"task {row.get('id')!r}: actions must be a list of {{name, arguments}}")
    actions = []
    for i, action in enumerate(raw):
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
            raise ValueError(f"task {row.get('id')!r}: action {i} must be an object with a name")
        if action["name"] not in TOOLS_BY_NAME:
            raise ValueError(f"task {row.get('id')!r}: action {i} names no retail tool: {action['name']!r}")
        arguments = action.get("arguments") or {}
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        if not isinstance(arguments, Mapping):
            raise ValueError(f"task {row.get('id')!r}: action {i} arguments must be an object")
        actions.append({"name": action["name"], "arguments": dict(arguments)})
    return actions


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One task as a :class:`Sample`: ``input`` is the hidden instruction, ``target`` the gold."""
    task_id = str(row.get("id") or ctx.default_id(index))
    instruction = row.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError(f"task {task_id!r}: instruction must be a non-empty string")
    turns = _strings(row, "user_turns")
    if not turns or not turns[0].strip() or "###STOP###" in turns[0]:
        raise ValueError(f"task {task_id!r}: user_turns must start with the user's opening message")
    actions = parse_actions(row)
    outputs = _strings(row, "outputs")
    category = row.get("category")
    return Sample(
        id=task_id,
        input=instruction,
        subject=str(category) if category else None,
        target={"actions": actions, "outputs": outputs},
        metadata={"user_id": row.get("user_id"), "user_turns": turns},
    )


def read_tasks(path: Path) -> list[dict[str, Any]]:
    """The raw task rows of a JSONL file (blank lines skipped)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def task_samples(path: Path) -> list[Sample]:
    """The tasks of ``path`` as samples, as the plugin would make them (no ``datasets`` involved)."""
    ctx = LoadContext(benchmark="retail", subset=None, seed=0, data_dir=path.parent)
    out = []
    for i, row in enumerate(read_tasks(path)):
        sample = to_sample(row, i, ctx)
        if sample is not None:
            out.append(sample)
    return out
