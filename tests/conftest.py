"""Shared fixtures: the real-format public data in tests/data, a local OpenAI-compatible server, the local_model skip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

# Imported once here: pytester's in-process runs drop the modules they import, and re-importing
# datasets (pyarrow extension types) or scipy (C extensions) in the same process fails.
# The plugin imports its heavy modules lazily; import them here for the same reason.
import datasets  # noqa: F401
import openai  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.gsm import SECRET, GsmScript, JevalProject, gsm_rows
from tests.support.paths import TEST_DATA

collect_ignore = ["data"]
"""tests/data is data: the Terminal-Bench task folders in it hold verifiers named test_*.py, never collected here."""



@pytest.fixture(scope="session")
def test_data() -> Path:
    """The folder of real-format public datasets in the repository, one folder each (read-only; see its READMEs)."""
    return TEST_DATA


def local_model_skip_reason() -> str | None:
    """Why the bundled local model cannot run here (no llama-cpp-python, or no SmolLM2 GGUF), or None when it can."""
    from pytest_jeval.calls.engines.local import LocalModelError, check_llama_cpp, find_bundled_gguf

    try:
        check_llama_cpp()
        find_bundled_gguf()
    except LocalModelError as exc:
        return f"local_model: {exc}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``local_model`` tests, with the reason, where llama-cpp-python or the GGUF is missing."""
    marked = [item for item in items if item.get_closest_marker("local_model") is not None]
    reason = local_model_skip_reason() if marked else None
    if reason is not None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def jeval_project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JevalProject]:
    """Ten GSM8K rows, a server that knows their answers (rows 1, 4 wrong; 2 garbage; 3 failing)."""
    rows = gsm_rows(test_data, 10)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = GsmScript(rows, wrong={1, 4}, garbage={2}, failing={3})
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    with FakeOpenAIServer(script, api_key=SECRET) as server:
        yield JevalProject(pytester, server, script)
