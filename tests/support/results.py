"""A small self-contained project for the results tests: a user benchmark, its data, a scripted server.

The benchmark ``calc`` (and any other name) asks ``compute {i}+{i}``; the server
answers from :class:`Script`, which a test changes between runs ("the model got
better"). Everything lives in the pytester folder: no data outside the repository.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, Fault, last_user_message

KEY = "sk-results-test-key-0000"
MODELS = ("m-a", "m-b", "модель", "模型")

BENCH_MODULE = '''
import os
from pathlib import Path

from pytest_jeval import Benchmark, Sample, Score


def to_sample(row, index, ctx):
    return Sample(id=ctx.default_id(index), input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="{name}", to_sample=to_sample, prompt=lambda s: "compute " + s.input)


def test_{name}(sample, response, score):
    crash = os.environ.get("RESULTS_CRASH_ON")  # "record_id:flag file": die once, like a segfault
    if crash:
        rid, flag = crash.split(":", 1)
        if sample.id == rid and not Path(flag).exists():
            Path(flag).write_text("crashed")
            os._exit(3)
    answer = response.text.strip()
    score(Score(correct=answer == sample.target, extracted=answer))
'''


@dataclass
class Script:
    """What the server answers per row index: right by default, or wrong, an HTTP 500, or a given Answer."""

    wrong: set[int] = field(default_factory=set)
    failing: set[int] = field(default_factory=set)
    special: dict[int, Answer] = field(default_factory=dict)
    asked: list[int] = field(default_factory=list)

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        text = last_user_message(body).removeprefix("compute ")
        i = int(text.split("+", 1)[0])
        self.asked.append(i)
        if i in self.special:
            return self.special[i]
        if i in self.failing:
            return Fault("500")
        return Answer(str(2 * i + (1 if i in self.wrong else 0)))


@dataclass
class Project:
    """The pytester folder, its server and helpers to write suites and read results."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    script: Script

    @property
    def path(self) -> Path:
        return self.pytester.path

    def data(self, rows: int, bench: str = "calc") -> None:
        (self.path / f"{bench}.jsonl").write_text("".join(json.dumps({"q": f"{i}+{i}", "a": str(2 * i)}) + "\n"
                                                          for i in range(rows)))
        (self.path / f"bench_{bench}.py").write_text(BENCH_MODULE.replace("{name}", bench))

    def suite(self, *, models: Sequence[str] = ("m-a",), benches: Sequence[str] = ("calc",), rows: int = 6,
              run: str = "", bench_extra: str = "", output_dir: str = "out", name: str = "suite.toml",
              cache: bool = False) -> Path:
        for bench in benches:
            self.data(rows, bench)
        text = f"""
        [run]
        output_dir = "{output_dir}"
        max_retries = 0
        request_timeout = 10
        cache = {str(cache).lower()}
        {run}
        """
        for model in models:
            text += f"""
        [[models]]
        name = "{model}"
        base_url = "{self.server.base_url}"
        api_key_env = "RESULTS_TEST_KEY"
        """
        for bench in benches:
            text += f"""
        [[benchmarks]]
        name = "{bench}"
        module = "bench_{bench}.py"
        data_files = "{bench}.jsonl"
        {bench_extra}
        """
        path = self.path / name
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *args: str, suite: Path | None = None, subprocess: bool = False) -> pytest.RunResult:
        """``pytest --jeval-config suite.toml ARGS``, in this process (fast) or in a subprocess."""
        argv = ("--jeval-config", str(suite or self.path / "suite.toml"), *args)
        return self.pytester.runpytest_subprocess(*argv) if subprocess else self.pytester.runpytest(*argv)

    def jsonl(self, bench: str = "calc", model: str = "m-a", out: str = "out") -> Path:
        from pytest_jeval.core.paths import jsonl_path

        return jsonl_path(self.path / out, bench, model)

    def lines(self, bench: str = "calc", model: str = "m-a", out: str = "out") -> list[dict[str, Any]]:
        """Every line of a pair's JSONL (each must be whole, valid JSON)."""
        return [json.loads(line) for line in self.jsonl(bench, model, out).read_text(encoding="utf-8").splitlines()]

    def records(self, bench: str = "calc", model: str = "m-a", out: str = "out") -> dict[str, dict[str, Any]]:
        lines = self.lines(bench, model, out)
        by_id = {r["record_id"]: r for r in lines}
        assert len(by_id) == len(lines), "more than one line for a record"
        return by_id

    def summary(self, bench: str = "calc", model: str = "m-a", out: str = "out") -> dict[str, Any]:
        from pytest_jeval.core.paths import summary_path

        return json.loads(summary_path(self.jsonl(bench, model, out)).read_text(encoding="utf-8"))

    def chats(self) -> int:
        return sum(1 for r in self.server.requests if r["path"].endswith("/chat/completions"))


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and modification time."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """A pytester folder with the ``calc`` benchmark and a server: rows 1 and 4 wrong, row 3 an HTTP 500."""
    script = Script(wrong={1, 4}, failing={3})
    monkeypatch.setenv("RESULTS_TEST_KEY", KEY)
    monkeypatch.delenv("RESULTS_CRASH_ON", raising=False)
    with FakeOpenAIServer(script, api_key=KEY, models=MODELS) as server:
        yield Project(pytester, server, script)


def env_without_crash() -> dict[str, str]:
    """The environment for a plain subprocess run."""
    return {k: v for k, v in os.environ.items() if k != "RESULTS_CRASH_ON"}
