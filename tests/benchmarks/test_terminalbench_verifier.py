"""The Terminal-Bench verifier's environment and reward rule (:mod:`pytest_jeval.benchmarks._terminal.verify`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._terminal.kit import KIT_MOUNT
from pytest_jeval.benchmarks._terminal.verify import disagreement, reward_outcome, snapshot_home, verifier_environment

BASE = {"exit_status": 0, "timed_out": False, "seconds": 0.1, "output": ""}


def test_a_passing_reward_with_a_failing_exit_status_is_a_failure_with_the_reason() -> None:
    reason = disagreement(1.0, 3, "reward.txt")
    assert reason is not None and "reward.txt says 1" in reason and "status 3" in reason
    assert disagreement(1.0, 0, "reward.txt") is None
    assert disagreement(0.0, 1, "reward.json") is None  # Terminal-Bench 2's test.sh: reward 0, any exit status


def test_the_verdict_reads_the_reward_file_and_a_contradicting_exit_status_fails_it(tmp_path: Path) -> None:
    """What both verifiers (the image sandbox's and ``terminalbench-native``'s) take as the verdict."""
    assert reward_outcome(tmp_path, 0, {**BASE}).reward == 1.0  # no reward file: the exit status
    assert reward_outcome(tmp_path, 2, {**BASE, "exit_status": 2}).reward == 0.0
    (tmp_path / "reward.txt").write_text("1\n")
    agreed = reward_outcome(tmp_path, 0, {**BASE})
    assert (agreed.reward, agreed.source) == (1.0, "reward.txt")
    forged = reward_outcome(tmp_path, 1, {**BASE, "exit_status": 1})
    assert forged.reward == 0.0 and forged.problem is not None and "status 1" in forged.problem


def test_the_verifier_environment_is_clean() -> None:
    image = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": "/evil", "BASH_ENV": "/x", "LANG": "C.UTF-8",
             "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "LD_PRELOAD": "/x.so"}
    env, dropped = verifier_environment(image, {"PYTHONPATH": "/tests/lib"}, "/root")
    assert dropped == ["BASH_ENV", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "LD_PRELOAD", "PYTHONPATH"]
    assert env["PYTHONPATH"] == "/tests/lib"  # the task's own [verifier] env may set it
    assert "BASH_ENV" not in env and "LD_PRELOAD" not in env and env["LANG"] == "C.UTF-8"
    assert env["PYTHONNOUSERSITE"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["HOME"] == "/root" and env["TEST_DIR"] == "/tests"
    assert env["PATH"].startswith(f"{KIT_MOUNT}/bin:")
    keys = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert keys["core.hooksPath"] != "" and keys["gpg.program"] == "gpg" and keys["core.fsmonitor"] == "false"


def test_a_home_that_overlaps_the_working_directory_is_not_swapped() -> None:
    nothing: Any = None  # never reached: these homes are refused before the sandbox is used
    for home, workdir in (("/", "/app"), ("/app", "/app"), ("/app/home", "/app"), ("/srv", "/srv/app")):
        assert snapshot_home(nothing, home, workdir) is None, (home, workdir)
