"""terminal_lite: the project's own shell tasks in the Terminal-Bench 2 layout, run without Docker.

The tasks are folders below ``data/tasks/`` (see :mod:`pytest_jeval.benchmarks._terminal.tasks`),
listed in ``data/tasks.jsonl``: one row per task, ``{"path": "tasks/<id>"}``
relative to the index file, optionally ``"sandbox"`` (a provider name; default
``bubblewrap``). A suite can point ``data_files`` at its own index of Terminal-Bench 2 task
folders.

Each episode starts a sandbox from the task's ``environment/`` (the cached Debian root
filesystem under bubblewrap, the files in ``/app``, no network), offers the model one tool,
``bash``, that runs in it, and afterwards copies ``tests/`` in and runs ``tests/test.sh``: the
sample is correct when it passes. A missing bwrap or root filesystem is a usage error before
any sample, naming ``make rootfs``. See docs/terminal.md.
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
import threading
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, HarnessError, ToolContext, ToolError, tool
from pytest_jeval.benchmarks._terminal.tasks import SETUP, TerminalTask, load_task
from pytest_jeval.sandbox.shell.providers import SANDBOXES, ExecOutcome, ProviderUnavailable, Sandbox, get_provider
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.dataset import DatasetLoadError

SYSTEM_PROMPT = (
    "You are an agent working in a Linux terminal (Debian, bash, no network). The task's files are in "
    "/app, the working directory. Use the bash tool to inspect and change them; each call starts again "
    "in /app, and files you write in /app or /tmp stay for later calls (background processes do not). "
    "When the task is done, reply with a short summary and no tool call."
)
REWARD_FILE = "/logs/verifier/reward.txt"
MAX_COMMAND_CHARS = 100_000
SETUP_TIMEOUT = 120.0


@functools.cache
def _checked_provider(name: str) -> None:
    """Check a provider once per process (cached when it works)."""
    get_provider(name).check()


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task folder; the sandbox it needs is checked here, before any sample runs."""
    if ctx.data_dir is None:
        raise ValueError("terminal_lite rows name task folders relative to the index file")
    path = (ctx.data_dir / str(row["path"])).resolve()
    task = load_task(path)
    sandbox = str(ctx.sandbox or row.get("sandbox") or "bubblewrap")  # the suite's key wins over the index
    provider = get_provider(sandbox)
    if task.needs_docker and provider.name != "docker":
        raise ValueError(f"task {task.id} has environment/Dockerfile, which only sandbox = \"docker\" can build")
    try:
        _checked_provider(sandbox)
    except ProviderUnavailable as exc:
        raise DatasetLoadError(f"terminal_lite cannot run here: {exc}") from None
    return Sample(
        id=task.id,
        input=task.instruction,
        target="tests/test.sh passes",
        subject=task.category or None,
        metadata={"task_dir": str(path), "sandbox": sandbox, "difficulty": task.difficulty,
                  "tags": list(task.tags)},
    )


def prompt(sample: Sample) -> list[dict[str, str]]:
    """The system prompt and the task's instruction."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": sample.input}]


@dataclasses.dataclass
class TerminalEnv:
    """One episode's task and its running sandbox (``episode.state``)."""

    task: TerminalTask
    sandbox: Sandbox
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def check(self) -> tuple[bool, ExecOutcome, float | None]:
        """Copy ``tests/`` in and run ``bash /tests/test.sh`` in /app: ``(passed, its outcome, the reward file's
        number or None)``; see :func:`verdict`."""
        with self.lock:
            self.sandbox.copy_in(self.task.tests, "/tests")
            outcome = self.sandbox.exec("mkdir -p /logs/verifier && bash /tests/test.sh",
                                        timeout=self.task.verifier_timeout)
            text = self.sandbox.exec(f"cat {shlex.quote(REWARD_FILE)} 2>/dev/null || true", timeout=10).stdout.strip()
        reward: float | None = None
        if text:
            try:
                reward = float(text)
            except ValueError:
                reward = 0.0  # a reward file that is not a number is a failed check
        return verdict(outcome.returncode, outcome.timed_out, reward), outcome, reward


def verdict(exit_status: int, timed_out: bool, reward: float | None) -> bool:
    """The checker's verdict: never after a timeout; a reward file (Terminal-Bench 2) passes at >= 1;
    without one, exit status 0 passes."""
    if timed_out:
        return False
    if reward is not None:
        return reward >= 1.0
    return exit_status == 0


def environment(sample: Sample, workspace: Path) -> TerminalEnv:
    """Start the task's sandbox and run its setup script (a failing setup is a harness error)."""
    task = load_task(Path(sample.metadata["task_dir"]))
    provider = get_provider(str(sample.metadata.get("sandbox", "bubblewrap")))
    env_dir = task.environment
    sandbox = provider.start(env_dir)
    try:
        setup = task.setup_script
        if setup is not None:
            sandbox.exec(f"rm -f {SETUP}", timeout=10)
            done = sandbox.exec("bash -s", timeout=SETUP_TIMEOUT, stdin=setup)
            if done.returncode != 0 or done.timed_out:
                raise HarnessError(f"task {task.id}: environment/{SETUP} failed with exit status "
                                   f"{done.returncode}: {done.stderr[-2000:]}")
    except BaseException:
        sandbox.stop()
        raise
    return TerminalEnv(task, sandbox)


