"""The sandbox provider registry: what every registered provider promises, and the built-ins among them."""

from __future__ import annotations

import re

import pytest

from pytest_jeval.sandbox.shell.providers import SANDBOXES, Provider, ProviderUnavailable, get_provider

#: The built-in providers as of this writing: none may disappear (new ones are welcome).
BUILTIN_MINIMUM = {"bubblewrap", "docker"}


def test_the_built_in_providers_are_registered() -> None:
    assert BUILTIN_MINIMUM <= set(SANDBOXES.names()), sorted(BUILTIN_MINIMUM - set(SANDBOXES.names()))
    assert all(SANDBOXES.is_builtin(name) for name in BUILTIN_MINIMUM)


def test_every_provider_is_a_provider_that_says_whether_it_can_run_here() -> None:
    providers = dict(SANDBOXES.items())
    assert providers, "no sandbox provider registered"
    for name, cls in providers.items():
        assert isinstance(cls, type) and issubclass(cls, Provider), name
        assert isinstance(cls.supported, bool), name
        provider = get_provider(name)
        assert isinstance(provider, cls), name
        try:
            provider.check()  # runs here, or says why not (naming the install command)
        except ProviderUnavailable as exc:
            assert str(exc).strip(), name


def test_an_unknown_provider_names_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=re.escape(f"the registered sandbox providers are: {', '.join(SANDBOXES.names())}")):
        get_provider("no-such-provider")
