"""The verification protocol: tests copied in after the agent, a clean verifier, and the reward read as upstream.

:func:`verify` runs once the agent phase is over (no process of the agent is left: each command's
PID namespace ended with it):

1. ``tests/`` (and Terminal-Bench 1's ``run-tests.sh``) is copied into a fresh host folder bound
   at ``/tests``; ``/logs/verifier`` is a fresh, empty folder; the verifier kit
   (:mod:`.kit`) is bound read-only at ``/jeval/kit`` and ``/jeval/runtime``. None of them
   existed during the agent phase, so the agent cannot have written them.
2. ``bash /tests/test.sh`` (``run-tests.sh``) runs in the image's ``WORKDIR`` as its ``USER``,
   with a clean environment (:func:`verifier_environment`): the image's ``ENV`` less the variables
   that make a shell or an interpreter run code from elsewhere (:data:`DROPPED`), the task's
   ``[verifier] env``, ``TEST_DIR=/tests``, ``PYTHONNOUSERSITE=1``, git reading no global or system
   configuration and with hooks, fsmonitor, pager, editor and gpg programs forced off, and ``PATH`` =
   the kit's stand-ins first, then the image's. ``HOME`` is a fresh copy of the image's home **as
   built** (:func:`snapshot_home`, taken before the agent phase), bound over whatever the agent left
   there: no ``.gitconfig``, ``.bashrc``, user site-packages or ``usercustomize.py`` of the agent's.
   Its output goes to ``/logs/verifier/test-stdout.txt`` (as Harbor's does).
3. The verdict is read by the harness from the host side:

   - Harbor: ``/logs/verifier/reward.json`` (an object of numbers; its ``reward``, or its only
     number) as Harbor reads it, else ``reward.txt`` (one number), else the test script's exit
     status (0 is reward 1). A reward file that cannot be read is reward 0, with the reason. A
     reward of 1 or more while the test script exited non-zero is reward 0, with the reason (the
     two disagree; Harbor reads the reward file alone: a declared deviation).
   - Terminal-Bench 1: its pytest parser on the output: the lines after ``short test summary
     info``; PASSED, SKIPPED and XFAIL pass, anything else fails; resolved when every test
     listed passed (upstream's rule, an empty list included); no summary is unresolved.

   A verifier that timed out scores 0. One that needed the network (a stand-in noted it in
   ``/jeval/notes``) and did not pass is **unscored** with the commands it tried.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._terminal.formats import TaskSpec
from pytest_jeval.benchmarks._terminal.kit import Kit, kit_mounts, verifier_path
from pytest_jeval.sandbox.shell.image_sandbox import ImageSandbox, Mount, copy_plain

__all__ = ["DROPPED", "VerifierOutcome", "disagreement", "outcome_of", "parse_pytest_summary", "read_reward",
           "reward_outcome", "snapshot_home", "verifier_environment", "verify"]

MAX_READ = 1 << 20
STDOUT_FILE = "test-stdout.txt"
_SUMMARY = re.compile(r"=+\s*short test summary info\s*=+", re.IGNORECASE)
_PASSING = ("PASSED", "SKIPPED", "XFAIL")
_STATUSES = ("PASSED", "FAILED", "SKIPPED", "XFAIL", "XPASS", "ERROR")
DROPPED = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONINSPECT", "BASH_ENV", "ENV",
           "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GIT_DIR", "GIT_WORK_TREE", "GIT_EXEC_PATH",
           "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "PERL5OPT", "PERL5LIB", "RUBYOPT", "NODE_OPTIONS")
"""Variables the verifier never gets from the image's ``ENV`` (only a task's ``[verifier] env`` may set them):
each makes a shell, an interpreter or git run or load code from somewhere else."""


@dataclasses.dataclass(frozen=True)
class VerifierOutcome:
    """What the verifier did and the verdict read from it."""

    reward: float | None
    """The reward (1.0 is a pass); None when unscored."""
    source: str
    """Where it came from: ``reward.json``, ``reward.txt``, ``exit status``, ``pytest summary``."""
    exit_status: int
    timed_out: bool
    seconds: float
    output: str
    """The end of the verifier's output."""
    rewards: dict[str, float] = dataclasses.field(default_factory=dict)
    """Every number of ``reward.json``."""
    tests: dict[str, str] = dataclasses.field(default_factory=dict)
    """Terminal-Bench 1: each test's status from the pytest summary."""
    network: tuple[str, ...] = ()
    """Commands the verifier tried that needed the network."""
    problem: str | None = None
    """Why the reward is 0 or missing beyond the tests' own verdict (an unreadable reward file, a timeout)."""
    unscored_reason: str | None = None

    @property
    def passed(self) -> bool:
        """True when the reward is at least 1."""
        return self.reward is not None and self.reward >= 1.0


