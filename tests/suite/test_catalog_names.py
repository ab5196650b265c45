"""The catalog finds a built-in benchmark whose name has a hyphen by its module (``ama-bench`` in
``ama_bench/bench_ama_bench.py``) without walking the package."""

from __future__ import annotations

import pytest

from pytest_jeval.suite.catalog import builtin_index, builtin_module


@pytest.mark.parametrize("name", ["ama-bench", "lifelong-agent", "deepplanning", "retail", "gsm8k"])
def test_the_fast_path_finds_the_module_the_index_has(name: str) -> None:
    assert builtin_module(name) == builtin_index()[name]


def test_a_module_defining_another_name_is_not_taken() -> None:
    assert builtin_module("ama_bench") is None  # the module's benchmark is "ama-bench"
    assert builtin_module("no-such-bench") is None
