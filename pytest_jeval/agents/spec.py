"""How a benchmark runs as an agent: its tools, its environment, its simulated user."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_jeval.agents.tool import Tool
from pytest_jeval.core.chat import Messages, PromptLike, Reply
from pytest_jeval.core.sample import Sample

if TYPE_CHECKING:
    from pytest_jeval.agents.memory import Recollection
    from pytest_jeval.sandbox.confined import AgentHost

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

StateOracle = Callable[[Sample, Any], Sequence[OracleStep]]
"""A gold solution that depends on the episode's environment state (say, the address of a web
application started for the episode)."""


Memory = Callable[[Sample, "Sequence[Recollection]"], PromptLike]
"""Episode mode: the episode's opening messages given the earlier episodes it remembers (oldest first)."""

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
    needs_user_model: bool = False
    """True when the simulated user is always played by the suite's ``[user]`` model (it has no scripted
    fallback): a suite without ``[user]`` is refused before any request, unless the named agent never
    calls the model (``oracle``, ``nop``: the user is not consulted)."""
    max_turns: int | None = None
    """The benchmark's own cap on model turns (the suite's ``max_turns`` may lower it)."""
    execute: bool = True
    """False: the first reply's tool calls are the answer and are not run (BFCL single-turn)."""
    tool_choice: str | None = None
    """``auto`` (the API's default when None), ``required`` or ``none``."""
    parallel_tool_calls: bool | None = None
    """Sent when not None."""
    oracle: Oracle | StateOracle | None = None
    """The sample's gold solution, replayed step by step through the benchmark's own tools by the
    ``oracle`` agent (which validates the environment: it must score 1); None when the benchmark has none.
    A function of two parameters also gets the episode's environment state (the addresses of servers
    started for the episode)."""
    cleanup: Callable[[Any], None] | None = None
    """Release an episode's environment state (stop its servers, close its browser) once the item is done
    with it: after its test ran, or when the episode failed. None: nothing to release."""
    memory: Memory | None = None
    """Episode mode: how an episode is told what it remembers of earlier episodes of its sequence (its
    opening messages). A benchmark with a memory can run in episode mode (``[run] episode_mode = true``);
    one without never does. See docs/agents.md, "Episode mode"."""
    sequential: bool = False
    """True: the benchmark always runs in episode mode (it is about learning across a sequence); needs ``memory``."""
    no_external: str | None = None
    """Why external agent CLIs (``backend = "command"``, ``"hermes"``, ...) cannot run this benchmark (they run
    on the host with their own tools; a task environment they cannot reach is such a reason): the suite is
    refused with it before any request. None: they can."""
    finish: Callable[[Any, Path], Any] | None = None
    """Called once the agent has ended, before the workspace is removed, with the environment's state and the
    workspace: it collects what the agent left there (a checkout's ``git diff``). What it returns becomes the
    episode's state (``episode.state``), whichever agent ran. An exception in it makes the episode an error."""
    external_host: Callable[[Any], AgentHost | None] | None = None
    """Where an external agent CLI runs, given the episode's environment state (made with
    ``workspace_environment``): a place inside the task's own environment
    (:class:`~pytest_jeval.sandbox.confined.AgentHost`: its file system and tools, the same containment as the
    agents' own sandbox). None: external agents run in their own sandbox with the episode's workspace. A state
    that cannot hold one (None) makes the episode an error with the reason."""
    workspace_environment: bool = False
    """True when ``environment`` prepares the episode's workspace itself (a repository checkout): an external
    agent CLI then gets the same environment in its workspace, and ``finish`` runs there after it ends.
    False: external agents start from the attachments alone (the environment is the built-in loop's)."""
