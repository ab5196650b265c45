"""AMA-Bench's data: the Hub dataset ``AMA-bench/AMA-bench`` (``test/open_end_qa_set.jsonl``) or local files in
its schema, and the packing of a trajectory into a context budget.

One line per episode: ``episode_id``, ``task`` (its description), ``task_type``, ``domain``,
``trajectory`` (``turn_idx``, ``action``, ``observation`` per step) and ``qa_pairs`` (``question``,
``answer``, ``type`` A-D). Each question is a sample of its own (``<episode_id>-q<n>``, ``n`` counted
from 0 in the episode's order), answered independently; the questions of an episode share one
trajectory object in memory.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval import LoadContext, Sample
from pytest_jeval.suite.dataset import DatasetLoadError

HUB = "AMA-bench/AMA-bench"
HUB_FILE = "test/open_end_qa_set.jsonl"
HEAD_SHARE = 0.7
"""The share of the budget kept from the start of a trajectory that does not fit (upstream keeps 70% / 30%)."""


class Options(BaseModel):
    """``[benchmarks.options]`` of ``ama-bench``."""

    model_config = ConfigDict(extra="forbid")

    context_chars: int = Field(48_000, ge=1_000)
    """The trajectory's budget in the prompt, in characters (upstream: the model's 16,384-token window less
    4,096 for the answer and a margin, about 12,000 tokens)."""
    top_k: int = Field(5, ge=1)
    """The retrieval configuration (``backend = "agent"``): steps a search returns (upstream's BM25 memory: 5)."""


def options_of(ctx: LoadContext | None) -> Options:
    """The entry's options (defaults when none are set)."""
    return ctx.options if ctx is not None and isinstance(ctx.options, Options) else Options()


def _episodes(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
        if path.name.lower().endswith(".jsonl"):
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            rows = data if isinstance(data, list) else [data]
    except (OSError, ValueError) as exc:
        raise DatasetLoadError(f"ama-bench: cannot read {path}: {exc}") from None
    return [r for r in rows if isinstance(r, dict)]


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """One row per question (its episode's fields shared), from ``data_files`` or the Hub."""
    if files:
        episodes = [e for path in files for e in _episodes(path)]
    else:
        try:
            import datasets

            episodes = [dict(r) for r in datasets.load_dataset(HUB, data_files={"test": HUB_FILE}, split="test")]
        except Exception as exc:
            raise DatasetLoadError(
                f"cannot load {HUB!r} ({HUB_FILE}) from the Hugging Face Hub for 'ama-bench': "
                f"{type(exc).__name__}: {exc}. If this machine is offline, download the dataset elsewhere and set "
                "data_files to its open_end_qa_set.jsonl") from exc
    rows = []
    for n, episode in enumerate(episodes):
        for key in ("episode_id", "trajectory", "qa_pairs"):
            if key not in episode:
                raise DatasetLoadError(f"ama-bench: episode {n} has no {key!r} (the schema is episode_id, task, "
                                       "task_type, domain, trajectory, qa_pairs)")
        shared = {"episode_id": str(episode["episode_id"]), "task": str(episode.get("task") or ""),
                  "task_type": str(episode.get("task_type") or ""), "domain": str(episode.get("domain") or ""),
                  "trajectory": list(episode["trajectory"])}
        for i, qa in enumerate(episode["qa_pairs"]):
            rows.append({**shared, "index_in_episode": i, "qa": qa})
    return rows


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One question of an episode."""
    qa = row["qa"]
    qa_type = str(qa.get("type") or "unknown")
    return Sample(id=f"{row['episode_id']}-q{row['index_in_episode']}", input=str(qa["question"]),
                  target=str(qa["answer"]), subject=qa_type,
                  metadata={"episode_id": row["episode_id"], "task": row["task"], "task_type": row["task_type"],
                            "domain": row["domain"], "qa_type": qa_type, "trajectory": row["trajectory"],
                            "context_chars": options_of(ctx).context_chars, "top_k": options_of(ctx).top_k})


def step_text(step: dict[str, Any]) -> str:
    """One step as upstream writes a trajectory out (``Step n:``, ``Action:``, ``Observation:``)."""
    return (f"Step {step.get('turn_idx', 0)}:\nAction: {step.get('action', '')}\n"
            f"Observation: {step.get('observation', '')}\n")


@dataclasses.dataclass(frozen=True)
class Packed:
    """A trajectory fitted into a budget: its text, and what was left out."""

    text: str
    steps: int
    kept: int
    dropped: tuple[int, int] | None
    """The positions (0-based, inclusive) of the steps left out of the middle, or None."""
    dropped_chars: int

    def info(self) -> dict[str, Any]:
        """The record's ``context``."""
        return {"steps": self.steps, "kept_steps": self.kept,
                "dropped_steps": list(self.dropped) if self.dropped else None, "dropped_chars": self.dropped_chars}


def pack(trajectory: Sequence[dict[str, Any]], budget: int) -> Packed:
    """The trajectory in ``budget`` characters: all of it when it fits, else whole steps from the start (up
    to 70% of the budget) and from the end (the rest), the steps between replaced by one line saying so."""
    texts = [step_text(s) for s in trajectory]
    total = sum(len(t) + 1 for t in texts)
    if total <= budget:
        return Packed("\n".join(texts), len(texts), len(texts), None, 0)
    head: list[int] = []
    used = 0
    for i, text in enumerate(texts):
        if used + len(text) + 1 > budget * HEAD_SHARE:
            break
        head.append(i)
        used += len(text) + 1
    tail: list[int] = []
    for i in range(len(texts) - 1, (head[-1] if head else -1), -1):
        if used + len(texts[i]) + 1 > budget:
            break
        tail.insert(0, i)
        used += len(texts[i]) + 1
    first_dropped = head[-1] + 1 if head else 0
    last_dropped = tail[0] - 1 if tail else len(texts) - 1
    dropped = sum(len(texts[i]) + 1 for i in range(first_dropped, last_dropped + 1))
    marker = (f"[... steps {first_dropped + 1} to {last_dropped + 1} of {len(texts)} are left out to fit the "
              "context ...]\n")
    text = "\n".join([texts[i] for i in head] + [marker] + [texts[i] for i in tail])
    return Packed(text, len(texts), len(head) + len(tail), (first_dropped, last_dropped), dropped)
