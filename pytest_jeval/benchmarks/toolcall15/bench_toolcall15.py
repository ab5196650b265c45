"""toolcall15: fifteen tool-use scenarios in ToolCall-15's five categories, scored 0, 1 or 2.

Written by the project after the design of ToolCall-15 (five categories of three
scenarios, a universal set of mock tools, a pass/partial/fail verdict per scenario);
shipped as ``data/scenarios.jsonl``. Schema per line: ``id``, ``category``
(one of ``CATEGORIES``), ``title``, ``prompt`` (the user message), optional ``tools``
(names offered; default all twelve), ``environment`` (the mock world, see
:mod:`pytest_jeval.benchmarks.toolcall15.world`) and ``scoring`` (``pass`` checks and
``partial`` alternatives, see :mod:`pytest_jeval.benchmarks.toolcall15.rules`).

Each scenario runs as an agent episode of at most 8 model turns with native ``tools``;
the item's value is points / 2 and it is correct at 2 points. The summary adds the total
points (of 30) and the points and percentage per category; the headline ``score`` is the
mean of the five category percentages, as in ToolCall-15.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, Tool, ToolCallRecord
from pytest_jeval.benchmarks.toolcall15.rules import parse_rules, score_episode, strip_nulls
from pytest_jeval.benchmarks.toolcall15.world import World, tools_named
from pytest_jeval.core.chat import Messages, Reply
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score

CATEGORIES = ("tool_selection", "parameter_precision", "multi_step", "restraint", "error_recovery")
"""Tool selection, parameter precision, multi-step chains, restraint and refusal, error recovery."""
MAX_TURNS = 8
REFERENCE_DATE = "Wednesday, 2026-05-13"

SYSTEM_PROMPT = (
    "You are a helpful assistant that can call tools. Today is {date}; times are local to the user. "
    "Use a tool when the request needs information or an action that a tool provides, and answer "
    "directly when it does not. Never make up tool results. When you are done, reply to the user in plain text."
)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One scenario; its rules and environment are checked here so a bad file fails before any request."""
    row = strip_nulls(row)
    sid = str(row["id"])
    if row["category"] not in CATEGORIES:
        raise ValueError(f"{sid}: category {row['category']!r} is not one of {list(CATEGORIES)}")
    if not isinstance(row["prompt"], str) or not row["prompt"].strip():
        raise ValueError(f"{sid}: 'prompt' must be a non-empty text")
    tools = [str(t) for t in row.get("tools", [])]
    tools_named(tools)
    environment = dict(row.get("environment", {}))
    World.from_environment(environment)
    parse_rules(row["scoring"], sid)
    return Sample(
        id=sid,
        input=row["prompt"],
        target=f"{row['category']}: 2 points",
        subject=row["category"],
        metadata={"title": str(row.get("title", "")), "category": row["category"], "tools": tools,
                  "environment": environment, "scoring": row["scoring"]},
    )


def prompt(sample: Sample) -> Messages:
    """The shared system prompt (with the fixed reference date) and the scenario's request."""
    return [{"role": "system", "content": SYSTEM_PROMPT.format(date=REFERENCE_DATE)},
            {"role": "user", "content": sample.input}]


def scenario_tools(sample: Sample) -> list[Tool]:
    """The tools offered in this scenario (all twelve unless it names some)."""
    return tools_named(sample.metadata.get("tools", []))


def environment(sample: Sample, workspace: Path) -> World:
    """A fresh mock world for the episode."""
    return World.from_environment(sample.metadata.get("environment", {}))


def score_toolcall15(episode: Episode, sample: Sample) -> Score:
    """The scenario's rules applied to the episode: points / 2, correct at 2 points."""
    outcome = score_episode(parse_rules(sample.metadata["scoring"], sample.id), episode)
    return Score(
        correct=outcome.points == 2,
        value=outcome.points / 2,
        extracted=outcome.points,
        expected=2,
        metadata={"points": outcome.points, "category": sample.metadata["category"], "reasons": outcome.reasons},
    )


_CALL_FIELDS = ("id", "name", "arguments", "turn", "parsed", "result", "error", "duration", "truncated", "output_chars")


