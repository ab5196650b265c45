"""The external agent backend registry: what every registered backend promises, and the built-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.agents.external.base import BACKENDS, AgentInvocation, BackendOptions, get_agent
from pytest_jeval.core.registry import RegistryError
from pytest_jeval.suite.config import backend_names

#: The built-in backends as of this writing: none may disappear (new ones are welcome).
BUILTIN_MINIMUM = {"command", "hermes", "openclaw"}


def test_the_built_in_backends_are_registered() -> None:
    assert BUILTIN_MINIMUM <= set(BACKENDS.names()), sorted(BUILTIN_MINIMUM - set(BACKENDS.names()))


def test_every_backend_makes_an_agent_of_its_name_that_a_suite_can_name(tmp_path: Path) -> None:
    options = BackendOptions(benchmark="b", command=("true", "--prompt-file", "{prompt_file}"))
    suite_names = set(backend_names())
    usable = []
    for name, factory in BACKENDS.items():
        assert name in suite_names, name  # `backend = "<name>"` is a valid suite value
        assert (factory.__doc__ or "").strip(), name  # the description `jeval list` shows
        agent = get_agent(name, options)
        assert agent.name == name
        reason = agent.check()
        if reason is not None:  # not usable here: it says why (a missing binary, with its install command)
            assert reason.strip(), name
            continue
        invocation = agent.invocation(prompt_file=tmp_path / "prompt.md", workspace=tmp_path / "w",
                                      home=tmp_path / "h", model="m", base_url="http://127.0.0.1:9/v1",
                                      api_key="jeval-episode-dummy")
        assert isinstance(invocation, AgentInvocation) and invocation.argv, name
        assert "jeval-episode-dummy" not in " ".join(invocation.argv), name  # never the key on the command line
        usable.append(name)
    assert "command" in usable  # runs wherever its command does (here: true)


def test_an_unknown_backend_names_the_registered_ones() -> None:
    with pytest.raises(RegistryError, match=r"the registered external agent backends are: .*command"):
        get_agent("no-such-agent")
