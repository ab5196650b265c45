"""The interface of an external agent backend: how to start one agent CLI for one episode.

An adapter (``hermes``, ``openclaw``, ``command``) is a factory in :data:`BACKENDS` under its backend
name; the runner (:mod:`pytest_jeval.agents.external.episode`) asks it, per episode, for an
:class:`AgentInvocation` and runs it against the episode's recording proxy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pytest_jeval.core.registry import Registry


def default_answer(stdout: str, stderr: str, status: int) -> str:
    """The agent's final answer by default: its standard output, stripped."""
    return stdout.strip()


@dataclasses.dataclass(frozen=True)
class AgentInvocation:
    """How to start the agent for one episode."""

    argv: list[str]
    """The command line; never contains the prompt text or any key."""
    env: dict[str, str]
    """The adapter's own environment variables (non-secret). The runner builds the agent's whole
    environment from scratch: ``PATH``, ``HOME`` (the episode home), ``LANG``, ``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY`` (the per-episode dummy) and ``JEVAL_MODEL``, then these on top (an adapter
    may override ``PATH``); nothing is inherited from the harness's environment."""
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    """Relative path (under the episode home) -> content, written before the agent starts."""
    answer_from: Callable[[str, str, int], str] = default_answer
    """``(stdout, stderr, exit status) -> final answer`` (default: stdout stripped)."""
    readable: tuple[str, ...] = ()
    """Host paths the agent needs to read besides what its command line names (see
    :func:`pytest_jeval.sandbox.confined.readable_paths`); shown read-only in its sandbox."""


class ExternalAgent(Protocol):
    """One external agent framework, configured for one benchmark entry."""

    name: str
    """The backend name (``hermes``, ``openclaw``, ``command``)."""

    def check(self) -> str | None:
        """Why the agent cannot run here (missing binary, wrong version), with the install
        command; None when it is usable. Called once at plan time."""
        ...

    def invocation(self, *, prompt_file: Path, workspace: Path, home: Path, model: str, base_url: str,
                   api_key: str) -> AgentInvocation:
        """The invocation of one episode. ``base_url`` is the episode's proxy (ending in ``/v1``),
        ``api_key`` the per-episode dummy key; the prompt is in ``prompt_file``."""
        ...


@dataclasses.dataclass(frozen=True)
class BackendOptions:
    """What a backend's factory learns of the benchmark entry it runs (built by the session)."""

    benchmark: str = ""
    """The benchmark entry's key."""
    command: tuple[str, ...] = ()
    """``backend = "command"``: the agent's command line with its placeholders."""


AgentFactory = Callable[[BackendOptions], ExternalAgent]
"""Make the agent of one ``[[benchmarks]]`` entry."""


def _check(name: str, factory: Any) -> AgentFactory:
    if not callable(factory):
        raise TypeError(f"{factory!r} is not a factory (a callable taking BackendOptions)")
    return factory  # type: ignore[no-any-return]


BACKENDS: Registry[AgentFactory] = Registry("backends", kind="external agent backend", check=_check, builtins={
    "command": "pytest_jeval.agents.external.command:make_agent",
    "hermes": "pytest_jeval.agents.external.hermes:make_agent",
    "openclaw": "pytest_jeval.agents.external.openclaw:make_agent",
})
"""External agent backends by name (``backend = "..."``): the built-ins above, then the
``pytest_jeval.backends`` entry points (``name = "package.module:factory"``)."""


def register_agent(name: str, factory: AgentFactory) -> None:
    """Register the factory of backend ``name`` (a later registration replaces an earlier one)."""
    BACKENDS.register(name, factory, replace=True)


def get_agent(name: str, options: BackendOptions | None = None) -> ExternalAgent:
    """The agent of backend ``name``; :class:`~pytest_jeval.core.registry.RegistryError` (a KeyError)
    naming the known backends when unknown."""
    return BACKENDS.get(name)(options or BackendOptions())


def registered_agents() -> list[str]:
    """The names of every external agent backend (built in, registered, installed)."""
    return BACKENDS.names()
