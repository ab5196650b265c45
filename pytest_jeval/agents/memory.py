"""Episode mode's memory: what an episode remembers of the earlier episodes of its sequence.

In episode mode (docs/agents.md, "Episode mode") the samples of a benchmark run one after another on
one model, and each episode is given a memory of earlier ones. The session keeps the outcomes of the
sequence (:mod:`pytest_jeval.session.sequence`); a **memory policy** picks which earlier episodes an
episode remembers (:data:`MEMORY_POLICIES`); the benchmark's ``AgentSpec.memory`` turns them into the
episode's opening messages. The episode's record says what fed it (:meth:`Recall.info`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pytest_jeval.core.chat import Messages
from pytest_jeval.core.sample import Sample


@dataclasses.dataclass(frozen=True)
class Recollection:
    """One earlier episode of the sequence, as a memory policy sees it."""

    sample: Sample
    """The earlier episode's sample (its task)."""
    position: int
    """Its place in the sequence (0-based)."""
    correct: bool | None
    """Its verdict: True, False, or None (unscored or errored)."""
    turns: tuple[dict[str, Any], ...] = ()
    """Its conversation after the task message: the agent's replies, tool calls and results, the user's
    later turns (the opening system and task messages, which held that episode's own memory, are left out)."""


@dataclasses.dataclass(frozen=True)
class Recall:
    """What one episode of a sequence remembers, and why."""

    policy: str
    """The memory policy's name (a key of :data:`MEMORY_POLICIES`)."""
    size: int
    """How many earlier episodes the policy may keep."""
    position: int
    """This episode's place in the sequence (0-based)."""
    items: tuple[Recollection, ...] = ()
    """The earlier episodes the policy chose, oldest first."""
    missing: tuple[str, ...] = ()
    """Earlier episodes with no outcome to remember: not run in this session and with no stored record."""

    def info(self) -> dict[str, Any]:
        """The record's ``agent.memory``: the policy, this episode's position, which episodes fed it."""
        return {"policy": self.policy, "size": self.size, "position": self.position,
                "fed_by": [r.sample.id for r in self.items], "missing": list(self.missing)}


MemoryPolicy = Callable[[Sequence[Recollection], int], list[Recollection]]
"""Choose from the earlier episodes (oldest first) those an episode remembers, at most ``size``."""


def recent_successes(earlier: Sequence[Recollection], size: int) -> list[Recollection]:
    """The last ``size`` earlier episodes that were correct (LifelongAgentBench's previous-sample utilization)."""
    return [r for r in earlier if r.correct is True][-size:] if size > 0 else []


def recent(earlier: Sequence[Recollection], size: int) -> list[Recollection]:
    """The last ``size`` earlier episodes, whatever their verdict."""
    return list(earlier[-size:]) if size > 0 else []


def nothing(earlier: Sequence[Recollection], size: int) -> list[Recollection]:
    """No memory: every episode starts fresh (the baseline a memory policy is compared with)."""
    return []


MEMORY_POLICIES: dict[str, MemoryPolicy] = {
    "recent-successes": recent_successes,
    "recent": recent,
    "none": nothing,
}
"""The named memory policies (``[run] episode_memory``); ``recent-successes`` is the default."""

DEFAULT_POLICY = "recent-successes"
DEFAULT_SIZE = 3


def turns_after_task(messages: Messages) -> tuple[dict[str, Any], ...]:
    """A conversation without its opening: the messages after the first ``user`` message."""
    for i, message in enumerate(messages):
        if message.get("role") == "user":
            return tuple(dict(m) for m in messages[i + 1:])
    return ()


def recall(policy: str, size: int, position: int, earlier: Sequence[Recollection],
           missing: Sequence[str] = ()) -> Recall:
    """The :class:`Recall` of the episode at ``position`` under ``policy`` (a KeyError names the policies)."""
    if policy not in MEMORY_POLICIES:
        raise KeyError(f"unknown memory policy {policy!r}; the policies are: {', '.join(MEMORY_POLICIES)}")
    return Recall(policy=policy, size=size, position=position, items=tuple(MEMORY_POLICIES[policy](earlier, size)),
                  missing=tuple(missing))
