"""Terminal-Bench through the plugin on real task folders (tests/data/terminalbench), without a Docker daemon.

The oracle scores 1 and nop 0 on every runnable task, in both layouts, under ``-n 2``; the
tasks that cannot run here are unscored with their reason and counted; an agent's tampering
does not move the reward; ``-k``, ``--lf`` and ``--jeval-resume`` after a SIGKILL in the middle
of an episode keep every task exactly once and leave no process or mount behind; and
``terminalbench-native`` is refused, with the reason, where no container engine answers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.terminalbench import (
    HARBOR,
    NOT_RUNNABLE_HARBOR,
    RUNNABLE_HARBOR,
    TB1,
    TB1_TASKS,
    ensure_task_sets,
    eventually,
    host_overlay_mounts,
    processes_with,
)

DEAD_MODEL = 'base_url = "http://127.0.0.1:9/v1"   # oracle and nop never call it'


@pytest.fixture(scope="module", autouse=True)
def _environments() -> None:
    ensure_task_sets()


def _records(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    counts = Counter(r["record_id"] for r in lines)
    assert max(counts.values()) == 1, counts  # one record per task
    return {r["record_id"]: r for r in lines}


@pytest.mark.slow
def test_the_oracle_scores_one_and_nop_zero_on_every_runnable_task(pytester: pytest.Pytester) -> None:
    entries = "".join(f'\n[[benchmarks]]\nname = "{name}"\nlabel = "{label}"\nagent = "{agent}"\ndata_dir = "{folder}"\n'
                      for name, folder in (("terminalbench-v2.1", HARBOR), ("terminalbench", TB1))
                      for agent in ("oracle", "nop") for label in [f"{name.split('-')[0]}-{agent}"
                                                                    + ("-tb1" if folder == TB1 else "")])
    (pytester.path / "suite.toml").write_text(f'[run]\noutput_dir = "out"\n\n[[models]]\nname = "m"\n{DEAD_MODEL}\n'
                                              + entries)
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-n", "2")
    assert result.ret == 1, result.stdout.str()[-3000:]  # nop fails and the unrunnable tasks are unscored
    out = pytester.path / "out"
    oracle, nop = _records(out / "terminalbench-oracle_m.jsonl"), _records(out / "terminalbench-nop_m.jsonl")
    oracle1, nop1 = _records(out / "terminalbench-oracle-tb1_m.jsonl"), _records(out / "terminalbench-nop-tb1_m.jsonl")
    assert set(oracle) == set(nop) == set(RUNNABLE_HARBOR) | set(NOT_RUNNABLE_HARBOR)
    for task in RUNNABLE_HARBOR:
        assert oracle[task]["is_correct"] is True and oracle[task]["score"] == 1.0, oracle[task]["scoring_metadata"]
        assert nop[task]["is_correct"] is False and nop[task]["score"] == 0.0
        meta = oracle[task]["scoring_metadata"]
        assert meta["reward_source"] == "reward.txt" and meta["built_as"].startswith("bookworm-python-slim-")
        assert meta["from"] == "python:3.11-slim-bookworm" and meta["python_provided"] == "3.11"
        assert meta["kit_python"] == "3.13" and "pytest==8.4.1" in meta["kit_requirements"]
        assert meta["layer_bytes"] < meta["base_bytes"] and meta["startup_seconds"] > 0
        assert any("verifier bootstrap offline" in d for d in meta["deviations"])
        assert any("without Docker: FROM python:3.11-slim-bookworm built as Debian bookworm" in d
                   for d in meta["deviations"])
        assert meta["agent_network"] is False
        assert any("no network in the agent phase" in d for d in meta["deviations"])
    for task, kind in NOT_RUNNABLE_HARBOR.items():
        for run in (oracle, nop):
            assert run[task]["is_correct"] is None and run[task]["error"] is None, (task, run[task])
            assert run[task]["scoring_metadata"]["unscored_kind"] == kind, (task, run[task]["scoring_metadata"])
    assert "environment/Dockerfile:3: unknown instruction: RUNN" in \
        oracle["broken-dockerfile"]["scoring_metadata"]["unscored_reason"]
    assert "'alpine' images are not supported" in oracle["alpine-base"]["scoring_metadata"]["unscored_reason"]
    assert "apt-get install cowsay" in oracle["verifier-apt-install"]["scoring_metadata"]["unscored_reason"]
    # the tasks that cannot run here end before any turn; the one whose verifier needs the network ran
    assert oracle["needs-gpu"]["agent"]["stop_reason"] == "not_run"
    assert oracle["verifier-apt-install"]["agent"]["stop_reason"] == "final"
    for task in TB1_TASKS:
        assert oracle1[task]["is_correct"] is True and nop1[task]["is_correct"] is False
        tests = oracle1[task]["scoring_metadata"]["tests"]
        assert tests and set(tests.values()) == {"PASSED"} and oracle1[task]["scoring_metadata"]["reward_source"] == \
            "pytest summary"
    # the oracle's one command shows the solution it ran
    trajectories = [json.loads(line) for line in (out / "terminalbench-oracle_m.jsonl.trajectories.jsonl")
                    .read_text().splitlines()]
    jq = next(t for t in trajectories if t["record_id"] == "jq-report")
    assert "jq -r 'group_by(.customer)" in jq["tool_calls"][0]["parsed"]["command"]
    summary = json.loads((out / "terminalbench-oracle_m.jsonl.summary.json").read_text())
    assert summary["unscored_by_kind"] == {"verifier-network": 2, "unsupported-base": 1, "dockerfile-syntax": 1,
                                           "gpu": 1}
    assert summary["unscored"] == 5 and summary["not_runnable"] == 4
    nop_summary = json.loads((out / "terminalbench-nop_m.jsonl.summary.json").read_text())
    assert nop_summary["nop_passes"] == []  # what a do-nothing agent passes: nothing
    assert host_overlay_mounts() == []
    # jeval rescore reads each verdict again from the stored reward: no verdict changes
    from pytest_jeval.cli import main

    for name in ("terminalbench-oracle_m.jsonl", "terminalbench-nop_m.jsonl"):
        again = pytester.path / f"rescored-{name}"
        assert main(["rescore", str(out / name), "-o", str(again)]) == 0
        assert {k: r["is_correct"] for k, r in _records(again).items()} == \
            {k: r["is_correct"] for k, r in _records(out / name).items()}


TAMPER = r"""
set -x
echo 999 > /app/count.txt                                   # the wrong answer
mkdir -p /tests /logs/verifier /root/.local/bin /usr/local/lib/python3.13/dist-packages /evil
echo 999 > /tests/expected.txt                              # the expected output, planted where tests will go
echo 1 > /logs/verifier/reward.txt                          # a reward, planted where the verifier writes
FORCE='import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'
for d in / /app /tests; do printf '%s' "$FORCE" > $d/conftest.py; done
printf '[pytest]\naddopts = -p no:terminal -x\n' > /pytest.ini
EXIT0='import atexit, os; atexit.register(lambda: os._exit(0))'
for d in /usr/lib/python3/dist-packages /usr/local/lib/python3.11/dist-packages /usr/local/lib/python3.13/dist-packages \
         /usr/lib/python3.11; do
  echo "$EXIT0" > $d/sitecustomize.py; echo "$EXIT0" > $d/zz-jeval-tamper.pth; done
