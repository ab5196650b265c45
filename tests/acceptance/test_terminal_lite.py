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

from pytest_jeval.benchmarks._terminal.tasks import load_task, solution_blocks
from pytest_jeval.benchmarks.terminal_lite import bench_terminal_lite as bench
from pytest_jeval.scoring.registry import call_scorer
from pytest_jeval.suite.dataset import load_samples
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.terminal import TASKS_DIR, ensure_rootfs

TASKS = {p.name: load_task(p) for p in sorted(TASKS_DIR.iterdir())}


@pytest.fixture(scope="module", autouse=True)
def _rootfs() -> None:
    ensure_rootfs()


def _suite(pytester: pytest.Pytester, base_url: str, models: tuple[str, ...] = ("test-model",)) -> Path:
    suite = pytester.path / "suite.toml"
    listed = "".join(f'[[models]]\nname = "{m}"\nbase_url = "{base_url}"\napi_key = "x"\n\n' for m in models)
    suite.write_text(textwrap.dedent("""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 10
        cache = false
        trajectories = "inline"
        tool_timeout = 20

        """) + listed + '[[benchmarks]]\nname = "terminal_lite"\n')
    return suite


def _records(pytester: pytest.Pytester, model: str) -> dict[str, dict[str, Any]]:
    out = pytester.path / "out" / f"terminal_lite_{model}.jsonl"
    return {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}


@pytest.mark.slow
def test_solution_commands_pass_every_task_and_no_commands_pass_none(pytester: pytest.Pytester) -> None:
    """Two scripted models in one run: ``solver`` sends each solve.sh block as a bash call, ``idle`` none."""
    scripts: dict[str, list[Any]] = {
        task.instruction: [*(tool_answer(ToolCallSpec("bash", {"command": block})) for block in solution_blocks(task)),
                           "Done: the task is complete."]
        for task in TASKS.values()}
    solver = script_responder(scripts, default="no script")
    idle = script_responder({}, default="I looked around and I am done.")

    def respond(body: dict[str, Any], attempt: int) -> Any:
        return (solver if body["model"] == "solver" else idle)(body, attempt)

    with FakeOpenAIServer(respond) as server:
        suite = _suite(pytester, server.base_url, ("solver", "idle"))
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider", "-rA")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    result.assert_outcomes(passed=len(TASKS), failed=len(TASKS))
    solved, idled = _records(pytester, "solver"), _records(pytester, "idle")
    assert set(solved) == set(idled) == set(TASKS)
    for task_id, record in solved.items():
        calls = record["trajectory"]["tool_calls"]
        assert [c["parsed"]["command"] for c in calls] == solution_blocks(TASKS[task_id]), task_id
        assert all(c["error"] is None and c["result"].startswith("exit status: 0") for c in calls), calls
        assert record["agent"]["stop_reason"] == "final" and record["score"] == 1.0
        assert record["scoring_metadata"]["test_exit_status"] == 0
    for record in idled.values():
        assert record["score"] == 0.0 and record["tool_calls"] == 0 and record["agent"]["stop_reason"] == "final"
        assert record["scoring_metadata"]["test_exit_status"] != 0
    # jeval rescore gives the same verdicts from the stored checker outcome
    samples = {s.id: s for s in load_samples(bench.BENCHMARK, files=bench.BENCHMARK.default_files(bench.__file__))[0]}
    for record in (*solved.values(), *idled.values()):
        again = call_scorer("terminal_tests", record, sample=samples[record["record_id"]])
        assert (again.correct, again.value) == (record["is_correct"], record["score"]), record["record_id"]
    stripped = {**record, "scoring_metadata": {}}
    kept = call_scorer("terminal_tests", stripped, sample=samples[record["record_id"]])
    assert kept.correct == record["is_correct"] and "not rescored" in kept.metadata["rescore_note"]
    by_model = [r["body"]["model"] for r in requests]
    assert by_model.count("solver") == sum(len(solution_blocks(t)) + 1 for t in TASKS.values())
    assert by_model.count("idle") == len(TASKS)
    for req in requests:
        assert [t["function"]["name"] for t in req["body"]["tools"]] == ["bash"]
        assert "/app" in req["body"]["messages"][0]["content"]


@pytest.mark.slow
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
    record = _records(pytester, "test-model")["csv-totals"]
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


@pytest.mark.parametrize(("line", "message"), [
    ('sandbox = "docker"', 'sandbox = "docker" is not supported (it is untested here)'),
    ('sandbox = "firecracker"', "benchmarks[0].sandbox: 'firecracker' is not a sandbox of 'terminal_lite'"),
])
def test_the_sandbox_key_picks_the_provider_and_an_unusable_one_is_refused(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, line: str, message: str) -> None:
    monkeypatch.delenv("JEVAL_TERMINAL_DOCKER", raising=False)
    with FakeOpenAIServer(script_responder({}, default="x")) as server:
        suite = _suite(pytester, server.base_url)
        suite.write_text(suite.read_text() + line + "\n")
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
        requests = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and requests == []
    assert message in result.stderr.str() + result.stdout.str()


def test_the_sandbox_key_is_refused_for_a_benchmark_without_a_sandbox(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", suite='[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                                      '[[benchmarks]]\nname = "toolcall15"\nsandbox = "bubblewrap"\n')
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "benchmarks[0].sandbox: 'bubblewrap' is not a sandbox of 'toolcall15' (it runs no sandbox)" in \
        result.stderr.str()
