"""What the episodes of one (benchmark, model) pair need, built by the session from the plan.

The agents layer never sees the suite or the plan: the session (:mod:`pytest_jeval.session.episodes`)
builds one :class:`EpisodeSetup` per pair and hands it to the episode runner
(:class:`~pytest_jeval.agents.episodes.EpisodeRunner`), which starts each sample's episode from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_jeval.agents.loop import Limits
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.agents.tool import Tool
from pytest_jeval.calls.settings import RequestSettings, build_request
from pytest_jeval.core.chat import ChatRequest, Messages, PromptLike, as_messages
from pytest_jeval.core.sample import Sample, repeat_nonce

if TYPE_CHECKING:
    from pytest_jeval.agents.external.base import ExternalAgent
    from pytest_jeval.agents.memory import Recall


@dataclasses.dataclass(frozen=True)
class EpisodeSetup:
    """One (benchmark, model) pair's episodes: the agent side, the limits and how requests are built."""

    benchmark: str
    """The benchmark entry's key (its ``label``, else its ``name``)."""
    model: str
    """The model id sent to the endpoint."""
    spec: AgentSpec
    """The benchmark's agent side (its own :class:`AgentSpec`, else the default one)."""
    prompt: Callable[[Sample], PromptLike | None]
    """The benchmark's prompt, used when ``spec.prompt`` is None."""
    settings: RequestSettings
    """What every request of the pair carries (temperature, token limit, system prompt, ...)."""
    limits: Limits
    """The episode's limits (benchmark > ``[run]`` > built-in, capped by the benchmark's own)."""
    builtin_tools: Sequence[Tool] = ()
    """The built-in tools the suite (or the benchmark's ``default_tools``) names, when the benchmark
    brings no tools of its own."""
    request_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """The benchmark's extra request parameters (``Benchmark.request_options``)."""
    tool_timeout: float = 30.0
    """Seconds one tool call may run (``ctx.timeout``)."""
    user_settings: RequestSettings | None = None
    """The ``[user]`` model's settings (simulated users), or None."""
    external: ExternalAgent | None = None
    """The external agent CLI that runs the episode instead of the built-in loop, or None."""
    backend: str = "agent"
    """``agent`` (a named agent drives the episode) or the external backend's name."""
    agent: str = "orchestrator"
    """The named agent (:data:`~pytest_jeval.agents.named.AGENTS`) that drives the episode."""
    sequential: bool = False
    """Episode mode: the pair's samples run as one sequence, each episode with a memory of earlier ones."""
    memory_policy: str = "none"
    """Episode mode: the memory policy (:data:`~pytest_jeval.agents.memory.MEMORY_POLICIES`)."""
    memory_size: int = 0
    """Episode mode: how many earlier episodes the policy may keep."""

    def tools(self, sample: Sample) -> list[Tool]:
        """The tools of one episode: the benchmark's own, else the built-ins."""
        own = self.spec.tools
        if own:
            return list(own(sample) if callable(own) else own)
        return list(self.builtin_tools)

    def declines(self, sample: Sample) -> bool:
        """True when the benchmark runs no episode for ``sample``: its prompt (the agent prompt, else the
        benchmark's) is None. The episode is then empty, with no model call, and the test scores it."""
        return (self.spec.prompt(sample) if self.spec.prompt is not None else self.prompt(sample)) is None

    def first_messages(self, sample: Sample, recall: Recall | None = None) -> Messages:
        """The episode's opening messages: the agent prompt (or the benchmark's prompt), with the system prompt;
        in episode mode (``recall``) the benchmark's memory prompt, given what the episode remembers."""
        if recall is not None and self.spec.memory is not None:
            prompt: PromptLike | None = self.spec.memory(sample, recall.items)
        else:
            prompt = self.spec.prompt(sample) if self.spec.prompt is not None else self.prompt(sample)
        if prompt is None:
            raise ValueError(f"{self.benchmark} has no prompt for sample {sample.id!r}")
        return as_messages(prompt, self.settings.system_prompt)

    def request(self, conversation: Messages, **options: Any) -> ChatRequest:
        """The chat request for ``conversation`` under the pair's settings (``build_request``)."""
        return build_request(self.settings, conversation, **options)


def nonce_of(sample: Sample) -> int:
    """The repeat index of a repeated sample (``<id>@<n>``: n - 1; 0 otherwise), part of its requests' cache key."""
    return repeat_nonce(sample)
