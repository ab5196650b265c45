"""Named agents: how an episode is driven (``agent = "..."`` on a benchmark, ``--agent`` on ``jeval run``).

A named agent gets the episode's parts (:class:`EpisodeParts`: the opening messages, the tools, the
model, the tool context, the limits, the simulated user) and returns the finished
:class:`~pytest_jeval.core.episode.Episode`. Built in, one module each:

* ``orchestrator`` (the default): the native function-calling loop (:mod:`pytest_jeval.agents.loop`);
* ``react``: a text-mode ReAct loop (Thought / Action / Action Input / Observation) for endpoints and
  models without native tool calling;
* ``simple``: one call, no tools;
* ``oracle``: replays the sample's gold solution (``AgentSpec.oracle``) through the benchmark's own
  tools, with no model call; it validates an environment (it must score 1);
* ``nop``: does nothing and ends; it validates a scorer (a do-nothing agent must not pass what needs action).

:data:`AGENTS` is the family's registry: a package adds an agent through the ``pytest_jeval.agents``
entry-point group (``name = "package.module:AGENT"``, an object with the :class:`NamedAgent` attributes).
A benchmark an agent cannot run refuses it before any request (:meth:`NamedAgent.refuses`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from pytest_jeval.agents.loop import CallModel, Limits
from pytest_jeval.agents.setup import EpisodeSetup
from pytest_jeval.agents.spec import AgentSpec, UserSimulator
from pytest_jeval.agents.tool import Tool, ToolContext
from pytest_jeval.core.chat import Messages
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.registry import Registry
from pytest_jeval.core.sample import Sample

DEFAULT_AGENT = "orchestrator"
"""The agent of a benchmark that runs as an agent and names none."""


@dataclasses.dataclass(frozen=True)
class EpisodeParts:
    """What a named agent drives one episode with (built by the episode runner)."""

    setup: EpisodeSetup
    sample: Sample
    messages: Messages
    """The opening messages (system prompt, the task)."""
    tools: list[Tool]
    call_model: CallModel
    """One model turn on ``conversation`` with the tools offered natively (schemas in the request)."""
    ctx: ToolContext
    limits: Limits
    user: UserSimulator | None = None
    """The simulated user of a multi-turn task, or None."""
    call_text: CallModel | None = None
    """One model turn on ``conversation`` with no tools offered (text-mode agents: ``react``, ``simple``);
    None where the runner gives none."""


@runtime_checkable
class NamedAgent(Protocol):
    """What the episode runner needs from a named agent."""

    description: str
    """One line for ``jeval list``."""
    calls_model: bool
    """False for agents that never call the model under test (``oracle``, ``nop``)."""

    def refuses(self, spec: AgentSpec) -> str | None:
        """Why this agent cannot run a benchmark with this agent side (checked before any request), or None."""

    async def run(self, parts: EpisodeParts) -> Episode:
        """Drive the episode to its end."""


def _check(name: str, member: Any) -> NamedAgent:
    if not isinstance(member, NamedAgent):
        raise TypeError(f"{member!r} is not an agent (description, calls_model, refuses(spec), async run(parts))")
    return member


AGENTS: Registry[NamedAgent] = Registry("agents", kind="agent", check=_check, modules=("pytest_jeval.agents.named",))
"""Every named agent (built in, registered in code, installed)."""


def register_agent(name: str, agent: NamedAgent) -> NamedAgent:
    """Make ``agent`` available as ``agent = "name"`` (a plugin may call it too)."""
    return AGENTS.register(name, agent)


__all__ = ["AGENTS", "DEFAULT_AGENT", "EpisodeParts", "NamedAgent", "register_agent"]
