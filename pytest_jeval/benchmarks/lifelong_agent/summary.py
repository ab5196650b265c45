"""The summary of a lifelong sequence: accuracy over the sequence and its trend, early against late episodes.

Records are put in sequence order by their ``agent.memory.position``; errored episodes (harness
failures) are left out, as in the accuracy. What a do-nothing agent passes is counted from each
record's ``scoring_metadata.do_nothing_passes`` (database tasks; ``agent = "nop"`` measures any task).
"""

from __future__ import annotations

from typing import Any


def _position(record: dict[str, Any]) -> int:
    agent = record.get("agent")
    memory = agent.get("memory") if isinstance(agent, dict) else None
    position = memory.get("position") if isinstance(memory, dict) else None
    return position if isinstance(position, int) else 1 << 30


def _accuracy(records: list[dict[str, Any]]) -> float | None:
    return sum(1 for r in records if r.get("is_correct") is True) / len(records) if records else None


def summarize_sequence(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``sequence``: episodes, accuracy, early (first half) and late (second half) accuracy, ``trend``
    (late minus early), accuracy per quarter, the memory policy; ``do_nothing_passes``."""
    ordered = [r for r in sorted(records, key=_position) if r.get("error") is None]
    half = len(ordered) // 2
    early, late = ordered[:half], ordered[half:]
    quarters = [ordered[len(ordered) * q // 4:len(ordered) * (q + 1) // 4] for q in range(4)]
    early_acc, late_acc = _accuracy(early), _accuracy(late)
    first = next((r for r in records if isinstance(r.get("agent"), dict) and r["agent"].get("memory")), None)
    policy = first["agent"]["memory"].get("policy") if first is not None else None
    return {
        "sequence": {
            "episodes": len(ordered),
            "memory_policy": policy,
            "accuracy": _accuracy(ordered),
            "early_accuracy": early_acc,
            "late_accuracy": late_acc,
            "trend": late_acc - early_acc if early_acc is not None and late_acc is not None else None,
            "quarter_accuracy": [_accuracy(q) for q in quarters],
        },
        "do_nothing_passes": sum(1 for r in records
                                 if (r.get("scoring_metadata") or {}).get("do_nothing_passes") is True),
    }
