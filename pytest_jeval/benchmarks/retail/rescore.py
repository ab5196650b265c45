"""``jeval rescore`` for retail (the registry's ``retail`` scorer): the final database is rebuilt from the trajectory.

The tools are deterministic, so the write calls that succeeded during the run,
replayed in order on a fresh database, give back the final database; the reward
is then computed as during the run. That needs the trajectory in the record
(``[run] trajectories = "inline"``); a record without one keeps its stored
verdict, marked ``rescore = "stored"`` in ``scoring_metadata``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from pytest_jeval.agents.tool import ToolError
from pytest_jeval.benchmarks.retail.database import fresh_db
from pytest_jeval.benchmarks.retail.reward import retail_score
from pytest_jeval.benchmarks.retail.tools import WRITE_TOOLS, call_tool
from pytest_jeval.core.episode import Episode, ToolCallRecord
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.replay import stored_score

_FIELDS = {f.name for f in dataclasses.fields(ToolCallRecord)}


def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    parsed = call.get("parsed")
    if isinstance(parsed, dict):
        return parsed
    value = json.loads(str(call.get("arguments") or "{}"))
    if not isinstance(value, dict):
        raise ValueError(f"tool call {call.get('id')!r}: the arguments are not a JSON object")
    return value


def replayed_episode(trajectory: Mapping[str, Any], sample: Sample) -> tuple[Episode, int]:
    """The episode of a stored trajectory with its final database rebuilt, and how many
    once-successful write calls the tools now refuse (0 unless the tools or data changed)."""
    calls = [ToolCallRecord(**{k: v for k, v in c.items() if k in _FIELDS}) for c in trajectory.get("tool_calls", [])]
    db = fresh_db()
    refused = 0
    for call in calls:
        if call.error is None and call.name in WRITE_TOOLS:
            try:
                call_tool(call.name, _arguments(dataclasses.asdict(call)), db, sample)
            except ToolError:
                refused += 1
    messages = [dict(m) for m in trajectory.get("messages", [])]
    return Episode(messages=messages, tool_calls=calls, state=db), refused


def rescore_retail(record: dict[str, Any], sample: Sample) -> Score:
    """retail: the tau-bench reward again, from the record's inline trajectory (else its stored verdict)."""
    trajectory = record.get("trajectory")
    if not isinstance(trajectory, dict):
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore": "stored"})
    episode, refused = replayed_episode(trajectory, sample)
    score = retail_score(sample, episode)
    if refused:
        score = dataclasses.replace(score, metadata={**score.metadata, "replay_refused": refused})
    return score

