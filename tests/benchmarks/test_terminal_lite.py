"""terminal_lite's tasks in the real sandbox: every solve.sh passes its tests, doing nothing fails them.

Also the Terminal-Bench 2 layout loader: what a task folder must hold, and how a bad one is refused.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from pytest_jeval import LoadContext
from pytest_jeval.benchmarks._terminal.tasks import load_task, solution_blocks
from pytest_jeval.benchmarks.terminal_lite import bench_terminal_lite as bench
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox.shell.verifier import decide
from tests.support.terminal import TASKS_DIR, ensure_rootfs

TASK_IDS = sorted(p.name for p in TASKS_DIR.iterdir())


@pytest.fixture(scope="module", autouse=True)
def _rootfs() -> None:
    ensure_rootfs()


def sample_of(task_dir: Path) -> Sample:
    task = load_task(task_dir)
    return Sample(id=task.id, input=task.instruction, target="",
                  metadata={"task_dir": str(task_dir), "sandbox": "bubblewrap"})


def run_task(task_id: str, solve: bool) -> tuple[bool, str]:
    """Start the task's sandbox, optionally run solve.sh, run the checker; (passed, checker output)."""
    task_dir = TASKS_DIR / task_id
    env = bench.environment(sample_of(task_dir), Path("."))
    try:
        if solve:
            done = env.sandbox.exec("bash -e", timeout=60, stdin=load_task(task_dir).solution.read_text())
            assert done.returncode == 0, done.stderr
        checked = env.check()
    finally:
        env.sandbox.stop()
    return checked.passed, checked.outcome.stdout + checked.outcome.stderr


def test_the_index_lists_every_task_folder_and_covers_the_kinds() -> None:
    index = bench.BENCHMARK.default_files(bench.__file__)[0]
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    assert sorted(Path(r["path"]).name for r in rows) == TASK_IDS
    assert len(TASK_IDS) == bench.BENCHMARK.sample_count >= 12
    kinds = Counter(load_task(TASKS_DIR / t).category for t in TASK_IDS)
    assert {"file-operations", "text-processing", "software-engineering", "version-control"} <= set(kinds)
    for task_id in TASK_IDS:
        task = load_task(TASKS_DIR / task_id)
        assert task.solution.is_file() and not task.needs_docker, task_id
        assert "solution" not in {p.name for p in (TASKS_DIR / task_id / "environment").iterdir()}


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solve_passes_and_doing_nothing_fails(task_id: str) -> None:
    passed, output = run_task(task_id, solve=True)
    assert passed, output
    passed, output = run_task(task_id, solve=False)
    assert not passed, output


def test_the_agent_cannot_see_the_tests_or_the_setup_script() -> None:
    env = bench.environment(sample_of(TASKS_DIR / "git-restore-file"), Path("."))
    try:
        seen = env.sandbox.exec("ls -A /app; ls -A /tests; ls -A /logs; echo end", timeout=60)
    finally:
        env.sandbox.stop()
    assert seen.stdout.split() == ["repo", "end"]  # setup.sh ran and was removed; no tests yet


def _copy_task(tmp_path: Path, name: str = "git-feature-branch") -> Path:
    dest = tmp_path / name
    shutil.copytree(TASKS_DIR / name, dest)
    return dest


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: (d / "tests" / "test.sh").unlink(), "tests/test.sh is missing"),
    (lambda d: (d / "instruction.md").write_text("  \n"), "instruction.md is empty"),
    (lambda d: (d / "task.toml").write_text("[agent\n"), "not valid TOML"),
    (lambda d: (d / "task.toml").write_text("[verifier]\ntimeout_sec = -1\n"), "positive number"),
    (lambda d: (d / "task.toml").write_text("[metadata]\ntags = 'x'\n"), "tags must be a list"),
])
def test_a_bad_task_folder_is_refused(tmp_path: Path, change: object, message: str) -> None:
    folder = _copy_task(tmp_path)
    change(folder)  # type: ignore[operator]
    with pytest.raises(ValueError, match=message):
        load_task(folder)


def test_task_toml_fields_and_solution_blocks() -> None:
    task = load_task(TASKS_DIR / "make-build")
    assert (task.category, task.difficulty, task.verifier_timeout, task.agent_timeout) == (
        "software-engineering", "medium", 120.0, 600.0)
    blocks = solution_blocks(task)
    assert len(blocks) == 2 and all(b.startswith("cd /app/calc && ") for b in blocks)
    assert load_task(TASKS_DIR / "git-restore-file").setup_script is not None


def test_a_dockerfile_task_needs_the_docker_sandbox(tmp_path: Path) -> None:
    folder = _copy_task(tmp_path)
    (folder / "environment" / "Dockerfile").write_text("FROM debian:bookworm\n")
    ctx = LoadContext(benchmark="terminal_lite", subset=None, seed=0, data_dir=tmp_path)
    with pytest.raises(ValueError, match='only sandbox = "docker" can build'):
        bench.to_sample({"path": folder.name}, 0, ctx)


@pytest.mark.parametrize(("script", "timeout", "passes", "reason"), [
    ("echo 0 > /logs/verifier/reward.txt; exit 0", 30, False, "the reward file says 0"),  # Terminal-Bench 2
    ("echo 1 > /logs/verifier/reward.txt; exit 0", 30, True, "passed"),
    ("echo 1 > /logs/verifier/reward.txt; exit 3", 30, False, "disagrees with the exit status"),
    ("echo junk > /logs/verifier/reward.txt", 30, False, "not a number"),
    ("touch /tests/x 2>/dev/null && exit 0; exit 1", 30, False, "exited with status 1"),  # the tests are read-only
    ("exit 0", 30, True, "passed"),
    ("sleep 30; exit 0", 1, False, "timed out"),                          # past [verifier] timeout_sec
    ("echo 1 > /logs/verifier/reward.txt; sleep 30", 1, False, "timed out"),  # a timeout fails, whatever the reward
])
def test_the_checker_verdict(tmp_path: Path, script: str, timeout: int, passes: bool, reason: str) -> None:
    folder = _copy_task(tmp_path, "csv-totals")
    (folder / "tests" / "test.sh").write_text(f"#!/bin/bash\n{script}\n")
    (folder / "task.toml").write_text(f"[verifier]\ntimeout_sec = {timeout}\n")
    env = bench.environment(sample_of(folder), Path("."))
    try:
        checked = env.check()
    finally:
        env.sandbox.stop()
    outcome, reward = checked.outcome, checked.reward
    assert checked.passed is passes and reason in checked.reason, checked
    assert decide(outcome.returncode, outcome.timed_out, checked.reward_text)[0] is passes  # as rescore decides
    if reward is not None:
        assert bench.verdict(outcome.returncode, outcome.timed_out, reward) is passes
