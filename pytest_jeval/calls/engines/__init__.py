"""Engines: how a model is reached, by name (``engine = "..."`` in ``[[models]]``, ``[judge]``, ``[user]``).

An engine makes the client of an :class:`~pytest_jeval.core.chat.Endpoint`, sends one
:class:`~pytest_jeval.core.chat.ChatRequest` on it and checks that the endpoint answers. The
call layer (:class:`~pytest_jeval.calls.scheduler.CallCore`, the warm-up) asks :data:`ENGINES`
for ``endpoint.engine`` and never names an engine module itself.

Built in: ``openai`` (any OpenAI-compatible endpoint, :mod:`.openai_compat`), the same protocol under
the names ``cloud``, ``vllm``, ``sglang``, ``ollama`` and ``llamacpp`` (each with its usual local
URL as the default), and ``local``, the bundled SmolLM2 served on 127.0.0.1 (:mod:`.local`).
A package adds one through the ``pytest_jeval.engines`` entry-point group
(``name = "package.module:ENGINE"``); each engine imports its SDK lazily.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from pytest_jeval.core.chat import ChatRequest, Endpoint, Reply
from pytest_jeval.core.registry import Registry


@dataclasses.dataclass(frozen=True)
class EndpointCheck:
    """What the session-start check found at one endpoint."""

    problem: str | None = None
    """Why the endpoint is unusable (dead, key refused), or None."""
    models: tuple[str, ...] | None = None
    """The model ids it lists (``GET /v1/models``); None when it lists none (or has no such route)."""


async def check_endpoint(engine: Engine, client: Any, endpoint: Endpoint) -> EndpointCheck:
    """``engine.check`` where the engine has one (it lists the models), else its ``preflight``."""
    check = getattr(engine, "check", None)
    if check is not None:
        found: EndpointCheck = await check(client, endpoint)
        return found
    return EndpointCheck(problem=await engine.preflight(client, endpoint))


@runtime_checkable
class Engine(Protocol):
    """What the call layer needs from an engine."""

    description: str
    """One line for ``jeval list``."""
    default_base_url: str | None
    """The base URL used when neither the suite nor the environment gives one (None: the SDK's default)."""
    serves_locally: bool
    """True when the session starts the engine's server itself (its URL is filled in then)."""

    def make_client(self, endpoint: Endpoint) -> Any:
        """A new client for ``endpoint``, created on the event loop that will use it."""

    async def chat(self, client: Any, endpoint: Endpoint, request: ChatRequest) -> Reply:
        """Send ``request``; a :class:`~pytest_jeval.core.chat.Reply`, or
        :class:`~pytest_jeval.core.chat.EndpointError` once retries are spent."""

    async def preflight(self, client: Any, endpoint: Endpoint) -> str | None:
        """Why ``endpoint`` is unusable (dead, key refused), or None. An engine may also define
        ``async check(client, endpoint) -> EndpointCheck``, which lists the models too (the session then
        refuses a model the endpoint does not list)."""

    async def close(self, client: Any) -> None:
        """Release a client made by :meth:`make_client`."""


def _check(name: str, member: Any) -> Engine:
    if not isinstance(member, Engine):
        raise TypeError(f"{member!r} is not an engine (it needs description, default_base_url, serves_locally, "
                        "make_client, chat, preflight and close)")
    return member


ENGINES: Registry[Engine] = Registry("engines", kind="engine", check=_check, builtins={
    "openai": "pytest_jeval.calls.engines.openai_compat:OPENAI",
    "cloud": "pytest_jeval.calls.engines.openai_compat:CLOUD",
    "vllm": "pytest_jeval.calls.engines.openai_compat:VLLM",
    "sglang": "pytest_jeval.calls.engines.openai_compat:SGLANG",
    "ollama": "pytest_jeval.calls.engines.openai_compat:OLLAMA",
    "llamacpp": "pytest_jeval.calls.engines.openai_compat:LLAMACPP",
    "local": "pytest_jeval.calls.engines.local:LOCAL",
})
"""Every engine by name: the built-ins above, then the ``pytest_jeval.engines`` entry points."""


def get_engine(name: str) -> Engine:
    """The engine registered as ``name`` (:class:`~pytest_jeval.core.registry.RegistryError` otherwise)."""
    return ENGINES.get(name)


__all__ = ["ENGINES", "Engine", "get_engine"]
