"""Helpers for the research and real-task benchmark tests: one fake server answering as the model (scripted per
conversation) and as the judge (a function of the judge prompt), and a pytester project writing suites."""

from __future__ import annotations

import contextlib
import json
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported once here: pytester's in-process runs would import the client again each run)
import pytest

# Imported here, before any in-process run, so that no episode thread imports them during one: on CPython 3.11 an
# import in a thread while pytest rewrites asserts in the main thread can fail with "SystemError: AST constructor
# recursion depth mismatch" (cpython gh-106905).
import pytest_jeval.agents.tools.corpus
import pytest_jeval.agents.workspace
import pytest_jeval.sandbox  # noqa: F401
from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    ScriptStep,
    assistant_turns,
    first_user_message,
    message_text,
)

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = "test-model"
JUDGE = "judge-model"

JudgeFn = Callable[[str], str]


def prompt_text(body: Mapping[str, Any]) -> str:
    """Every message text of a chat request, joined."""
    return "\n".join(message_text(m.get("content")) for m in body.get("messages", []))


@dataclass
class Responder:
    """The model plays ``scripts`` (keyed by a substring of the conversation's first user message, as
    ``script_responder``; ``default`` otherwise); the judge answers ``judge(prompt)``."""

    scripts: dict[str, Sequence[ScriptStep]] = field(default_factory=dict)
    default: str | Answer = "I cannot help with that."
    judge: JudgeFn | None = None
    judge_prompts: list[str] = field(default_factory=list)
    model_bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        if body.get("model") == JUDGE:
            text = prompt_text(body)
            self.judge_prompts.append(text)
            if self.judge is None:
                raise AssertionError("the judge was called but the test gave it no answers")
            return self.judge(text)
        self.model_bodies.append(body)
        first = first_user_message(body)
        for key in sorted(self.scripts, key=len, reverse=True):
            if key in first:
                steps = self.scripts[key]
                return steps[min(assistant_turns(body), len(steps) - 1)]
        return self.default


@dataclass
class Project:
    """A pytester project with a fake server and a suite writer."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    responder: Responder

    def suite(self, entries: str, *, judge: bool = True, run: str = "") -> Path:
        """A suite with the test model, the judge (unless ``judge=False``) and the ``[[benchmarks]]`` ``entries``."""
        judge_block = (f'[judge]\nmodel = "{JUDGE}"\nbase_url = "{self.server.base_url}"\napi_key = "x"\n'
                       'max_tokens = 4096\n' if judge else "")
        text = (f'[run]\noutput_dir = "out"\nmax_retries = 0\nrequest_timeout = 20\ncache = false\n{run}\n\n'
                f'{judge_block}\n[[models]]\nname = "{MODEL}"\nbase_url = "{self.server.base_url}"\napi_key = "x"\n\n'
                + textwrap.dedent(entries))
        path = self.pytester.path / "suite.toml"
        path.write_text(text)
        return path

    def run(self, entries: str, *args: str, judge: bool = True, run: str = "") -> pytest.RunResult:
        self.suite(entries, judge=judge, run=run)
        return self.pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-rA", *args)

    def run_subprocess(self, *args: str) -> pytest.RunResult:
        """The suite written last, in a pytest subprocess (for ``-n 2``)."""
        return self.pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", *args)

    def path(self, key: str) -> Path:
        return self.pytester.path / "out" / f"{key}_{MODEL}.jsonl"

    def records(self, key: str) -> dict[str, dict[str, Any]]:
        return {r["record_id"]: r for r in map(json.loads, self.path(key).read_text().splitlines())}

    def record_lines(self, key: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path(key).read_text().splitlines()]

    def summary(self, key: str) -> dict[str, Any]:
        return json.loads(self.path(key).with_name(self.path(key).name + ".summary.json").read_text())

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.server.requests if r.get("path", "").endswith("/chat/completions")]


@contextlib.contextmanager
def serve(pytester: pytest.Pytester, responder: Responder) -> Iterator[Project]:
    with FakeOpenAIServer(responder, models=(MODEL, JUDGE)) as server:
        yield Project(pytester, server, responder)


def resume_keeps_every_record_once(project: Project, key: str, keep: int) -> tuple[dict[str, Any], int, list[str]]:
    """Cut the results file to its first ``keep`` records (a run killed midway), resume with ``-n 2``, and check
    every record is there exactly once; returns the records, the chat requests the resume sent and the ids cut."""
    path = project.path(key)
    lines = path.read_text().splitlines()
    ids = [json.loads(line)["record_id"] for line in lines]
    path.write_text("".join(line + "\n" for line in lines[:keep]))
    before = len(project.chat_bodies())
    result = project.run_subprocess("-n", "2", "--jeval-resume")
    assert result.ret in (0, 1), result.stdout.str() + result.stderr.str()
    after = [json.loads(line)["record_id"] for line in path.read_text().splitlines()]
    assert sorted(after) == sorted(ids), (after, ids)
    return project.records(key), len(project.chat_bodies()) - before, ids[keep:]
