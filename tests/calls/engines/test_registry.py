"""The engine registry: what every registered engine promises, and the built-ins among them."""

from __future__ import annotations

import pytest

from pytest_jeval.calls.engines import ENGINES, Engine, get_engine
from pytest_jeval.core.registry import RegistryError

#: The built-in engines as of this writing: none may disappear (new ones are welcome).
BUILTIN_MINIMUM = {"openai", "cloud", "vllm", "sglang", "ollama", "llamacpp", "local"}


def test_the_built_in_engines_are_registered() -> None:
    assert BUILTIN_MINIMUM <= set(ENGINES.names()), sorted(BUILTIN_MINIMUM - set(ENGINES.names()))
    assert all(ENGINES.is_builtin(name) for name in BUILTIN_MINIMUM)


def test_every_engine_is_usable_described_and_found_under_its_name() -> None:
    engines = dict(ENGINES.items())
    assert engines, "no engine registered"
    for name, engine in engines.items():
        assert isinstance(engine, Engine), name  # make_client, chat, preflight, close and the attributes
        assert get_engine(name) is engine, name
        assert engine.description.strip() and "\n" not in engine.description, name  # one line for `jeval list`
        url = engine.default_base_url
        assert url is None or url.startswith(("http://", "https://")), (name, url)
        assert isinstance(engine.serves_locally, bool), name
        if engine.serves_locally:
            assert url is None, name  # its URL is the server the session starts


def test_an_unknown_engine_names_the_registered_ones() -> None:
    with pytest.raises(RegistryError) as info:
        get_engine("no-such-engine")
    assert f"the registered engines are: {', '.join(ENGINES.names())}" in str(info.value)
