"""Shared fixtures: the real-format public data in tests/data, a local OpenAI-compatible server, the local_model skip."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Imported once here: pytester's in-process runs drop the modules they import, and re-importing
# datasets (pyarrow extension types) or scipy (C extensions) in the same process fails.
# The plugin imports its heavy modules lazily; import them here for the same reason.
import datasets  # noqa: F401
import openai  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

from pytest_jeval.scoring.numeric import gsm8k_gold
from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Fault, last_user_message

collect_ignore = ["data"]
"""tests/data is data: the Terminal-Bench task folders in it hold verifiers named test_*.py, never collected here."""

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = REPO / "tests" / "data"
SECRET = "sk-jeval-test-SECRET-4711"


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


@dataclass
class GsmScript:
    """Which GSM8K rows the test server answers right, wrong, with garbage, or not at all."""

    rows: list[dict[str, Any]]
    wrong: set[int] = field(default_factory=set)
    garbage: set[int] = field(default_factory=set)
    failing: set[int] = field(default_factory=set)

    def gold(self, index: int) -> str:
        return gsm8k_gold(self.rows[index]["answer"])

    def reply(self, index: int) -> Any:
        if index in self.failing:
            return Fault("500")
        if index in self.garbage:
            return "I like turtles."
        if index in self.wrong:
            return f"Let me think. Answer: {int(self.gold(index).replace(',', '')) + 1}"
        return f"Step by step... so the total is {self.gold(index)}.\nAnswer: {self.gold(index)}"

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        text = last_user_message(body)
        for i, row in enumerate(self.rows):
            if row["question"] in text:
                return self.reply(i)
        return Answer("no idea")

    @property
    def expected_correct(self) -> set[int]:
        return set(range(len(self.rows))) - self.wrong - self.garbage - self.failing


@dataclass
class JevalProject:
    """A pytester project with a GSM8K subset, a running server and a suite writer."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    script: GsmScript

    def suite(self, extra_run: str = "", bench_extra: str = "", model_extra: str = "", name: str = "suite.toml",
              head: str = "") -> Path:
        text = f"""
        {head}
        [meta]
        name = "test-suite"

        [run]
        output_dir = "out"
        max_retries = 1
        request_timeout = 5
        {extra_run}

        [[models]]
        name = "test-model"
        base_url = "{self.server.base_url}"
        api_key_env = "JEVAL_TEST_KEY"
        {model_extra}

        [[benchmarks]]
        name = "gsm8k"
        data_files = "gsm.jsonl"
        {bench_extra}
        """
        path = self.pytester.path / name
        path.write_text(textwrap.dedent(text))
        return path

    def records(self, benchmark: str = "gsm8k", model: str = "test-model", out: str = "out") -> list[dict[str, Any]]:
        path = self.pytester.path / out / f"{benchmark}_{model}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def summary(self, benchmark: str = "gsm8k", model: str = "test-model", out: str = "out") -> dict[str, Any]:
        return json.loads((self.pytester.path / out / f"{benchmark}_{model}.jsonl.summary.json").read_text())


def gsm_rows(data: Path, n: int) -> list[dict[str, Any]]:
    """The first ``n`` rows of the real GSM8K test file."""
    lines = (data / "gsm8k" / "test.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    return [json.loads(line) for line in lines]


@pytest.fixture
def jeval_project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JevalProject]:
    """Ten GSM8K rows, a server that knows their answers (rows 1, 4 wrong; 2 garbage; 3 failing)."""
    rows = gsm_rows(test_data, 10)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = GsmScript(rows, wrong={1, 4}, garbage={2}, failing={3})
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    with FakeOpenAIServer(script, api_key=SECRET) as server:
        yield JevalProject(pytester, server, script)


def outcome_ids(result: pytest.RunResult, outcome: str) -> set[str]:
    """Record ids of items with the given outcome, from a run's report lines."""
    ids = set()
    for line in result.outlines:
        if line.startswith(outcome.upper() + " ") and "[" in line:
            ids.add(line.split("[", 1)[1].split("]", 1)[0].split("/", 1)[1])
    return ids


def chat_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    """Chat-completion requests the server received."""
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]
