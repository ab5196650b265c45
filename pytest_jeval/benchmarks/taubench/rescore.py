"""``jeval rescore`` for taubench: the reward again from a record's inline trajectory.

As upstream's evaluator does, the final database is rebuilt by replaying the trajectory's calls of the tools
that change the database on a fresh one: the calls that succeeded (a call that failed changed nothing, with
the tools' checks made before any change). The NL-assertion
verdict is the one stored in the record (no judge is asked again). A record without a trajectory, or made
from other data than the samples at hand (its ``taubench_data`` hashes differ), keeps its stored verdict,
marked ``rescore = "stored"`` (with the reason).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pytest_jeval.benchmarks.taubench.reward import components, initial_env, run_tool, write_tools
from pytest_jeval.benchmarks.taubench.scoring import build_score
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.replay import stored_score


def _arguments(call: dict[str, Any]) -> dict[str, Any] | None:
    parsed = call.get("parsed")
    if isinstance(parsed, dict):
        return parsed
    try:
        value = json.loads(str(call.get("arguments") or "{}"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def rescore_taubench(record: dict[str, Any], sample: Sample) -> Score:
    """The record's reward recomputed (see the module docstring)."""
    trajectory = record.get("trajectory")
    ran_on = record.get("taubench_data")
    reason = None
    if not isinstance(trajectory, dict) or sample.target is None:
        reason = "the record has no inline trajectory"
    elif isinstance(ran_on, dict) and ran_on.get("sha256") != sample.metadata["provenance"]["sha256"]:
        reason = (f"the run's data ({ran_on.get('source')}) differs from the samples' "
                  f"({sample.metadata['provenance']['source']})")
    if reason is not None:
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore": "stored", "rescore_reason": reason})
    assert isinstance(trajectory, dict)
    env = initial_env(sample)
    writes = write_tools(env.domain)
    calls = []
    for call in trajectory.get("tool_calls") or []:
        arguments = _arguments(call)
        calls.append((str(call.get("name")), arguments))
        if arguments is not None and call.get("name") in writes and call.get("error") is None:
            run_tool(env, sample, str(call["name"]), arguments)
    stop = (record.get("reward_info") or {}).get("termination") or "agent_or_user_stop"
    parts = components(sample, env.hash(), trajectory.get("messages") or [], calls, str(stop))
    stored = (record.get("reward_info") or {}).get("nl_assertion")
    return build_score(sample, parts, stored if isinstance(stored, dict) and "reward" in stored else None)
