"""A small agent benchmark and a strict scripted server for the agent-loop tests."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer

#: The benchmark module the tests run: own tools plus two built-ins, scored on the final text.
AGENT_BENCH = '''
import asyncio
from pathlib import Path

from pytest_jeval import Benchmark, Sample
from pytest_jeval.agents import AgentSpec, ToolError, tool
from pytest_jeval.agents.tools import builtin_tools
from pytest_jeval.core.score import Score


@tool(parallel_safe=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


SLOW_LOG = Path(__file__).with_name("slow_add.log")


@tool(parallel_safe=True)
async def slow_add(a: int, b: int) -> int:
    """Add, slowly.

    Args:
        a: The first.
        b: The second.
    """
    with SLOW_LOG.open("a") as log:  # when each call starts and ends, in order
        log.write(f"start {a}\\n")
    await asyncio.sleep(0.3)
    with SLOW_LOG.open("a") as log:
        log.write(f"end {a}\\n")
    return a + b


@tool(blocking=False)
def repeat(text: str, times: int) -> str:
    """Repeat a text.

    Args:
        text: What to repeat.
        times: How often.
    """
    return text * times


@tool
def boom() -> str:
    """Always fails."""
    raise RuntimeError("kaput")


@tool
def refuse(reason: str) -> str:
    """Refuses politely.

    Args:
        reason: Why.
    """
    raise ToolError(f"refused: {reason}")


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


BENCHMARK = Benchmark(
    name="agentic",
    to_sample=to_sample,
    prompt=lambda s: s.input,
    backends=("agent",),
    agent=AgentSpec(tools=[add, slow_add, boom, refuse, repeat, *builtin_tools(["python", "file_read"])]),
)


def test_agentic(sample, episode, score):
    score(Score(correct=episode.final_text.strip() == sample.target, extracted=episode.final_text))
'''


@dataclass
class AgentProject:
    """A pytester directory with the agent benchmark, its data, and a suite writer."""

    pytester: pytest.Pytester
    server: FakeOpenAIServer

    def write(self, rows: list[dict[str, Any]], run: str = "", bench: str = "", head: str = "") -> Path:
        (self.pytester.path / "bench_agentic.py").write_text(AGENT_BENCH)
        (self.pytester.path / "agentic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        suite = self.pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            {head}
            [run]
            output_dir = "out"
            max_retries = 0
            request_timeout = 10
            {run}

            [[models]]
            name = "agent-model"
            base_url = "{self.server.base_url}"

            [[benchmarks]]
            name = "agentic"
            module = "bench_agentic.py"
            data_files = "agentic.jsonl"
            {bench}
            """))
        return suite

    def records(self) -> dict[str, dict[str, Any]]:
        path = self.pytester.path / "out" / "agentic_agent-model.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def trajectories(self) -> dict[str, dict[str, Any]]:
        path = self.pytester.path / "out" / "agentic_agent-model.jsonl.trajectories.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def slow_log(self) -> list[str]:
        """The ``slow_add`` calls' starts and ends, in the order they happened (``["start 1", ...]``)."""
        path = self.pytester.path / "slow_add.log"
        return path.read_text().splitlines() if path.exists() else []

    def summary(self) -> dict[str, Any]:
        path = self.pytester.path / "out" / "agentic_agent-model.jsonl.summary.json"
        data: dict[str, Any] = json.loads(path.read_text())
        return data
