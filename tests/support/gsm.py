"""The GSM8K test project: rows of the real test split, a server that knows their answers, a suite writer.

Also the small helpers most end-to-end tests share: the test key, the chat requests a server
received, the record ids of a run's items by outcome.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.scoring.numeric import gsm8k_gold
from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Fault, last_user_message

SECRET = "sk-jeval-test-SECRET-4711"
"""The API key the test servers require; never to be found in any output."""


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