def episode_from_record(record: Mapping[str, Any]) -> Episode:
    """The episode as a JSONL record keeps it with ``[run] trajectories = "inline"`` (tool calls,
    final answer, stop reason); ValueError when the record holds no trajectory."""
    trajectory = record.get("trajectory")
    if not isinstance(trajectory, Mapping) or not isinstance(trajectory.get("tool_calls"), list):
        raise ValueError('toolcall15 rescoring needs the trajectory in each record: run with '
                         '[run] trajectories = "inline"')
    calls = [ToolCallRecord(**{k: c[k] for k in _CALL_FIELDS if k in c}) for c in trajectory["tool_calls"]]
    agent = record.get("agent") or {}
    return Episode(
        tool_calls=calls,
        replies=[Reply(text=str(record.get("model_answer") or ""), model=str(record.get("model") or ""))],
        stop_reason=agent.get("stop_reason") or "final",
        turns=int(record.get("turn_count") or 0),
    )


NO_TRAJECTORY = 'not rescored: the record holds no trajectory (run with [run] trajectories = "inline")'


def rescore_record(record: dict[str, Any], sample: Sample) -> Score:
    """``jeval rescore`` (scorer ``toolcall15``): the scenario's rules applied again to the record's
    inline trajectory.

    A record without one keeps its stored verdict, with ``rescore_note`` saying why.
    """
    if not isinstance(record.get("trajectory"), Mapping):
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore_note": NO_TRAJECTORY})
    return score_toolcall15(episode_from_record(record), sample)


def _points(record: Mapping[str, Any]) -> tuple[str | None, int | None]:
    meta = record.get("scoring_metadata") or {}
    points = meta.get("points")
    category = meta.get("category") or record.get("subject")
    return (str(category) if category else None), (int(points) if isinstance(points, (int, float)) else None)


def summarize_toolcall15(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Total points and, per category, points, the maximum, the percentage and the scenario count.

    Records without points (errors) count as 0 points; the headline ``toolcall15_score``
    is the mean of the category percentages over categories that ran.
    """
    per: dict[str, dict[str, Any]] = {}
    total = 0
    for record in records:
        category, points = _points(record)
        if category is None:
            continue
        entry = per.setdefault(category, {"points": 0, "max_points": 0, "scenarios": 0})
        entry["points"] += points or 0
        entry["max_points"] += 2
        entry["scenarios"] += 1
        total += points or 0
    for entry in per.values():
        entry["percent"] = round(100 * entry["points"] / entry["max_points"], 1) if entry["max_points"] else None
    ordered = {c: per[c] for c in (*CATEGORIES, *sorted(set(per) - set(CATEGORIES))) if c in per}
    percents = [e["percent"] for e in ordered.values() if e["percent"] is not None]
    return {
        "toolcall15_points": total,
        "toolcall15_max_points": sum(e["max_points"] for e in ordered.values()),
        "toolcall15_score": round(sum(percents) / len(percents), 1) if percents else None,
        "toolcall15_categories": ordered,
    }


BENCHMARK = Benchmark(
    name="toolcall15",
    category="agentic",
    description="ToolCall-15-style tool use: selection, precision, chains, restraint, recovery (0/1/2 points)",
    bundled_files=("data/scenarios.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="toolcall15",
    scoring="rule-based per scenario: 2 pass, 1 partial, 0 fail; value = points / 2",
    sample_count=15,
    summarize_extra=summarize_toolcall15,
    backends=("agent",),
    agent=AgentSpec(tools=scenario_tools, environment=environment, max_turns=MAX_TURNS),
)


def test_toolcall15(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct at 2 points (the scenario's pass rules hold); 1 point is a partial pass."""
    score(score_toolcall15(episode, sample))


@register_scorer("toolcall15", needs_sample=True)
def record_toolcall15(record: dict[str, Any], sample: Sample) -> Score:
    """toolcall15: the scenario's rules on the record's inline trajectory (else the stored verdict)."""

    result: Score = rescore_record(record, sample)
    return result