mkdir -p /usr/local/lib/python3.11/dist-packages/pytest
printf 'import sys\ndef main(*a, **k):\n    return 0\nsys.exit(0)\n' > /usr/local/lib/python3.11/dist-packages/pytest/__init__.py
FAKE='#!/bin/sh
echo "all tests passed (fake)"; exit 0'
for b in pytest python python3 python3.13 uv uvx curl; do
  for d in /usr/local/bin /usr/local/sbin /root/.local/bin /evil; do printf '%s\n' "$FAKE" > $d/$b; chmod +x $d/$b; done
done
printf 'export PATH=/evil:$PATH\n' > /root/.local/bin/env
echo 'export PATH=/evil:$PATH PYTHONPATH=/evil' >> /root/.bashrc
echo 'export PATH=/evil:$PATH PYTHONPATH=/evil' > /etc/profile.d/zz-evil.sh
python3 -c "print('tampered')"
"""


@pytest.mark.slow
def test_tampering_in_the_agent_phase_does_not_change_the_reward(pytester: pytest.Pytester) -> None:
    instruction = (HARBOR / "count-lines" / "instruction.md").read_text().strip()
    tamper = tool_answer(ToolCallSpec("bash", {"command": TAMPER}))
    right = tool_answer(ToolCallSpec("bash", {"command": "wc -l < /app/data.txt > /app/count.txt"}))

    def respond(body: dict[str, Any], attempt: int) -> Any:
        steps: list[Any] = [tamper, "done"] if body["model"] == "cheat" else [tamper, right, "done"]
        return script_responder({instruction: steps}, default="no")(body, attempt)

    with FakeOpenAIServer(respond) as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            trajectories = "inline"
            cache = false

            [[models]]
            name = "cheat"
            base_url = "{server.base_url}"
            api_key = "x"

            [[models]]
            name = "honest"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "terminalbench-v2.1"
            data_dir = "{HARBOR}"
        """))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider",
                                               "-k", "count-lines")
    result.assert_outcomes(passed=1, failed=1)  # -k on the task id: one task per model
    cheat = _records(pytester.path / "out" / "terminalbench-v2.1_cheat.jsonl")
    honest = _records(pytester.path / "out" / "terminalbench-v2.1_honest.jsonl")
    assert set(cheat) == set(honest) == {"count-lines"}
    tool_output = cheat["count-lines"]["trajectory"]["tool_calls"][0]["result"]
    assert "exit status: 0" in tool_output and "tampered" in tool_output  # the tampering itself worked
    meta = cheat["count-lines"]["scoring_metadata"]
    assert cheat["count-lines"]["is_correct"] is False and meta["reward"] == 0.0, meta
    assert "FAILED" in meta["test_output"] and "fake" not in meta["test_output"]
    # the same tampering with the right answer passes: the verifier was not broken by it, only not fooled
    assert honest["count-lines"]["is_correct"] is True, honest["count-lines"]["scoring_metadata"]


