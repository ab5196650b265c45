"""``jeval rescore`` for the Terminal-Bench benchmarks (scorer ``terminalbench_reward``).

The environment is gone after the run, so the verifier cannot run again: the verdict is worked
out again from the stored reward (``scoring_metadata.reward``: a pass at 1 or more). An unscored
record (the task could not run here, or its verifier needed the network) stays unscored with
its reason; a record without a stored reward keeps its verdict, with ``rescore_note``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval import Score
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score

NAME = "terminalbench_reward"
NOT_RESCORED = "not rescored: the record holds no verifier reward (scoring_metadata.reward)"


@register_scorer(NAME)
def rescore(record: dict[str, Any]) -> Score:
    """The verdict again from the stored reward."""
    meta = dict(record.get("scoring_metadata") or {})
    if meta.get("unscored_reason"):
        return Score.unscorable(str(meta.pop("unscored_reason")), expected=1.0, **meta)
    reward = meta.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore_note": NOT_RESCORED})
    return Score(correct=float(reward) >= 1.0, value=float(reward), extracted=float(reward), expected=1.0,
                 metadata=meta)
