"""The named agent registry: what every registered agent promises, and the built-ins among them."""

from __future__ import annotations

import inspect

import pytest

from pytest_jeval.agents.named import AGENTS, DEFAULT_AGENT, NamedAgent
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.core.registry import RegistryError

#: The built-in agents as of this writing: none may disappear (new ones are welcome).
BUILTIN_MINIMUM = {"orchestrator", "oracle", "nop"}


def test_the_built_in_agents_are_registered() -> None:
    assert BUILTIN_MINIMUM <= set(AGENTS.names()), sorted(BUILTIN_MINIMUM - set(AGENTS.names()))
    assert DEFAULT_AGENT in AGENTS


def test_every_agent_is_described_found_under_its_name_and_says_what_it_refuses() -> None:
    agents = dict(AGENTS.items())
    assert agents, "no agent registered"
    plain = AgentSpec()  # a benchmark's agent side with nothing set: no tools, no gold solution
    for name, agent in agents.items():
        assert isinstance(agent, NamedAgent), name
        assert AGENTS.get(name) is agent, name
        assert agent.description.strip() and "\n" not in agent.description, name  # one line for `jeval list`
        assert isinstance(agent.calls_model, bool), name
        assert inspect.iscoroutinefunction(agent.run), name
        reason = agent.refuses(plain)
        assert reason is None or (isinstance(reason, str) and reason.strip()), (name, reason)
    assert AGENTS.get("oracle").refuses(plain)  # no gold solution to replay
    assert not AGENTS.get("oracle").calls_model and not AGENTS.get("nop").calls_model
    assert AGENTS.get(DEFAULT_AGENT).calls_model


def test_an_unknown_agent_names_the_registered_ones() -> None:
    with pytest.raises(RegistryError) as info:
        AGENTS.get("no-such-agent")
    assert f"the registered agents are: {', '.join(AGENTS.names())}" in str(info.value)