def _suite(pytester: pytest.Pytester, base_url: str, extra: str = "") -> Path:
    suite = pytester.path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        cache = false
        tool_timeout = 900

        [[models]]
        name = "m"
        base_url = "{base_url}"
        api_key = "x"

        [[benchmarks]]
        name = "terminalbench"
        data_dir = "{TB1}"
    """) + extra)
    return suite


def _solver(state: dict[str, Any]) -> Any:
    """The scripted model of the Terminal-Bench 1 tasks: ``state["solve"]`` names the tasks it solves (by a part of
    their instruction), ``state["hang"]`` a command it runs first on ``greeting``."""

    def respond(body: dict[str, Any], attempt: int) -> Any:
        scripts: dict[str, list[Any]] = {}
        for key, command in SOLUTIONS.items():
            steps: list[Any] = []
            if state.get("hang") and key == GREETING:
                steps.append(tool_answer(ToolCallSpec("bash", {"command": state["hang"]})))
            if key in state["solve"]:
                steps.append(tool_answer(ToolCallSpec("bash", {"command": command})))
            scripts[key] = [*steps, "done"]
        return script_responder(scripts, default="no")(body, attempt)

    return respond


GREETING = "The file /app/name.txt holds a name."
NUMBERS = "/app/numbers.csv has one integer per line."
SOLUTIONS = {GREETING: "printf 'Hello, %s!\\n' \"$(cat /app/name.txt)\" > /app/greeting.txt",
             NUMBERS: "awk '{s+=$1} END {print s}' numbers.csv > sum.txt; sort -n numbers.csv | tail -1 > max.txt"}


@pytest.mark.slow
def test_lf_reruns_only_the_failed_task_and_keeps_each_once(pytester: pytest.Pytester) -> None:
    state: dict[str, Any] = {"solve": {NUMBERS}}
    with FakeOpenAIServer(_solver(state)) as server:
        suite = _suite(pytester, server.base_url)
        first = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "cacheprovider")
        first.assert_outcomes(passed=1, failed=1)
        state["solve"] = {NUMBERS, GREETING}
        asked_before = len(server.requests)
        again = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "cacheprovider", "--lf")
        again.assert_outcomes(passed=1)
        asked = [r["body"]["messages"][1]["content"] for r in server.requests[asked_before:]
                 if r["path"].endswith("/chat/completions")]
    assert asked and all(GREETING in text for text in asked)  # only the failed task was asked again
    records = _records(pytester.path / "out" / "terminalbench_m.jsonl")
    assert set(records) == set(TB1_TASKS) and all(r["is_correct"] for r in records.values())


@pytest.mark.slow
def test_sigkill_in_the_middle_of_an_episode_leaves_nothing_and_resume_finishes(pytester: pytest.Pytester) -> None:
    marker = "2999.75"
    state: dict[str, Any] = {"solve": {GREETING, NUMBERS}, "hang": f"sleep {marker}"}
    with FakeOpenAIServer(_solver(state)) as server:
        suite = _suite(pytester, server.base_url)
        cmd = [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "-p", "no:cacheprovider", "-q"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            assert eventually(lambda: bool(processes_with(marker.encode())), within=300), "the episode never started"
            keepers = [pid for pid in processes_with(b"nsrun.py") if _parent(pid) == proc.pid]
            assert keepers  # the sandbox's kept namespaces, children of the run
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # everything of the killed run goes: the command in the sandbox, its namespaces and their mounts
        assert eventually(lambda: not processes_with(marker.encode()))
        assert eventually(lambda: not any(Path(f"/proc/{pid}").exists() for pid in keepers))
        assert host_overlay_mounts() == []
        state["hang"] = None
        resumed = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, capture_output=True, text=True, env=env)
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    records = _records(pytester.path / "out" / "terminalbench_m.jsonl")
    assert set(records) == set(TB1_TASKS) and all(r["is_correct"] for r in records.values())


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def test_terminalbench_native_is_refused_where_no_container_engine_answers(pytester: pytest.Pytester,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    fake = pytester.path / "bin"
    fake.mkdir()
    (fake / "docker").write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
                                 " Is the docker daemon running?' >&2\nexit 1\n")
    (fake / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    (pytester.path / "suite.toml").write_text(f'[[models]]\nname = "m"\n{DEAD_MODEL}\n\n[[benchmarks]]\n'
                                              f'name = "terminalbench-native"\nagent = "oracle"\ndata_dir = "{HARBOR}"\n')
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str() + result.stdout.str()
    assert "terminalbench-native needs a container engine that answers" in text
    assert "`docker info` failed: Cannot connect to the Docker daemon" in text and "podman is not installed" in text
    assert "Traceback" not in text


def test_an_external_agent_on_terminalbench_native_is_refused_with_the_reason_before_any_request(
        pytester: pytest.Pytester) -> None:
    # terminalbench-v2.1, terminalbench and terminal_lite run external agents inside the task's environment
    # (tests/acceptance/test_terminal_external_e2e.py); a container engine's container is not given them
    (pytester.path / "suite.toml").write_text(f'[[models]]\nname = "m"\n{DEAD_MODEL}\n\n[[benchmarks]]\n'
                                              'name = "terminalbench-native"\nbackend = "command"\n'
                                              f'command = ["true", "{{prompt_file}}"]\ndata_dir = "{HARBOR}"\n')
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].backend: 'terminalbench-native' cannot run with the command "
                                 "agent: an external agent CLI runs inside the task's environment*image sandboxes "
                                 "only*"])
