"""External agent backends: a foreign agent CLI per episode, behind a recording proxy."""

from __future__ import annotations

from pytest_jeval.external.base import (
    AgentInvocation,
    ExternalAgent,
    default_answer,
    get_agent,
    register_agent,
    registered_agents,
)

EXTERNAL_BACKENDS = ("hermes", "openclaw", "command")
"""The backend names that run an external agent."""

__all__ = ["EXTERNAL_BACKENDS", "AgentInvocation", "ExternalAgent", "default_answer", "get_agent",
           "register_agent", "registered_agents"]
