"""terminalbench-v2.1: Terminal-Bench 2.x tasks (Harbor layout) from a local copy, without a Docker daemon.

``data_dir`` is a folder of task folders (``task.toml``, ``instruction.md``,
``environment/Dockerfile``, ``tests/test.sh``, ``solution/solve.sh``), such as a checkout of the
Terminal-Bench 2 task repository. Each task's Dockerfile is built without Docker (a Debian root
filesystem standing in for its ``FROM``, its ``RUN`` steps under bubblewrap, cached by content),
the agent works in it with a ``bash`` tool, and the task's verifier runs afterwards with an
offline, read-only stand-in for its uv/pytest bootstrap; the reward is read from
``/logs/verifier/reward.txt`` (or ``.json``) as Harbor reads it. ``sandbox = "docker"`` runs the
task's own Dockerfile under a container engine instead (as ``terminalbench-native``). External agent
CLIs (``backend = "command"``, ``"hermes"``, ``"openclaw"``) run inside the task's image sandbox. See
docs/terminal.md.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, Sample
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.benchmarks._terminal import runner
from pytest_jeval.benchmarks._terminal.rescore import NAME as SCORER

BENCHMARK = Benchmark(
    name="terminalbench-v2.1",
    category="agentic",
    description="Terminal-Bench 2.x (Harbor layout) task folders, environments built from their Dockerfiles without "
                "Docker",
    to_sample=runner.to_sample("harbor", "image"),
    read_rows=runner.read_rows("harbor", "terminalbench-v2.1"),
    prompt=runner.prompt,
    scorer=SCORER,
    scoring="the task's tests/test.sh after the episode: reward.txt/reward.json (Harbor), else its exit status",
    backends=("agent",),
    sandboxes=("bubblewrap", "docker"),
    options=runner.TerminalBenchOptions,
    data_dir="a folder of Terminal-Bench 2 task folders in the Harbor layout (task.toml, instruction.md, "
             "environment/Dockerfile, tests/test.sh, solution/solve.sh)",
    data_source="data_dir:harbor-tasks",
    summarize_extra=runner.summarize,
    agent=AgentSpec(tools=[runner.bash], environment=runner.environment(), oracle=runner.oracle_steps,
                    workspace_environment=True, external_host=runner.external_host),
)


def test_terminalbench_v21(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when the task's verifier gives reward 1 after the episode."""
    runner.test_task(sample, episode, score)
