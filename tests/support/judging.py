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
import sys
import textwrap
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Fault, last_user_message

KEY = "sk-judge-test-key"


def verdict_answer(before: str, token: str, alternatives: Sequence[tuple[str, float]] | None = None,
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


def _drop_stale_submodule_attributes() -> None:
    """Forget package attributes that point at modules pytester has since removed from ``sys.modules``.

    pytester's in-process runs restore ``sys.modules`` afterwards but leave e.g.
    ``pytest_jeval.session.collect`` set on the package, so a later ``from pytest_jeval import
    collect`` would get the old module while ``from pytest_jeval.session.collect import ...``
    imports a new one.
    """
    for name, module in list(sys.modules.items()):
        if not name.startswith("pytest_jeval") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.ModuleType) and value.__name__ == f"{name}.{attr}" \
                    and sys.modules.get(value.__name__) is not value:
                delattr(module, attr)


def run_suite(folder: Path, text: str, *args: str) -> SuiteRun:
    """Write ``suite.toml`` into ``folder`` and run it with ``pytest.main`` in this process.

    In-process (like pytester's ``runpytest_inprocess``) so that the heavy imports
    (datasets, openai) are paid once; usable from module-scoped fixtures.
    """
    (folder / "suite.toml").write_text(text, encoding="utf-8")
    collector = _Outcomes()
    _drop_stale_submodule_attributes()
    old_cwd, old_key = os.getcwd(), os.environ.get("JEVAL_JUDGE_KEY")
    os.environ["JEVAL_JUDGE_KEY"] = KEY
    os.chdir(folder)
    try:
        args_ = ["--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder), *args]
        ret = pytest.main(args_, plugins=[collector])
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
    "Answer",
    "Fault",
    "JudgeScript",
    "SuiteRun",
    "chat_bodies",
    "fixed",
    "run_suite",
    "suite_text",
    "verdict_answer",
    "write_gold",
]