def format_outcome(outcome: ExecOutcome, timeout: float) -> str:
    """What the model sees of one command."""
    head = f"timed out after {timeout:g}s; the command and its processes were killed" if outcome.timed_out \
        else f"exit status: {outcome.returncode}"
    parts = [head]
    for label, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        parts.append(f"{label}:\n{text}" if text else f"{label}: (empty)")
    return "\n".join(parts)


@tool(name="bash")
def bash(command: str, ctx: ToolContext) -> str:
    """Run a bash command in the task's Linux sandbox (working directory /app, no network) and return its
    exit status, stdout and stderr. Files in /app and /tmp stay between calls.

    Args:
        command: The command line, run with bash -c in /app.
    """
    if "\x00" in command:
        raise ToolError("command contains a NUL byte")
    if len(command) > MAX_COMMAND_CHARS:
        raise ToolError(f"command is longer than {MAX_COMMAND_CHARS} characters")
    env = ctx.state
    if not isinstance(env, TerminalEnv):
        raise HarnessError("the terminal sandbox is not running")
    with env.lock:
        try:
            outcome = env.sandbox.exec(command, timeout=ctx.timeout)
        except (OSError, RuntimeError) as exc:
            raise HarnessError(f"the terminal sandbox cannot run: {exc}") from exc
    if outcome.timed_out:
        raise ToolError(format_outcome(outcome, ctx.timeout))
    return format_outcome(outcome, ctx.timeout)


NOT_RESCORED = "not rescored: the record holds no checker outcome (test_exit_status)"


def rescore_record(record: dict[str, Any], sample: Sample) -> Score:
    """``jeval rescore`` (scorer ``terminal_tests``): the verdict again from the checker's stored outcome
    (exit status, timeout, reward); the sandbox itself cannot be rebuilt from a record. A record without
    one keeps its stored verdict, with ``rescore_note`` saying why."""
    meta = record.get("scoring_metadata") or {}
    status = meta.get("test_exit_status")
    if not isinstance(status, int):
        kept = stored_score(record)
        return dataclasses.replace(kept, metadata={**kept.metadata, "rescore_note": NOT_RESCORED})
    reward = meta.get("test_reward")
    passed = verdict(status, bool(meta.get("test_timed_out")), float(reward) if reward is not None else None)
    return Score(correct=passed, value=1.0 if passed else 0.0, extracted=status, expected=0, metadata=dict(meta))


BENCHMARK = Benchmark(
    name="terminal_lite",
    category="agentic",
    description="Shell tasks in the Terminal-Bench 2 layout, in a bubblewrap sandbox over a Debian rootfs",
    bundled_files=("data/tasks.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="terminal_tests",
    scoring="the task's tests/test.sh in the sandbox after the episode (exit 0, or reward 1)",
    sample_count=14,
    backends=("agent",),
    sandboxes=tuple(SANDBOXES.names()),
    agent=AgentSpec(tools=[bash], environment=environment),
    aliases=("terminalbench", "terminalbench-native", "terminalbench-v2.1"),
)


def test_terminal_lite(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when the task's tests pass in the sandbox after the episode."""
    env = episode.state
    if not isinstance(env, TerminalEnv):
        raise HarnessError("the episode has no terminal sandbox")
    try:
        passed, outcome, reward = env.check()
    finally:
        env.sandbox.stop()
    tail = (outcome.stdout[-1500:] + ("\n" + outcome.stderr[-1500:] if outcome.stderr else "")).strip()
    meta: dict[str, Any] = {"test_exit_status": outcome.returncode, "test_timed_out": outcome.timed_out,
                            "test_reward": reward, "test_seconds": round(outcome.seconds, 3), "test_output": tail}
    if not passed:
        meta["reason"] = checker_reason(outcome.returncode, outcome.timed_out, tail)
    score(Score(correct=passed, value=1.0 if passed else 0.0, extracted=outcome.returncode, expected=0,
                metadata=meta))


def checker_reason(status: int, timed_out: bool, output: str) -> str:
    """Why the task's tests failed, in a line: the timeout, else the last lines the checker printed."""
    if timed_out:
        return "the task's tests timed out"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = " | ".join(lines[-3:])
    return f"tests/test.sh exited {status}" + (f": {said}" if said else " (printed nothing)")


@register_scorer("terminal_tests", needs_sample=True)
def record_terminal_tests(record: dict[str, Any], sample: Sample) -> Score:
    """terminal_lite: the verdict again from the checker's stored exit status, timeout and reward."""

    return rescore_record(record, sample)
