"""The Terminal-Bench task formats (Harbor, Terminal-Bench 1), the verifier's packages, the reward as upstream reads
it, the oracle's steps, and the offline stand-ins of the verifier kit, without running an episode."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_jeval.agents.spec import SayStep, ToolStep
from pytest_jeval.benchmarks._terminal.formats import TaskError, find_tasks, load_task
from pytest_jeval.benchmarks._terminal.kit import DEFAULT_PYTEST, requirements_of
from pytest_jeval.benchmarks._terminal.rescore import rescore
from pytest_jeval.benchmarks._terminal.runner import oracle_steps, static_network_need
from pytest_jeval.benchmarks._terminal.verify import parse_pytest_summary, read_reward
from pytest_jeval.core.sample import Sample
from tests.support.terminalbench import HARBOR, TB1


def test_harbor_tasks_are_read_with_their_settings() -> None:
    task = load_task(HARBOR / "jq-report")
    assert (task.layout, task.test_script, task.parser) == ("harbor", "test.sh", "reward")
    assert task.dockerfile == HARBOR / "jq-report" / "environment" / "Dockerfile"
    assert task.context == HARBOR / "jq-report" / "environment"
    assert (task.agent_timeout, task.verifier_timeout, task.build_timeout) == (300.0, 180.0, 600.0)
    assert (task.cpus, task.memory_mb, task.storage_mb) == (1, 1024, 2048)
    assert task.allow_internet is True and task.not_runnable is None  # Harbor's default: the internet is allowed
    assert task.solution_script == HARBOR / "jq-report" / "solution" / "solve.sh"
    gpu = load_task(HARBOR / "needs-gpu")
    assert (gpu.not_runnable, gpu.not_runnable_kind) == ("the task needs 1 GPU(s) ([environment] gpus)", "gpu")
    assert [p.name for p in find_tasks(HARBOR)] == sorted(p.name for p in HARBOR.iterdir() if p.is_dir())


def test_terminal_bench_1_tasks_are_read_with_their_defaults() -> None:
    task = load_task(TB1 / "greeting")
    assert (task.layout, task.test_script, task.parser) == ("tb1", "run-tests.sh", "pytest")
    assert task.extra_test_files == (TB1 / "greeting" / "run-tests.sh",)
    assert task.context == TB1 / "greeting" and task.dockerfile == TB1 / "greeting" / "Dockerfile"
    assert task.instruction.startswith("The file /app/name.txt holds a name.")
    assert (task.agent_timeout, task.verifier_timeout) == (300.0, 180.0)
    yaml_task = load_task(TB1 / "sum-numbers")
    assert yaml_task.solution_script is None and len(yaml_task.solution_commands) == 2


def test_several_containers_and_bad_folders(tmp_path: Path) -> None:
    task = tmp_path / "two-services"
    shutil.copytree(TB1 / "greeting", task)
    (task / "docker-compose.yaml").write_text("services:\n  client:\n    build: .\n  db:\n    image: postgres:16\n")
    assert load_task(task).not_runnable_kind == "containers"
    assert "client, db" in str(load_task(task).not_runnable)
    (task / "task.yaml").write_text("instruction: ''\n")
    with pytest.raises(TaskError, match="instruction is missing or empty"):
        load_task(task)
    with pytest.raises(TaskError, match=r"neither task\.toml"):
        load_task(tmp_path)
    harbor = tmp_path / "h"
    shutil.copytree(HARBOR / "count-lines", harbor)
    (harbor / "task.toml").write_text("[verifier]\ntimeout_sec = -1\n")
    with pytest.raises(TaskError, match="timeout_sec must be a positive number"):
        load_task(harbor)


def test_the_verifiers_packages_come_from_its_scripts() -> None:
    harbor = "uvx \\\n  -p 3.13 \\\n  -w pytest==8.4.1 \\\n  -w pytest-json-ctrf==0.3.5 \\\n  pytest --ctrf x.json /tests"
    assert requirements_of([harbor]) == ["pytest==8.4.1", "pytest-json-ctrf==0.3.5"]
    tb1 = "uv init\nuv add pytest==8.4.1\nuv add pandas pyarrow  # data\nuv run pytest $TEST_DIR/test_outputs.py -rA"
    assert requirements_of([tb1]) == ["pandas", "pyarrow", "pytest==8.4.1"]
    mixed = "pip install -r /tests/req.txt requests==2.32.3 && uv run --with=numpy,scipy pytest\npython3 -m pip install x"
    assert requirements_of([mixed]) == ["numpy", DEFAULT_PYTEST, "requests==2.32.3", "scipy", "x"]
    assert requirements_of(["bash /tests/run.sh"]) == [DEFAULT_PYTEST]


def test_a_verifier_that_downloads_is_found_before_it_runs() -> None:
    assert static_network_need(load_task(HARBOR / "jq-report")) is None  # uv's installer is stood in for
    reason = static_network_need(load_task(HARBOR / "verifier-downloads"))
    assert reason is not None and "https://example.com/terminal-tasks/expected-done.txt" in reason
    assert "tests/test.sh:2" in reason


@pytest.mark.parametrize(("files", "expected"), [
    ({"reward.txt": "1\n"}, (1.0, "reward.txt", None)),
    ({"reward.txt": "0.25"}, (0.25, "reward.txt", None)),
    ({"reward.json": '{"reward": 0.5, "note": "x", "speed": 3}', "reward.txt": "1"}, (0.5, "reward.json", None)),
    ({"reward.json": '{"accuracy": 1}'}, (1.0, "reward.json", None)),
    ({"reward.json": '{"detail": "x"}', "reward.txt": "1"}, (1.0, "reward.json", None)),
    ({"reward.json": '{"a": 1, "b": 0}'}, (0.0, "reward.json", 'reward.json has no "reward" and not exactly one')),
    ({"reward.txt": "passed"}, (0.0, "reward.txt", "reward.txt is not a number")),
    ({"reward.json": "[1]"}, (0.0, "reward.json", "reward.json is not a JSON object")),
    ({}, (None, "", None)),
])
def test_the_reward_is_read_as_harbor_reads_it(tmp_path: Path, files: dict[str, str],
                                               expected: tuple[float | None, str, str | None]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    reward, source, _numbers, problem = read_reward(tmp_path)
    assert (reward, source) == expected[:2]
    assert (problem is None) if expected[2] is None else (expected[2] in str(problem))


def test_a_reward_file_the_verifier_linked_elsewhere_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("1")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "reward.txt").symlink_to(tmp_path / "secret")
    reward, _source, _numbers, problem = read_reward(tmp_path / "logs")
    assert reward == 0.0 and "cannot be opened" in str(problem)


def test_terminal_bench_1s_pytest_summary() -> None:
    output = ("...\n=========================== short test summary info ============================\n"
              "PASSED ../tests/test_outputs.py::test_a\nFAILED ../tests/test_outputs.py::test_b - assert 1 == 2\n"
              "SKIPPED [1] ../tests/test_outputs.py:9: no\nXFAIL ../tests/test_outputs.py::test_c - later\n"
              "========================= 1 failed, 1 passed in 0.05s =========================\n")
    # as upstream's parser: only a FAILED line loses its " - message"; the statuses decide the verdict
    assert parse_pytest_summary(output) == {"test_a": "PASSED", "test_b": "FAILED", "test_c - later": "XFAIL",
                                            "[1] ../tests/test_outputs.py:9: no": "SKIPPED"}
    assert parse_pytest_summary("no summary at all") is None
    assert parse_pytest_summary("== short test summary info ==\n") == {}


def test_the_oracle_replays_the_reference_solution_visibly() -> None:
    harbor = oracle_steps(Sample(id="jq-report", input="", metadata={"task_dir": str(HARBOR / "jq-report")}))
    assert isinstance(harbor[0], ToolStep) and isinstance(harbor[-1], SayStep)
    command = harbor[0].arguments["command"]
    assert (HARBOR / "jq-report" / "solution" / "solve.sh").read_text() in command  # the script as it runs
    assert command.rstrip().endswith("bash /solution/solve.sh")
    tb1 = oracle_steps(Sample(id="greeting", input="", metadata={"task_dir": str(TB1 / "greeting")}))
    assert tb1[0].arguments["command"].rstrip().endswith("bash /oracle/solution.sh")  # type: ignore[union-attr]
    commands = oracle_steps(Sample(id="sum-numbers", input="", metadata={"task_dir": str(TB1 / "sum-numbers")}))
    assert [s.arguments["command"] for s in commands if isinstance(s, ToolStep)] == list(
        load_task(TB1 / "sum-numbers").solution_commands)


def test_rescoring_works_the_verdict_out_from_the_stored_reward() -> None:
    assert rescore({"scoring_metadata": {"reward": 1.0}}).correct is True
    assert rescore({"scoring_metadata": {"reward": 0.5}}).correct is False
    unscored = rescore({"scoring_metadata": {"unscored_reason": "the task needs 1 GPU(s)", "reward": None}})
    assert unscored.correct is None and unscored.metadata["unscored_reason"] == "the task needs 1 GPU(s)"
    kept = rescore({"is_correct": True, "score": 1.0, "scoring_metadata": {}})
    assert kept.correct is True and "rescore_note" in kept.metadata


def test_the_bundled_stand_ins_parse(tmp_path: Path) -> None:
    # the kit's script runs under another interpreter inside the sandbox: it must at least be valid Python here
    from pytest_jeval.benchmarks._terminal.kit import KIT_FILES

    source = (KIT_FILES / "jeval_verifier.py").read_text()
    compile(source, "jeval_verifier.py", "exec")
    assert json.dumps(requirements_of([])) == json.dumps([DEFAULT_PYTEST])
