"""External agent backends: a foreign agent CLI per episode, behind a recording proxy."""

from __future__ import annotations

from pytest_jeval.agents.external.base import (
    BACKENDS,
    AgentInvocation,
    BackendOptions,
    ExternalAgent,
    default_answer,
    get_agent,
    register_agent,
    registered_agents,
)

__all__ = ["BACKENDS", "AgentInvocation", "BackendOptions", "ExternalAgent", "default_answer", "get_agent",
           "register_agent", "registered_agents"]