def outcome_of(reward: float | None, source: str, base: dict[str, Any], **extra: Any) -> VerifierOutcome:
    """A :class:`VerifierOutcome` from the verifier run's facts (``base``) and the verdict."""
    return VerifierOutcome(reward=reward, source=source, exit_status=int(base["exit_status"]),
                           timed_out=bool(base["timed_out"]), seconds=float(base["seconds"]),
                           output=str(base["output"]), network=tuple(base.get("network", ())), **extra)


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes (None when missing); links and special files are refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path.name} cannot be opened: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path.name} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_READ)
    finally:
        os.close(fd)


def _tail(path: Path, limit: int) -> str:
    try:
        data = _read_small(path) or b""
    except ValueError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def read_reward(folder: Path) -> tuple[float | None, str, dict[str, float], str | None]:
    """Harbor's reward files in ``folder``: ``(reward, source, every number of reward.json, problem)``;
    ``reward`` is None when neither file exists."""
    try:
        data = _read_small(folder / "reward.json")
        if data is not None:
            try:
                parsed: Any = json.loads(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return 0.0, "reward.json", {}, "reward.json is not valid JSON"
            if not isinstance(parsed, dict):
                return 0.0, "reward.json", {}, "reward.json is not a JSON object"
            numbers = {str(k): float(v) for k, v in parsed.items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))}
            if "reward" not in numbers:
                text = _read_small(folder / "reward.txt")  # Harbor's fallback for the scalar reward
                if text is not None:
                    try:
                        numbers["reward"] = float(text.decode("utf-8").strip())
                    except (ValueError, UnicodeDecodeError):
                        pass
            if "reward" in numbers:
                return numbers["reward"], "reward.json", numbers, None
            if len(numbers) == 1:
                return next(iter(numbers.values())), "reward.json", numbers, None
            return 0.0, "reward.json", numbers, "reward.json has no \"reward\" and not exactly one number"
        text = _read_small(folder / "reward.txt")
        if text is not None:
            try:
                value = float(text.decode("utf-8").strip())
            except (ValueError, UnicodeDecodeError):
                return 0.0, "reward.txt", {}, f"reward.txt is not a number: {text[:40]!r}"
            if not math.isfinite(value):
                return 0.0, "reward.txt", {}, f"reward.txt is not a finite number: {value}"
            return value, "reward.txt", {"reward": value}, None
    except ValueError as exc:
        return 0.0, "reward file", {}, str(exc)
    return None, "", {}, None


def parse_pytest_summary(output: str) -> dict[str, str] | None:
    """Terminal-Bench 1's pytest parser: each test's status from the lines after ``short test summary info``
    (``FAILED path::test - message`` keeps the name before the `` - ``); None when there is no summary."""
    parts = _SUMMARY.split(output, maxsplit=1)
    if len(parts) < 2:
        return None
    results: dict[str, str] = {}
    for line in parts[1].splitlines():
        if line.startswith("FAILED") and " - " in line:
            line = " - ".join(line.split(" - ")[:-1])
        words = line.split(maxsplit=1)
        if len(words) < 2:
            continue
        status = words[0].strip().strip(":")
        if status not in _STATUSES:
            continue
        name = words[1].strip().split("::", 1)[-1]
        if name:
            results[name] = status
    return results


def verifier_environment(image_env: dict[str, str], task_env: dict[str, str], home: str) -> tuple[dict[str, str],
                                                                                                 list[str]]:
    """The verifier's whole environment, and the names of :data:`DROPPED` the image's ``ENV`` set (left out)."""
    from pytest_jeval.sandbox.shell.providers import git_guard_env

    dropped = sorted(k for k in image_env if k in DROPPED or k.startswith("GIT_CONFIG_"))
    env = {k: v for k, v in image_env.items() if k not in dropped}
    env.update(task_env)
    env.update({"TEST_DIR": "/tests", "HOME": home, "PYTHONNOUSERSITE": "1", "GIT_CONFIG_NOSYSTEM": "1",
                **git_guard_env(), "PATH": verifier_path(image_env.get("PATH", DEFAULT_PATH))})
    return env, dropped


DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOME_SNAPSHOT = "home-as-built"


