"""``terminalbench-native``: the task's own Dockerfile under a container engine (docker or podman), as upstream.

Where an engine answers (``docker info``), each episode builds the task's image (``docker build``,
tagged by the environment's content), starts a container that sleeps (``--network none``
unless the task allows the internet and ``allow_internet`` is set; ``--cpus``/``--memory``
from ``task.toml``), runs the agent's commands with ``docker exec``, copies ``tests/`` in after
the agent phase and runs the verifier in the same container (with the network the task
allows: upstream's uv bootstrap works there), then reads the reward as Harbor does and
removes the container.

Where none answers, the benchmark is refused before any sample with the reason (the engine's
own message). This machine has no container engine, so this path is **untested here**; the
image sandboxes (``terminalbench-v2.1``, ``terminalbench``) are the tested way.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_jeval.agents import HarnessError, NotRunnable
from pytest_jeval.benchmarks._terminal.formats import TaskSpec
from pytest_jeval.sandbox.shell.providers import DockerSandbox, ProviderUnavailable

if TYPE_CHECKING:
    from pytest_jeval.benchmarks._terminal.runner import TaskEnv, TerminalBenchOptions
    from pytest_jeval.benchmarks._terminal.verify import VerifierOutcome

__all__ = ["check_engine", "engine", "start_native", "verify_native"]

ENGINES = ("docker", "podman")


@functools.cache
def engine() -> str:
    """The first container engine that answers ``info``; :class:`ProviderUnavailable` with the reason."""
    problems = []
    for name in ENGINES:
        path = shutil.which(name)
        if path is None:
            problems.append(f"{name} is not installed")
            continue
        try:
            done = subprocess.run([path, "info"], capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"`{name} info` failed: {exc}")
            continue
        if done.returncode == 0:
            return path
        message = (done.stderr or done.stdout).strip().splitlines()
        problems.append(f"`{name} info` failed: {message[-1] if message else f'exit status {done.returncode}'}")
    raise ProviderUnavailable("terminalbench-native needs a container engine that answers, and none does here ("
                              + "; ".join(problems) + "). Use terminalbench-v2.1 (or terminalbench), which builds "
                              "the task's Dockerfile without a daemon")


def check_engine() -> None:
    """Raise :class:`ProviderUnavailable` when no container engine answers."""
    engine()


def start_native(task: TaskSpec, options: TerminalBenchOptions) -> TaskEnv:
    """Build the task's image and start its container."""
    from pytest_jeval.benchmarks._terminal.runner import DISAGREEMENT, TaskEnv, deviations

    if task.dockerfile is None or task.context is None:
        raise NotRunnable("the task has no Dockerfile")
    docker = engine()
    digest = hashlib.sha256(task.dockerfile.read_bytes() + str(task.context.resolve()).encode()).hexdigest()[:16]
    tag = f"jeval-tb-{task.id.lower()}:{digest}"
    built = subprocess.run([docker, "build", "-q", "-t", tag, "-f", str(task.dockerfile), str(task.context)],
                           capture_output=True, text=True, timeout=task.build_timeout, check=False)
    if built.returncode != 0:
        raise NotRunnable(f"docker build failed: {(built.stderr or built.stdout)[-1500:]}")
    network = bool(options.allow_internet and task.allow_internet)
    argv = [docker, "run", "-d", "--network", "bridge" if network else "none"]
    if task.cpus:
        argv += ["--cpus", str(task.cpus)]
    if task.memory_mb:
        argv += ["--memory", f"{task.memory_mb}m"]
    started = subprocess.run([*argv, tag, "sh", "-c", "sleep infinity"], capture_output=True, text=True, timeout=120,
                             check=False)
    if started.returncode != 0:
        raise HarnessError(f"docker run failed: {started.stderr[-1500:]}")
    box = DockerSandbox(docker, started.stdout.strip())
    workdir = subprocess.run([docker, "inspect", "-f", "{{.Config.WorkingDir}}", tag], capture_output=True, text=True,
                             check=False).stdout.strip()
    box.workdir = workdir or "/"
    facts = {"from": "docker", "image": tag, "agent_network": network,
             "deviations": [*(d for d in deviations(task, None, None, network, options)
                              if "tmux" in d or "network" in d), NATIVE_VERIFIER, DISAGREEMENT]}
    return TaskEnv(task, box, None, None, options, facts)


def verify_native(env: TaskEnv) -> VerifierOutcome:
    """Upstream's verification in the task's container: tests copied in, ``test.sh`` run, reward read."""
    from pytest_jeval.benchmarks._terminal.verify import outcome_of, parse_pytest_summary, reward_outcome

    task, box = env.task, env.sandbox
    box.exec("rm -rf /tests && mkdir -p /tests /logs/verifier", timeout=60)
    for child in sorted(task.tests_dir.iterdir()):
        box.copy_in(child, f"/tests/{child.name}")
    for extra in task.extra_test_files:
        box.copy_in(extra, f"/tests/{extra.name}")
    outcome = box.exec(f"{_clean_env(task)} bash /tests/{task.test_script} > /logs/verifier/test-stdout.txt 2>&1",
                       timeout=task.verifier_timeout)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in ("reward.txt", "reward.json", "test-stdout.txt"):
            try:
                box.copy_out(f"/logs/verifier/{name}", folder / name)
            except (subprocess.CalledProcessError, OSError):
                pass
        output = (folder / "test-stdout.txt").read_text(errors="replace") if (folder / "test-stdout.txt").exists() \
            else ""
        base: dict[str, Any] = {"exit_status": outcome.returncode, "timed_out": outcome.timed_out,
                                "seconds": round(outcome.seconds, 3), "output": output[-3000:]}
        if outcome.timed_out:
            return outcome_of(0.0, "timeout", base, problem="the verifier timed out")
        if task.parser == "pytest":
            statuses = parse_pytest_summary(output)
            ok = statuses is not None and all(s in ("PASSED", "SKIPPED", "XFAIL") for s in statuses.values())
            return outcome_of(1.0 if ok else 0.0, "pytest summary", base, tests=statuses or {})
        return reward_outcome(folder, outcome.returncode, base)


NATIVE_VERIFIER = ("the verifier runs in the task's container as the agent left it (its HOME included) with "
                   "PYTHONNOUSERSITE=1, git reading no global or system configuration (hooks, fsmonitor, pager, editor "
                   "and gpg programs off) and no PYTHONPATH, PYTHONSTARTUP, BASH_ENV or LD_PRELOAD")
"""What ``terminalbench-native``'s verifier is given (kept in every record)."""


def _clean_env(task: TaskSpec) -> str:
    """``env -u ... NAME=VALUE ...``: the verifier's command prefix in the container."""
    import shlex

    from pytest_jeval.benchmarks._terminal.verify import DROPPED
    from pytest_jeval.sandbox.shell.providers import git_guard_env

    sets = {"TEST_DIR": "/tests", "PYTHONNOUSERSITE": "1", "GIT_CONFIG_NOSYSTEM": "1", **git_guard_env()}
    sets.update(task.verifier_env)
    unset = " ".join(f"-u {name}" for name in DROPPED if name not in dict(task.verifier_env))
    return f"env {unset} " + " ".join(f"{k}={shlex.quote(v)}" for k, v in sets.items())
