"""Shared helpers of the judge-benchmark tests (this module holds no tests).

A :class:`JudgeScript` is a FakeOpenAIServer responder: it finds the gold item a
judge prompt is about and answers with a chosen verdict and chosen top logprobs,
so that every summary metric of a run is known in advance.
"""

from __future__ import annotations

import json
import math
import os
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Fault, last_user_message

KEY = "sk-judge-test-key"


def verdict_answer(before: str, token: str, alternatives: Optional[Sequence[tuple[str, float]]] = None,
                   after: str = "") -> Answer:
    """A reply ``before + token + after`` whose verdict token has the given (token, probability) alternatives.

    ``alternatives=None`` sends an empty logprobs list, which the client reads as
    "no logprobs". Probabilities are given plainly and sent as natural logs.
    """
    if alternatives is None:
        return Answer(before + token + after, logprobs=[])
    top = [(alt, math.log(p)) for alt, p in alternatives]
    chosen = next((lp for alt, lp in top if alt == token), top[0][1])
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] = []
    if before:
        logprobs.append((before, 0.0, []))
    logprobs.append((token, chosen, top))
    if after:
        logprobs.append((after, 0.0, []))
    return Answer(before + token + after, logprobs=logprobs)


Rule = Callable[[dict[str, Any], str, int], Any]


@dataclass
class JudgeScript:
    """Answers judge prompts: the first ``(needle, rule)`` whose needle is in the prompt decides.

    ``rule(body, prompt, attempt)`` returns an Answer, a string or a Fault; requests
    without ``logprobs`` (the plugin's prefetch) get the same content, without logprobs.
    """

    rules: list[tuple[str, Rule]] = field(default_factory=list)
    default: str = "I cannot tell."
    prompts: list[str] = field(default_factory=list)

    def add(self, needle: str, rule: Rule) -> None:
        self.rules.append((needle, rule))

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        prompt = last_user_message(body)
        self.prompts.append(prompt)
        for needle, rule in self.rules:
            if needle in prompt:
                result = rule(body, prompt, attempt)
                if isinstance(result, Answer) and not body.get("logprobs"):
                    return Answer(result.content)
                return result
        return self.default


def fixed(answer: Any) -> Rule:
    """A rule that always gives ``answer``."""
    return lambda body, prompt, attempt: answer


@dataclass
class JudgeProject:
    """A pytester project with a judge server and a way to write gold sets and suites."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    script: JudgeScript

    def gold(self, name: str, rows: Sequence[dict[str, Any]]) -> Path:
        path = self.pytester.path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    def suite(self, *benchmarks: str, name: str = "suite.toml", extra_run: str = "") -> Path:
        text = textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 1
            request_timeout = 5
            {extra_run}

            [[models]]
            name = "judge-model"
            base_url = "{self.server.base_url}"
            api_key_env = "JEVAL_JUDGE_KEY"
        """)
        for bench in benchmarks:
            text += "\n[[benchmarks]]\n" + textwrap.dedent(bench).strip() + "\n"
        path = self.pytester.path / name
        path.write_text(text, encoding="utf-8")
        return path

    def run(self, suite: Path, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest("--jeval-config", str(suite), "-p", "no:cacheprovider", *args)

    def records(self, benchmark: str) -> list[dict[str, Any]]:
        path = self.pytester.path / "out" / f"{benchmark}_judge-model.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def summary(self, benchmark: str) -> dict[str, Any]:
        path = self.pytester.path / "out" / f"{benchmark}_judge-model.jsonl.summary.json"
        return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def judge_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeProject]:
    """A pytester project whose model endpoint answers from a :class:`JudgeScript`."""
    script = JudgeScript()
    monkeypatch.setenv("JEVAL_JUDGE_KEY", KEY)
    with FakeOpenAIServer(script, api_key=KEY, models=("judge-model",)) as server:
        yield JudgeProject(pytester, server, script)


def chat_bodies(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    """Bodies of the chat requests the server received."""
    return [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]


def suite_text(base_url: str, *benchmarks: str, extra_run: str = "") -> str:
    """A suite with one model (the judge under test) at ``base_url`` and the given benchmark tables."""
    text = textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 1
        request_timeout = 5
        {extra_run}

        [[models]]
        name = "judge-model"
        base_url = "{base_url}"
        api_key_env = "JEVAL_JUDGE_KEY"
    """)
    for bench in benchmarks:
        text += "\n[[benchmarks]]\n" + textwrap.dedent(bench).strip() + "\n"
    return text


class _Outcomes:
    """A pytest plugin that notes each item's outcome: PASSED, FAILED or ERROR (setup failed)."""

    def __init__(self) -> None:
        self.by_nodeid: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "setup" and report.failed:
            self.by_nodeid[report.nodeid] = "ERROR"
        elif report.when == "call":
            self.by_nodeid[report.nodeid] = "PASSED" if report.passed else "FAILED"


@dataclass
class SuiteRun:
    """A finished ``pytest --jeval-config`` run, with its exit status, outcomes and outputs."""

    folder: Path
    ret: int
    item_outcomes: dict[str, str]

    def outcomes(self, benchmark: str) -> dict[str, str]:
        """record id -> PASSED / FAILED / ERROR for one benchmark."""
        pattern = re.compile(rf"::{re.escape(benchmark)}::test_judgment\[judge-model/([^\]]+)\]$")
        found = {}
        for nodeid, outcome in self.item_outcomes.items():
            m = pattern.search(nodeid)
            if m:
                found[m.group(1)] = outcome
        return found

    def records(self, benchmark: str) -> list[dict[str, Any]]:
        path = self.folder / "out" / f"{benchmark}_judge-model.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def by_id(self, benchmark: str) -> dict[str, dict[str, Any]]:
        return {r["record_id"]: r for r in self.records(benchmark)}

    def summary(self, benchmark: str) -> dict[str, Any]:
        path = self.folder / "out" / f"{benchmark}_judge-model.jsonl.summary.json"
        return json.loads(path.read_text(encoding="utf-8"))


def run_suite(folder: Path, text: str, *args: str) -> SuiteRun:
    """Write ``suite.toml`` into ``folder`` and run it with ``pytest.main`` in this process.

    In-process (like pytester's ``runpytest_inprocess``) so that the heavy imports
    (datasets, openai) are paid once; usable from module-scoped fixtures.
    """
    (folder / "suite.toml").write_text(text, encoding="utf-8")
    collector = _Outcomes()
    old_cwd, old_key = os.getcwd(), os.environ.get("JEVAL_JUDGE_KEY")
    os.environ["JEVAL_JUDGE_KEY"] = KEY
    os.chdir(folder)
    try:
        ret = pytest.main(["--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder), *args], plugins=[collector])
    finally:
        os.chdir(old_cwd)
        if old_key is None:
            os.environ.pop("JEVAL_JUDGE_KEY", None)
        else:
            os.environ["JEVAL_JUDGE_KEY"] = old_key
    return SuiteRun(folder, int(ret), collector.by_nodeid)


def write_gold(folder: Path, name: str, rows: Sequence[dict[str, Any]]) -> Path:
    """Write gold rows as JSONL."""
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


__all__ = [
    "KEY",
    "SuiteRun",
    "run_suite",
    "suite_text",
    "write_gold","Answer", "Fault", "JudgeProject", "JudgeScript", "chat_bodies", "fixed", "judge_project", "verdict_answer"]