def snapshot_home(sandbox: ImageSandbox, home: str, workdir: str) -> Path | None:
    """Copy the image's ``home`` as built (call it before the agent phase) to a host folder of the sandbox's;
    None when the home cannot be swapped for the verifier (``/``, or it holds or lies in ``workdir``: the
    agent's work would be hidden)."""
    norm, work = os.path.normpath(home), os.path.normpath(workdir)
    if norm == "/" or norm == work or work.startswith(norm.rstrip("/") + "/") or norm.startswith(work + "/"):
        return None
    out = sandbox.io_dir(HOME_SNAPSHOT)
    done = sandbox.run(("/bin/sh", "-c", 'if [ -d "$1" ] && [ ! -L "$1" ]; then cp -a "$1"/. /jeval/home/; fi',
                        "sh", norm), timeout=300, mounts=[Mount(out, "/jeval/home", writable=True)], uid=0)
    if done.returncode != 0:
        raise RuntimeError(f"the image's home {norm} could not be copied: {done.stderr.strip()[-500:]}")
    return out


def disagreement(reward: float, exit_status: int, source: str) -> str | None:
    """Why a passing ``reward`` is not taken: the test script exited non-zero (None: they agree)."""
    if reward >= 1.0 and exit_status != 0:
        return (f"{source} says {reward:g} but the test script exited with status {exit_status}: a reward that "
                "disagrees with the exit status is a failure")
    return None


def reward_outcome(folder: Path, exit_status: int, base: dict[str, Any]) -> VerifierOutcome:
    """A Harbor verdict: the reward files in ``folder`` (:func:`read_reward`), else the test script's
    ``exit_status``; a passing reward that the exit status contradicts is 0, with the reason (:func:`disagreement`)."""
    reward, source, numbers, problem = read_reward(folder)
    if reward is None:
        reward, source = (1.0 if exit_status == 0 else 0.0), "exit status"
    elif problem is None and (problem := disagreement(reward, exit_status, source)) is not None:
        reward = 0.0
    return outcome_of(reward, source, base, rewards=numbers, problem=problem)


def verify(sandbox: ImageSandbox, task: TaskSpec, kit: Kit, *, image_env: dict[str, str], home: str,
           pristine_home: Path | None = None) -> VerifierOutcome:
    """Run the task's verifier in ``sandbox`` after the agent phase (see the module docstring); ``pristine_home``
    (from :func:`snapshot_home`) is bound at ``home``."""
    tests = sandbox.io_dir("tests")
    for child in sorted(task.tests_dir.iterdir()):
        copy_plain(child, tests / child.name)
    for extra in task.extra_test_files:
        if not (tests / extra.name).exists():
            copy_plain(extra, tests / extra.name)
    logs = sandbox.io_dir("logs-verifier")
    notes = sandbox.io_dir("notes")
    env, _ = verifier_environment(image_env, dict(task.verifier_env), home)
    command = f"bash /tests/{task.test_script} > /logs/verifier/{STDOUT_FILE} 2>&1"
    # the home first: binds made after it lie on top, wherever a link the agent left there points
    mounts = [*([Mount(pristine_home, home, writable=True)] if pristine_home is not None else []),
              Mount(tests, "/tests", writable=True), Mount(logs, "/logs/verifier", writable=True),
              *kit_mounts(kit, notes)]
    outcome = sandbox.run(("/bin/bash", "-c", command), timeout=task.verifier_timeout, env=env, mounts=mounts)
    output = _tail(logs / STDOUT_FILE, 200_000)
    network = tuple(line for line in _tail(notes / "network.txt", 20_000).splitlines() if line.strip())
    base: dict[str, Any] = {
        "exit_status": outcome.returncode, "timed_out": outcome.timed_out, "seconds": round(outcome.seconds, 3),
        "output": (output[-3000:] + ("\n" + outcome.stderr[-1000:] if outcome.stderr.strip() else "")).strip(),
        "network": network}
    if outcome.timed_out:
        result = outcome_of(0.0, "timeout", base, problem=f"the verifier timed out after {task.verifier_timeout:g} s")
    elif task.parser == "pytest":
        statuses = parse_pytest_summary(output)
        if statuses is None:
            result = outcome_of(0.0, "pytest summary", base,
                                problem="the verifier printed no pytest summary (short test summary info)")
        else:
            ok = all(s in _PASSING for s in statuses.values())
            result = outcome_of(1.0 if ok else 0.0, "pytest summary", base, tests=statuses)
    else:
        result = reward_outcome(logs, outcome.returncode, base)
    if network and not result.passed:
        reason = f"the verifier needed the network, which it does not have here: {'; '.join(network)[:600]}"
        return dataclasses.replace(result, reward=None, unscored_reason=reason)
    return result
