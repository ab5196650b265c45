"""Benchmarks, suites and checks for the external-agent tests (the fake agent CLI behind the recording proxy)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import pytest_jeval.testing.fake_agent
from pytest_jeval.testing.openai_server import FakeOpenAIServer

FAKE_AGENT = str(Path(pytest_jeval.testing.fake_agent.__file__).resolve())
"""The fake agent CLI, run as a script: the agent's sandbox shows that one file of this package, not the package."""

#: One agent benchmark per fake-agent mode; ``{name}`` is filled in.
BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.core.score import Score


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="{name}", to_sample=to_sample, prompt=lambda s: s.input, backends=("agent",))


def test_{name}(sample, episode, response, score):
    assert response is not None and response.text == episode.final_text
    score(Score(correct=episode.final_text.strip() == sample.target, extracted=episode.final_text))
'''

ROWS = [{"id": "mul", "q": "What is 6*7? Use the calculator.", "a": "42"},
        {"id": "add", "q": "What is 20+3? Use the calculator.", "a": "23"}]


def fake_agent_command(mode: str, marker: str, *extra: str) -> list[str]:
    """The ``command`` of a fake agent in ``mode`` (``marker`` is in its argv, for finding survivors)."""
    return [sys.executable, FAKE_AGENT, "--prompt-file", "{prompt_file}", "--mode", mode, "--marker", marker, *extra]


@dataclass
class ExternalProject:
    """A pytester directory with one benchmark per fake-agent mode and a suite writer."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer
    marker: str
    model: str = "ext-model"
    benches: list[str] = field(default_factory=list)

    def write(self, benches: dict[str, list[str]], *, run: str = "", model: str = "", head: str = "",
              rows: list[dict[str, Any]] | None = None, bench_extra: str = "") -> Path:
        """A suite with one ``backend = "command"`` benchmark per ``name -> command``."""
        data = "".join(json.dumps(r) + "\n" for r in (rows or ROWS))
        blocks = []
        for name, command in benches.items():
            (self.pytester.path / f"bench_{name}.py").write_text(BENCH.format(name=name))
            (self.pytester.path / f"{name}.jsonl").write_text(data)
            blocks.append(textwrap.dedent(f"""
                [[benchmarks]]
                name = "{name}"
                module = "bench_{name}.py"
                data_files = "{name}.jsonl"
                backend = "command"
                command = {json.dumps(command)}
                {bench_extra}
                """))
        self.benches = list(benches)
        suite = self.pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            {head}
            [run]
            output_dir = "out"
            max_retries = 0
            request_timeout = 10
            {run}

            [[models]]
            name = "{self.model}"
            base_url = "{self.server.base_url}"
            {model}
            """) + "".join(blocks))
        return suite

    def run(self, *args: str) -> pytest.RunResult:
        """The suite through the plugin, in a subprocess."""
        return self.pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", *args)

    def records(self, bench: str) -> dict[str, dict[str, Any]]:
        path = self.pytester.path / "out" / f"{bench}_{self.model}.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def trajectories(self, bench: str) -> dict[str, dict[str, Any]]:
        path = self.pytester.path / "out" / f"{bench}_{self.model}.jsonl.trajectories.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def survivors(marker: str) -> list[str]:
    """Command lines of live processes that carry ``marker`` (none may outlive a run)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if marker.encode() in raw and "State:\tZ" not in status:
            line = raw.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry}: {line}")
    return found


def chat_bodies(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    """The chat-completion bodies the model server received."""
    return [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
