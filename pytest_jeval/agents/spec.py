"""How a benchmark runs as an agent: its tools, its environment, its simulated user."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from pytest_jeval.agents.tool import Tool
from pytest_jeval.core.chat import Messages, PromptLike, Reply
from pytest_jeval.core.sample import Sample

AsyncChat = Callable[[Messages], Awaitable[Reply]]
"""Send one chat (messages) to a model through the plugin's scheduler and await the reply."""


@dataclasses.dataclass(frozen=True)
class NewSession:
    """A user message that opens a new session: from it on, the model sees only the episode's system
    messages and what follows (the episode's record keeps the whole conversation). A
    :class:`UserSimulator` returns one to play a user who comes back later (PinchBench's multi-session tasks)."""

    text: str


class UserSimulator(Protocol):
    """The user side of a multi-turn task (tau-bench style)."""

    async def next_message(self, conversation: Messages) -> str | NewSession | None:
        """The user's next message after the agent answered, or None when the user is done.

        ``conversation`` is what the user can see: the user and assistant messages
        with text (no system prompt, no tool traffic). A :class:`NewSession` opens a new session.
        """
        ...


@dataclasses.dataclass(frozen=True)
class ToolStep:
    """One step of a gold solution: call the tool ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SayStep:
    """One step of a gold solution: answer with ``text`` (the last step ends the episode)."""

    text: str


OracleStep = ToolStep | SayStep
"""A step of the gold solution the ``oracle`` agent replays."""

Oracle = Callable[[Sample], Sequence[OracleStep]]
"""A benchmark's gold solution for one sample, as the steps a perfect agent takes."""


UserFactory = Callable[[Sample, "AsyncChat | None"], UserSimulator]
"""Make the episode's user: the sample, and the ``[user]`` model (None when the suite has no ``[user]``)."""


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """A benchmark's agent side; set it as ``Benchmark(agent=AgentSpec(...))``.

    Without one, a benchmark that allows the agent backend runs its ordinary prompt
    with the suite's ``tools`` (the built-ins named there).
    """

    tools: Sequence[Tool] | Callable[[Sample], Sequence[Tool]] = ()
    """The benchmark's own tools (a list, or one list per sample). When set, the suite's
    ``tools`` key is ignored for this benchmark."""
    default_tools: Sequence[str] = ()
    """Built-in tools (by name) used when the suite's ``tools`` names none."""
    environment: Callable[[Sample, Path], Any] | None = None
    """Make the per-episode state (a mock API, a database) before the first turn; the
    tools get it as ``ctx.state`` and the test as ``episode.state``."""
    attachments: Callable[[Sample], Sequence[Path]] | None = None
    """Files copied into the episode's workspace before the first turn."""
    prompt: Callable[[Sample], PromptLike] | None = None
    """The first messages of the episode (default: the benchmark's ``prompt``)."""
    user: UserFactory | None = None
    """A simulated user: after each answer without tool calls the user may speak again."""
    max_turns: int | None = None
    """The benchmark's own cap on model turns (the suite's ``max_turns`` may lower it)."""
    execute: bool = True
    """False: the first reply's tool calls are the answer and are not run (BFCL single-turn)."""
    tool_choice: str | None = None
    """``auto`` (the API's default when None), ``required`` or ``none``."""
    parallel_tool_calls: bool | None = None
    """Sent when not None."""
    oracle: Oracle | None = None
    """The sample's gold solution, replayed step by step through the benchmark's own tools by the
    ``oracle`` agent (which validates the environment: it must score 1); None when the benchmark has none."""
