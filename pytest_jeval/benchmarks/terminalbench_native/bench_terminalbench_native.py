"""terminalbench-native: Terminal-Bench 2.x tasks (Harbor layout) under a container engine, as upstream runs them.

The same task folders as ``terminalbench-v2.1`` (``data_dir``), but each task's own Dockerfile is
built and run by docker (or podman), and its verifier runs in the container with the network the
task allows. Refused before any sample, with the reason, where no container engine answers.
Untested here (no engine on this project's machines). See docs/terminal.md.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, Sample
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.benchmarks._terminal import runner
from pytest_jeval.benchmarks._terminal.rescore import NAME as SCORER

BENCHMARK = Benchmark(
    name="terminalbench-native",
    category="agentic",
    description="Terminal-Bench 2.x (Harbor layout) task folders run with their own Dockerfiles by docker or podman",
    to_sample=runner.to_sample("harbor", "docker"),
    read_rows=runner.read_rows("harbor", "terminalbench-native"),
    prompt=runner.prompt,
    scorer=SCORER,
    scoring="the task's tests/test.sh in its container: reward.txt/reward.json (Harbor), else its exit status",
    backends=("agent",),
    sandboxes=("docker",),
    options=runner.TerminalBenchOptions,
    data_dir="a folder of Terminal-Bench 2 task folders in the Harbor layout (task.toml, instruction.md, "
             "environment/Dockerfile, tests/test.sh, solution/solve.sh)",
    data_source="data_dir:harbor-tasks",
    summarize_extra=runner.summarize,
    agent=AgentSpec(tools=[runner.bash], environment=runner.environment(), oracle=runner.oracle_steps,
                    no_external=runner.NO_EXTERNAL_NATIVE),
)


def test_terminalbench_native(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when the task's verifier gives reward 1 in its container after the episode."""
    runner.test_task(sample, episode, score)
