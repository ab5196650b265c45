"""A tiny self-contained benchmark project for the endpoint tests: data, module, suite and a responder.

The benchmark ``mini`` sends each row's question as it is; its test compares the
reply with the row's answer, or asks the ``[judge]`` when the suite has one. The
responder answers every question right, except the questions that name a way
real endpoints misbehave (see :data:`MODES`).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Raw, last_user_message

ROWS = [
    {"id": "q1", "question": "What is 2 + 3?", "answer": "5"},
    {"id": "q2", "question": "What is 7 + 8?", "answer": "15"},
    {"id": "q3", "question": "What is 10 - 4?", "answer": "6"},
    {"id": "q4", "question": "What is 3 times 4?", "answer": "12"},
]


def _completion(content: Any, finish_reason: str = "stop", **message: Any) -> Raw:
    return Raw({
        "id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    })


MODES: dict[str, Any] = {
    "ERROR200": Raw({"error": {"message": "The upstream provider is overloaded.", "type": "server_error",
                               "param": None, "code": "upstream_overloaded"}}),
    "NUMBER": _completion(42),
    "OBJECT": _completion({"text": "5"}),
    "NULL": _completion(None),
    "LENGTH": Answer("", finish_reason="length"),
    "TOOLS": _completion(None, "tool_calls", tool_calls=[
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}}]),
    "TRICKLE": Answer("5", byte_interval=0.5),
    "ENDLESS": Answer("5", endless=True, byte_interval=0.2),
}
"""Question -> what the server sends instead of a good answer."""


def respond(body: dict[str, Any], attempt: int) -> Any:
    """Right answers for :data:`ROWS`, :data:`MODES` for their questions, and a judge's verdict."""
    text = last_user_message(body)
    judged = re.match(r"Is '(.*)' the same as '(.*)'\?", text)
    if judged:
        return "yes" if judged.group(1) == judged.group(2) else "no"
    if text in MODES:
        return MODES[text]
    for row in ROWS:
        if row["question"] == text:
            return row["answer"]
    return "I do not know."


BENCH = '''
from pytest_jeval import Benchmark, Sample, Score


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["question"], target=row["answer"])


def prompt(sample):
    if sample.input == "RAISE":
        raise ValueError("this prompt cannot be built")
    return sample.input


BENCHMARK = Benchmark(name="mini", to_sample=to_sample, prompt=prompt, request_options={options})


def test_mini(sample, response, score, judge):
    answer = response.text.strip()
    if judge is not None:
        verdict = judge.chat(f"Is {{answer!r}} the same as {{sample.target!r}}?")
        score(Score(correct=verdict.text.strip() == "yes", extracted=answer))
    else:
        score(Score(correct=answer == sample.target, extracted=answer))
'''


@dataclass
class MiniProject:
    """A pytester folder with the ``mini`` benchmark, its data and a suite pointing at ``server``."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer

    def write(self, *, questions: list[str] | None = None, options: str = "{}", model: str = "test-model",
              model_extra: str = "", run_extra: str = "", judge: str = "", head: str = "",
              timeout: float = 5) -> Path:
        """Write data, module and ``suite.toml``; ``questions`` adds rows ``x1``, ``x2``, ... with those questions."""
        rows = list(ROWS) + [{"id": f"x{i}", "question": q, "answer": "5"} for i, q in enumerate(questions or [], 1)]
        (self.pytester.path / "mini.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (self.pytester.path / "bench_mini.py").write_text(BENCH.format(options=options))
        suite = f"""
        {head}
        [run]
        output_dir = "out"
        cache = false
        max_retries = 0
        request_timeout = {timeout}
        {run_extra}

        [[models]]
        name = "{model}"
        base_url = "{self.server.base_url}"
        {model_extra}

        [[benchmarks]]
        name = "mini"
        module = "bench_mini.py"
        data_files = "mini.jsonl"
        {judge}
        """
        path = self.pytester.path / "suite.toml"
        path.write_text(textwrap.dedent(suite))
        return path

    def judge_table(self, model: str | None = None, extra: str = "") -> str:
        """A ``[judge]`` table on the same server (the default judge model unless ``model`` is given)."""
        name = f'model = "{model}"\n' if model else ""
        return f'\n[judge]\n{name}base_url = "{self.server.base_url}"\n{extra}\n'

    def records(self, model: str = "test-model") -> dict[str, dict[str, Any]]:
        """The stored records by record id."""
        path = next((self.pytester.path / "out").glob(f"mini_*{model.split('/')[-1]}*.jsonl"))
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the chat requests the server received."""
        return [r["body"] for r in self.server.requests if r["path"].endswith("/chat/completions")]
