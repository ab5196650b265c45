"""Hermes and OpenClaw on a ``terminal_lite`` task, inside the task's sandbox, through the plugin (one run).

Each framework's own shell tool (Hermes' ``terminal``, OpenClaw's ``exec``) runs the scripted model's command
inside the task's environment (its ``/app``), and the task's checker passes. ``make test`` installs both
(``make hermes``, ``make openclaw``; or give ``JEVAL_HERMES_BIN`` / ``JEVAL_OPENCLAW_BIN`` + ``JEVAL_NODE_BIN``);
one that is not installed fails with the reason (never a skip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents.external import hermes, openclaw
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer

REPO = Path(__file__).resolve().parents[2]
TASK = "csv-totals"
SOLVE = ("tail -n +2 sales.csv | awk -F, '{s[$2]+=$3} END {for (r in s) printf \"%s %.2f\\n\", r, s[r]}' "
         "| sort > totals.txt; pwd")
SHELL_TOOL = {"hermes": "terminal", "openclaw": "exec"}

pytestmark = pytest.mark.slow  # two framework runs (tens of seconds); `make test-slow`


def _frameworks() -> dict[str, str]:
    """The environment that names both frameworks (the user's own settings, else the repository's installs)."""
    env = {}
    hermes_bin = os.environ.get(hermes.BIN_ENV, "").strip() or str(REPO / hermes.LOCAL_BIN)
    problem = hermes.HermesAgent(binary=Path(hermes_bin)).check()
    if problem is not None:
        pytest.fail(f"Hermes is not usable here: {problem} (`make test` runs `make hermes`)")
    env[hermes.BIN_ENV] = hermes_bin
    launcher = os.environ.get(openclaw.BIN_ENV, "").strip() or str(REPO / openclaw.PREFIX / "node_modules" / ".bin"
                                                                   / "openclaw")
    node = os.environ.get(openclaw.NODE_ENV, "").strip()
    agent = openclaw.OpenClawAgent(launcher=Path(launcher), node=Path(node) if node else None)
    problem = agent.check()
    if problem is not None:
        pytest.fail(f"OpenClaw is not usable here: {problem} (`make test` runs `make openclaw`)")
    assert agent.node is not None
    env.update({openclaw.BIN_ENV: launcher, openclaw.NODE_ENV: str(agent.node)})
    return env


def _respond(body: dict[str, Any], attempt: int) -> Any:
    """The framework's own shell tool runs the solution, then the model says it is done."""
    names = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}
    tool = next((t for t in SHELL_TOOL.values() if t in names), "terminal")
    script = script_responder({"sales.csv": [tool_answer(ToolCallSpec(tool, {"command": SOLVE})), "done"]},
                              default="no")
    return script(body, attempt)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    env = {**os.environ, **_frameworks(), "FW_KEY": "sk-jeval-fw-test", "PYTHONPATH": os.pathsep.join(sys.path)}
    path = tmp_path_factory.mktemp("terminal-frameworks")
    with FakeOpenAIServer(_respond, api_key="sk-jeval-fw-test", models=("fw-model",), strict_tools=False) as server:
        entries = "".join(f'\n[[benchmarks]]\nname = "terminal_lite"\nlabel = "lite-{b}"\nbackend = "{b}"\n'
                          f'record_ids = ["{TASK}"]\n' for b in SHELL_TOOL)
        (path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            trajectories = "inline"
            max_retries = 0
            episode_timeout = 900  # generous: OpenClaw needs tens of CPU seconds before its first request

            [[models]]
            name = "fw-model"
            base_url = "{server.base_url}"
            api_key_env = "FW_KEY"
        """) + entries)
        done = subprocess.run([sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-p",
                               "no:cacheprovider", "-q"], cwd=path, env=env, capture_output=True, text=True,
                              timeout=1800, check=False)
    records = {b: json.loads((path / "out" / f"lite-{b}_fw-model.jsonl").read_text().splitlines()[0])
               for b in SHELL_TOOL}
    return {"records": records, "output": done.stdout[-3000:] + done.stderr[-3000:]}


@pytest.mark.parametrize("backend", list(SHELL_TOOL))
def test_a_framework_solves_a_terminal_task_inside_its_sandbox(run: dict[str, Any], backend: str) -> None:
    record = run["records"][backend]
    assert record["is_correct"] is True, (record["scoring_metadata"], record.get("error"), run["output"])
    ext = record["trajectory"]["external"]
    assert ext["backend"] == backend and ext["exit_status"] == 0 and ext["survivors"] == 0
    assert {"task-environment", "userns", "no-caps", "netns", "proxy-only-network"} <= set(ext["isolation"])
    calls = record["trajectory"]["tool_calls"]
    assert calls and calls[0]["name"] == SHELL_TOOL[backend] and "/app" in calls[0]["result"]
