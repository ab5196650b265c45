"""The interface of an external agent backend: how to start one agent CLI for one episode.

An adapter (``hermes``, ``openclaw``, ``command``) registers a factory under its backend
name; the runner (:mod:`pytest_jeval.external.runner`) asks it, per episode, for an
:class:`AgentInvocation` and runs it against the episode's recording proxy.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_jeval.config import BenchmarkEntry


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


AgentFactory = Callable[["BenchmarkEntry"], ExternalAgent]
"""Make the agent for one ``[[benchmarks]]`` entry."""

_AGENTS: dict[str, AgentFactory] = {}
_LOCK = threading.Lock()


def register_agent(name: str, factory: AgentFactory) -> None:
    """Register the factory of backend ``name`` (a later registration replaces an earlier one)."""
    with _LOCK:
        _AGENTS[name] = factory


def _load_builtins() -> None:
    """Import the adapters that ship with the plugin (each registers itself)."""
    import importlib

    for module in ("pytest_jeval.external.command", "pytest_jeval.external.hermes",
                   "pytest_jeval.external.openclaw"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the adapter exists but fails to import: say so
                raise


def get_agent(name: str, entry: BenchmarkEntry) -> ExternalAgent:
    """The agent of backend ``name`` for ``entry``; KeyError naming the known backends when unknown."""
    if name not in _AGENTS:
        _load_builtins()
    with _LOCK:
        factory = _AGENTS.get(name)
        known = ", ".join(sorted(_AGENTS)) or "none"
    if factory is None:
        raise KeyError(f"no external agent backend {name!r} (known: {known})")
    return factory(entry)


def registered_agents() -> list[str]:
    """The names registered so far (after loading the built-in adapters)."""
    _load_builtins()
    with _LOCK:
        return sorted(_AGENTS)
