"""``jeval tasks check DIR``: oracle and nop per task, build times, why a task cannot run here, and a verdict on
the whole set (terminal_lite's tasks pass it; a task whose tests a do-nothing agent passes does not)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_jeval.cli._tasks import layout_benchmark
from tests.support.terminal import TASKS_DIR, ensure_rootfs
from tests.support.terminalbench import HARBOR, TB1, built

REPO = Path(__file__).resolve().parents[2]


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_jeval", "tasks", "check", *args], cwd=cwd,
                          capture_output=True, text=True, env=None)


def test_the_layout_names_the_benchmark() -> None:
    assert layout_benchmark(HARBOR) == "terminalbench-v2.1"
    assert layout_benchmark(TB1) == "terminalbench"
    assert layout_benchmark(TASKS_DIR) == "terminal_lite"
    assert layout_benchmark(HARBOR / "count-lines") == "terminalbench-v2.1"


@pytest.mark.slow
def test_terminal_lites_tasks_pass_the_check(tmp_path: Path) -> None:
    ensure_rootfs()
    done = _check(str(TASKS_DIR), "--json", "--", "-n", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = json.loads(done.stdout[done.stdout.index("["):])
    assert len(rows) == len(list(TASKS_DIR.iterdir()))
    assert all((r["oracle"], r["nop"], r["verdict"]) == (1.0, 0.0, "ok") for r in rows), rows


@pytest.mark.slow
def test_a_task_a_do_nothing_agent_passes_makes_the_set_untrustworthy(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    for name in ("count-lines", "needs-gpu"):
        shutil.copytree(HARBOR / name, tasks / name)
    weak = tasks / "weak-tests"
    shutil.copytree(HARBOR / "count-lines", weak)
    (weak / "tests" / "test_outputs.py").write_text("def test_nothing():\n    assert True\n")
    built(HARBOR / "count-lines")  # the same environment as the copies: cached
    done = _check(str(tasks), "-o", str(tmp_path / "work"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    row = {line.split()[0]: line.split() for line in lines if line.split() and line.split()[0] in
           ("count-lines", "needs-gpu", "weak-tests")}
    assert row["count-lines"][1:3] == ["1", "0"] and row["count-lines"][-1] == "ok"
    assert row["weak-tests"][1:3] == ["1", "1"] and " ".join(row["weak-tests"][-2:]) == "nop passes"
    assert " ".join(row["needs-gpu"][-3:]) == "cannot run here"
    assert any("the task needs 1 GPU(s)" in line for line in lines)
    assert "(cached)" in " ".join(row["count-lines"])  # the build time, from the cache here
    assert lines[-1] == ("3 tasks: 2 run here, 1 cannot; oracle 1 and nop 0 on 1 of 2: the set is NOT trustworthy "
                         "here")
    assert (tmp_path / "work" / "tasks-check.toml").is_file()  # the suite, to run again with pytest


def test_a_folder_without_tasks_is_a_usage_error(tmp_path: Path) -> None:
    done = _check(str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "no task folder" in done.stderr
    done = _check(str(tmp_path / "missing"), cwd=tmp_path)
    assert done.returncode == 2 and "is not a folder" in done.stderr
