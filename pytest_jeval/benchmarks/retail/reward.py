"""The tau-bench reward: the final database equals the gold actions replayed on a fresh copy, and every
required output was said."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pytest_jeval.agents.tool import ToolError
from pytest_jeval.benchmarks.retail.database import Database, db_hash, fresh_db
from pytest_jeval.benchmarks.retail.tools import WRITE_TOOLS, call_tool
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score


def gold_db(sample: Sample) -> Database:
    """A fresh database with the task's gold actions applied, in order.

    A gold action the tools refuse is a broken task, not a model error: ValueError.
    """
    db = fresh_db()
    for i, action in enumerate(sample.target["actions"]):
        try:
            call_tool(action["name"], action["arguments"], db, sample)
        except (ToolError, KeyError, TypeError) as exc:
            raise ValueError(f"task {sample.id!r}: gold action {i} ({action['name']}) fails: {exc}") from exc
    return db


def assistant_texts(episode: Episode) -> list[str]:
    """The text of every assistant message of the episode."""
    out = []
    for m in episode.messages:
        if m.get("role") != "assistant":
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
    return out


def _norm(text: str) -> str:
    return text.lower().replace(",", "")


def missing_outputs(outputs: Sequence[str], texts: Iterable[str]) -> list[str]:
    """The required outputs that no text holds (case-insensitive, commas removed, as tau-bench compares)."""
    said = [_norm(t) for t in texts]
    return [o for o in outputs if not any(_norm(o) in t for t in said)]


def retail_score(sample: Sample, episode: Episode) -> Score:
    """1.0 when the episode's final database hashes like the gold one and every output was said, else 0.0."""
    gold_hash = db_hash(gold_db(sample))
    final_hash = db_hash(episode.state) if isinstance(episode.state, dict) else None
    db_match = final_hash == gold_hash
    outputs: list[str] = list(sample.target["outputs"])
    missing = missing_outputs(outputs, assistant_texts(episode))
    reward = 1.0 if db_match and not missing else 0.0
    writes = [c for c in episode.tool_calls if c.name in WRITE_TOOLS]
    metadata: dict[str, Any] = {
        "reward": reward,
        "db_match": db_match,
        "db_hash": final_hash,
        "gold_hash": gold_hash,
        "outputs_required": outputs,
        "outputs_missing": missing,
        "gold_actions": [a["name"] for a in sample.target["actions"]],
        "write_calls": [c.name for c in writes if c.ok],
        "write_errors": sum(1 for c in writes if not c.ok),
    }
    why = [] if db_match else ["the final database differs from the gold one"]
    why += [f"not said: {o}" for o in missing]
    if why:
        metadata["reasons"] = why
    return Score(correct=reward == 1.0, value=reward, expected=sample.target, metadata=metadata)
