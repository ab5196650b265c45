"""terminal_lite end to end through the plugin, with the strict scripted test server as the model.

The model issues each task's solution (solve.sh, one bash call per block) and every task passes;
a model that issues no commands passes none. Without the root filesystem the run stops with a
usage error naming ``make rootfs`` before any request.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.terminal.tasks import load_task, solution_blocks
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.terminal_support import TASKS_DIR, ensure_rootfs

TASKS = {p.name: load_task(p) for p in sorted(TASKS_DIR.iterdir())}


@pytest.fixture(scope="module", autouse=True)
def _rootfs() -> None:
    ensure_rootfs()


def _suite(pytester: pytest.Pytester, base_url: str) -> Path:
    suite = pytester.path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 10
        cache = false
        trajectories = "inline"
        tool_timeout = 20

        [[models]]
        name = "test-model"
        base_url = "{base_url}"
        api_key = "x"

        [[benchmarks]]
        name = "terminal_lite"
        """))
    return suite


def _run(pytester: pytest.Pytester, scripts: dict[str, list[Any]]) -> tuple[pytest.RunResult, list[dict[str, Any]],
                                                                             dict[str, dict[str, Any]]]:
    with FakeOpenAIServer(script_responder(scripts, default="I looked around and I am done.")) as server:
        result = pytester.runpytest_subprocess("--jeval-config", str(_suite(pytester, server.base_url)),
                                               "-p", "no:cacheprovider")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    out = pytester.path / "out" / "terminal_lite_test-model.jsonl"
    records = {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())} if out.exists() else {}
    return result, requests, records


def test_the_solution_commands_as_bash_calls_pass_every_task(pytester: pytest.Pytester) -> None:
    scripts: dict[str, list[Any]] = {
        task.instruction: [*(tool_answer(ToolCallSpec("bash", {"command": block})) for block in solution_blocks(task)),
                           "Done: the task is complete."]
        for task in TASKS.values()}
    result, requests, records = _run(pytester, scripts)
    result.assert_outcomes(passed=len(TASKS))
    assert set(records) == set(TASKS)
    for task_id, record in records.items():
        calls = record["trajectory"]["tool_calls"]
        assert [c["parsed"]["command"] for c in calls] == solution_blocks(TASKS[task_id]), task_id
        assert all(c["error"] is None and c["result"].startswith("exit status: 0") for c in calls), calls
        assert record["agent"]["stop_reason"] == "final" and record["score"] == 1.0
        assert record["scoring_metadata"]["test_exit_status"] == 0
    assert len(requests) == sum(len(solution_blocks(t)) + 1 for t in TASKS.values())
    for req in requests:
        assert [t["function"]["name"] for t in req["body"]["tools"]] == ["bash"]
        assert "/app" in req["body"]["messages"][0]["content"]


def test_a_model_that_runs_no_commands_passes_none(pytester: pytest.Pytester) -> None:
    result, requests, records = _run(pytester, {})
    result.assert_outcomes(failed=len(TASKS))
    assert len(requests) == len(TASKS) and set(records) == set(TASKS)
    assert all(r["score"] == 0.0 and r["tool_calls"] == 0 for r in records.values())
    assert all(r["scoring_metadata"]["test_exit_status"] != 0 for r in records.values())


def test_a_hanging_command_is_killed_and_the_episode_goes_on(pytester: pytest.Pytester) -> None:
    task = TASKS["csv-totals"]
    hang = tool_answer(ToolCallSpec("bash", {"command": "sleep 600"}))
    block = solution_blocks(task)[0]
    scripts: dict[str, list[Any]] = {task.instruction: [hang, tool_answer(ToolCallSpec("bash", {"command": block})),
                                                        "Done."]}
    with FakeOpenAIServer(script_responder(scripts, default="no")) as server:
        suite = _suite(pytester, server.base_url)
        suite.write_text(suite.read_text().replace("tool_timeout = 20", "tool_timeout = 1.5")
                         + 'record_ids = ["csv-totals"]\n')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    record = json.loads((pytester.path / "out" / "terminal_lite_test-model.jsonl").read_text())
    first = record["trajectory"]["tool_calls"][0]
    assert first["error"] is not None and "timed out after 1.5s" in first["result"]


def test_a_missing_rootfs_is_a_usage_error_before_any_request(pytester: pytest.Pytester,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_ROOTFS_DIR", str(pytester.path / "no-rootfs-here"))
    with FakeOpenAIServer(script_responder({}, default="x")) as server:
        result = pytester.runpytest_subprocess("--jeval-config", str(_suite(pytester, server.base_url)),
                                               "-p", "no:cacheprovider")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str() + result.stdout.str()
    assert "make rootfs" in text and "Traceback" not in text
    assert requests == []
