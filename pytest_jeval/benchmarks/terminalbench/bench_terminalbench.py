"""terminalbench: Terminal-Bench 1 tasks (``task.yaml`` layout) from a local copy, without a Docker daemon.

``data_dir`` is a folder of task folders (``task.yaml``, ``Dockerfile``, ``run-tests.sh``,
``tests/``, ``solution.sh`` or ``solution.yaml``), such as the ``tasks/`` folder of a
Terminal-Bench 1 checkout. The reference catalog's ``terminalbench`` key names a question/answer
view on the Hugging Face Hub; Terminal-Bench has no such view (its tasks are environments to act
in), so this key runs the tasks. The verdict is Terminal-Bench 1's: the pytest summary of
``run-tests.sh``, resolved when every listed test passed. See docs/terminal.md.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, Sample
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.benchmarks._terminal import runner
from pytest_jeval.benchmarks._terminal.rescore import NAME as SCORER

BENCHMARK = Benchmark(
    name="terminalbench",
    category="agentic",
    description="Terminal-Bench 1 (task.yaml layout) task folders, environments built from their Dockerfiles without "
                "Docker",
    to_sample=runner.to_sample("tb1", "image"),
    read_rows=runner.read_rows("tb1", "terminalbench"),
    prompt=runner.prompt,
    scorer=SCORER,
    scoring="run-tests.sh after the episode: resolved when every test in its pytest summary passed",
    backends=("agent",),
    sandboxes=("bubblewrap", "docker"),
    options=runner.TerminalBenchOptions,
    data_dir="a folder of Terminal-Bench 1 task folders (task.yaml, Dockerfile, run-tests.sh, tests/, solution.sh)",
    data_source="data_dir:tb1-tasks",
    summarize_extra=runner.summarize,
    agent=AgentSpec(tools=[runner.bash], environment=runner.environment(), oracle=runner.oracle_steps,
                    workspace_environment=True, external_host=runner.external_host),
)


def test_terminalbench(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when every test of the task's pytest summary passed after the episode."""
    runner.test_task(sample, episode, score)
