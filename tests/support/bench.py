"""Helpers for the built-in benchmark tests: one fake server answering as the model AND as the judge.

The model under test is ``test-model`` and the judge is ``judge-model``; the
responder tells them apart by the request's ``model`` field, so every test knows
exactly which verdict the judge gave for which reply.
"""

from __future__ import annotations

import contextlib
import json
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported here once: pytester's in-process runs drop the modules they import,
import pytest  #   so without this every run would import the openai client again, about a second each)

from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message, message_text

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = "test-model"
JUDGE = "judge-model"

Answerer = Callable[[str], str]


def prompt_text(body: dict[str, Any]) -> str:
    """All message texts of a chat request joined (system + user)."""
    return "\n".join(message_text(m.get("content")) for m in body.get("messages", []))


@dataclass
class Router:
    """Responder: ``model(prompt)`` answers for the model, ``judge(prompt)`` for the judge."""

    model: Answerer
    judge: Answerer | None = None
    judge_prompts: list[str] = field(default_factory=list)
    model_prompts: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any], attempt: int) -> str:
        text = prompt_text(body)
        if body.get("model") == JUDGE:
            self.judge_prompts.append(text)
            if self.judge is None:
                raise AssertionError("the judge was called but this test gave it no answers")
            return self.judge(text)
        self.model_prompts.append(last_user_message(body))
        return self.model(last_user_message(body))


def options_in(prompt: str) -> dict[str, str]:
    """``{letter: option text}`` of the ``X) text`` lines of an MCQ prompt."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^([A-Z])\) (.*)$", prompt, re.MULTILINE)}


def mcq_answerer(key_to_answer: dict[str, str], wrong: set[str] = frozenset()) -> Answerer:  # type: ignore[assignment]
    """Answer MCQ prompts by option TEXT: find the letter the correct text got, state it (or another one).

    ``key_to_answer`` maps a substring of the question to the correct option text;
    keys in ``wrong`` get a letter of a wrong option instead.
    """

    def answer(prompt: str) -> str:
        for key, text in key_to_answer.items():
            if key in prompt:
                opts = options_in(prompt)
                right = [letter for letter, t in opts.items() if t == text]
                assert len(right) == 1, f"correct option {text!r} not shown exactly once in {opts}"
                if key in wrong:
                    other = next(letter for letter in opts if letter != right[0])
                    return f"Let me think about A, B and C.\nAnswer: {other}"
                return f"Option A looks tempting, but no.\nThe answer is ({right[0]})"
        return "I do not know."

    return answer


@dataclass
class Project:
    """A pytester project with a fake server, and a suite writer for one built-in benchmark."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    router: Router

    def suite(self, benchmark: str, data_files: str | list[str], *, judge: bool = True, extra: str = "",
              run_extra: str = "", name: str = "suite.toml", more: tuple[tuple[str, str | list[str], str], ...] = ()) -> Path:
        """A suite running ``benchmark`` on ``data_files`` (relative to tests/data, or absolute).

        ``more`` adds further ``(benchmark, data_files, extra)`` entries to the same suite.
        """
        blocks = []
        for bench, files, bench_extra in ((benchmark, data_files, extra), *more):
            file_list = [files] if isinstance(files, str) else files
            files_toml = json.dumps([str(f) if Path(f).is_absolute() else str(DATA / f) for f in file_list])
            blocks.append(f'[[benchmarks]]\nname = "{bench}"\ndata_files = {files_toml}\n{textwrap.dedent(bench_extra)}\n')
        judge_block = f'[judge]\nmodel = "{JUDGE}"\nbase_url = "{self.server.base_url}"\napi_key = "x"\n' if judge else ""
        text = f"""
[meta]
name = "bench-{benchmark}"

[run]
output_dir = "out"
max_retries = 0
request_timeout = 10
cache = false
{run_extra}

{judge_block}
[[models]]
name = "{MODEL}"
base_url = "{self.server.base_url}"
api_key = "x"

{"".join(blocks)}
"""
        path = self.pytester.path / name
        path.write_text(text)
        return path

    def run(self, benchmark: str, data_files: str | list[str], *args: str, **kwargs: Any) -> pytest.RunResult:
        suite = self.suite(benchmark, data_files, **kwargs)
        return self.pytester.runpytest("--jeval-config", str(suite), "-rA", *args)

    def records(self, benchmark: str) -> dict[str, dict[str, Any]]:
        path = self.pytester.path / "out" / f"{benchmark}_{MODEL}.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def summary(self, benchmark: str) -> dict[str, Any]:
        return json.loads((self.pytester.path / "out" / f"{benchmark}_{MODEL}.jsonl.summary.json").read_text())


@contextlib.contextmanager
def serve(pytester: pytest.Pytester, model: Answerer, judge: Answerer | None = None) -> Iterator[Project]:
    """A project whose server answers as the model with ``model`` and as the judge with ``judge``."""
    router = Router(model, judge)
    with FakeOpenAIServer(router, models=(MODEL, JUDGE)) as server:
        yield Project(pytester, server, router)


def run_bundled_sets(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, names: list[str] | tuple[str, ...],
                     answers: dict[str, str], key: str) -> pytest.RunResult:
    """Run the bundled benchmarks ``names`` (no ``data_files``) on a model ``gold`` whose server answers each
    prompt from ``answers`` (prompt text -> reply); records go to ``out/``."""

    def respond(body: dict[str, Any], attempt: int) -> str:
        return answers[last_user_message(body)]

    monkeypatch.setenv("JEVAL_GOLD_KEY", key)
    with FakeOpenAIServer(respond, api_key=key) as server:
        benches = "".join(f'\n[[benchmarks]]\nname = "{n}"\n' for n in names)
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            cache = false
            max_exec_workers = 2

            [[models]]
            name = "gold"
            base_url = "{server.base_url}"
            api_key_env = "JEVAL_GOLD_KEY"
            """) + benches)
        return pytester.runpytest("--jeval-config", str(suite), "-n", "0", "-q", "-p", "no:cacheprovider")
