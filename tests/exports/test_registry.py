"""The exporter registry: what every registered exporter promises, and the built-ins among them."""

from __future__ import annotations

import pytest

from pytest_jeval.core.registry import RegistryError
from pytest_jeval.exports import EXPORTERS, Exporter

#: The built-in exporters as of this writing: none may disappear (new ones are welcome).
BUILTIN_MINIMUM = {"wandb", "sheets"}


def test_the_built_in_exporters_are_registered() -> None:
    assert BUILTIN_MINIMUM <= set(EXPORTERS.names()), sorted(BUILTIN_MINIMUM - set(EXPORTERS.names()))
    assert all(EXPORTERS.is_builtin(name) for name in BUILTIN_MINIMUM)


def test_every_exporter_is_titled_and_says_what_it_needs() -> None:
    exporters = dict(EXPORTERS.items())
    assert exporters, "no exporter registered"
    for name, exporter in exporters.items():
        assert isinstance(exporter, Exporter), name  # title, extra, modules, key, configure(plan, named)
        assert EXPORTERS.get(name) is exporter, name
        assert exporter.title.strip() and "\n" not in exporter.title, name  # its name in messages
        assert exporter.key.strip(), name  # the suite key that turns it on, for messages
        assert isinstance(exporter.extra, str), name
        assert all(isinstance(m, str) and m for m in exporter.modules), name  # checked before any request
        assert callable(exporter.configure), name


def test_an_unknown_exporter_names_the_registered_ones() -> None:
    with pytest.raises(RegistryError) as info:
        EXPORTERS.get("no-such-exporter")
    assert f"the registered exporters are: {', '.join(EXPORTERS.names())}" in str(info.value)
