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
any sample, naming ``make rootfs``. External agent CLIs (``backend = "command"``, ``"hermes"``,
``"openclaw"``) run inside the task's sandbox (:func:`external_host`), their shell on its ``/app``.
See docs/terminal.md.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, HarnessError, ToolContext, ToolError, tool
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks._terminal.tasks import SETUP, TerminalTask, load_task
from pytest_jeval.sandbox.shell.providers import SANDBOXES, ExecOutcome, ProviderUnavailable, Sandbox, get_provider
from pytest_jeval.sandbox.shell.verifier import Verdict, decide, verify
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.dataset import DatasetLoadError

SYSTEM_PROMPT = (
    "You are an agent working in a Linux terminal (Debian, bash, no network). The task's files are in "
    "/app, the working directory. Use the bash tool to inspect and change them; each call starts again "
    "in /app, and files you write in /app or /tmp stay for later calls (background processes do not). "
    "When the task is done, reply with a short summary and no tool call."
)
MAX_COMMAND_CHARS = 100_000
SETUP_TIMEOUT = 120.0


@functools.cache
def _checked_provider(name: str) -> None:
    """Check a provider once per process (cached when it works)."""
    get_provider(name).check()


def read_rows(files: Sequence[Path], ctx: LoadContext) -> list[dict[str, Any]]:
    """The rows of the index files (``data_files``, else the bundled ``data/tasks.jsonl``), or with ``data_dir``
    one row per task folder in it (absolute paths)."""
    if ctx.local_dir is not None:
        folders = sorted(p for p in ctx.local_dir.iterdir() if (p / "task.toml").is_file())
        if (ctx.local_dir / "task.toml").is_file():
            folders = [ctx.local_dir]
        if not folders:
            raise DatasetLoadError(f"terminal_lite: no task folder (with task.toml) in {ctx.local_dir}")
        return [{"path": str(p.resolve())} for p in folders]
    rows: list[dict[str, Any]] = []
    for file in files:
        for number, line in enumerate(Path(file).read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise DatasetLoadError(f"{file}:{number}: not a JSON object") from None
    return rows


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task folder; the sandbox it needs is checked here, before any sample runs."""
    given = Path(str(row["path"]))
    if not given.is_absolute() and ctx.data_dir is None:
        raise ValueError("terminal_lite rows name task folders relative to the index file")
    path = (given if given.is_absolute() else Path(str(ctx.data_dir)) / given).resolve()
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

    def check(self) -> Verdict:
        """Copy ``tests/`` in and run ``bash /tests/test.sh`` in /app as the checker (nothing of the agent's
        runs with its authority), and decide (:mod:`pytest_jeval.sandbox.shell.verifier`)."""
        with self.lock:
            return verify(self.sandbox, self.task.tests, timeout=self.task.verifier_timeout)


def verdict(exit_status: int, timed_out: bool, reward: float | None) -> bool:
    """The checker's verdict: never after a timeout; exit status 0 and, with a reward file (Terminal-Bench 2),
    a reward of 1 or more (a reward that disagrees with the exit status fails)."""
    return decide(exit_status, timed_out, None if reward is None else repr(float(reward)))[0]


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


def external_host(state: Any) -> Any:
    """Where an external agent CLI runs: inside the task's bubblewrap sandbox
    (:class:`~pytest_jeval.sandbox.shell.agent_host.BubblewrapAgentHost`), as the ``bash`` tool's commands do."""
    from pytest_jeval.sandbox.shell.agent_host import agent_host

    host = agent_host(state.sandbox) if isinstance(state, TerminalEnv) else None
    if host is None:
        raise ValueError("an external agent runs inside the task's bubblewrap sandbox; this task's sandbox (docker) "
                         "cannot hold it")
    return host


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


def oracle_steps(sample: Sample) -> list[OracleStep]:
    """The task's ``solution/solve.sh`` as one ``bash`` call that shows it: written to /tmp/solution and run in
    /app (the oracle validates the task: it must pass, and ``nop`` must not)."""
    task = load_task(Path(sample.metadata["task_dir"]))
    if not task.solution.is_file():
        return [SayStep("(this task has no solution/solve.sh)")]
    text = task.solution.read_text(encoding="utf-8")
    tag = "JEVAL_EOF"
    while tag in text:
        tag += "_"
    end = "" if text.endswith("\n") else "\n"
    command = f"mkdir -p /tmp/solution && cat > /tmp/solution/solve.sh <<'{tag}'\n{text}{end}{tag}\n" \
              "bash /tmp/solution/solve.sh"
    return [ToolStep("bash", {"command": command}), SayStep("done")]


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
    reward, text = meta.get("test_reward"), meta.get("test_reward_text")
    if text is None and reward is not None:
        text = repr(float(reward))
    passed, reason, _ = decide(status, bool(meta.get("test_timed_out")), text)
    meta = {**meta, "verdict_reason": reason}
    return Score(correct=passed, value=1.0 if passed else 0.0, extracted=status, expected=0, metadata=dict(meta))


BENCHMARK = Benchmark(
    name="terminal_lite",
    category="agentic",
    description="Shell tasks in the Terminal-Bench 2 layout, in a bubblewrap sandbox over a Debian rootfs",
    bundled_files=("data/tasks.jsonl",),
    read_rows=read_rows,
    data_dir="a folder of task folders in the Terminal-Bench 2 layout without a Dockerfile (task.toml, "
             "instruction.md, environment/, tests/test.sh, solution/solve.sh)",
    to_sample=to_sample,
    prompt=prompt,
    scorer="terminal_tests",
    scoring="the task's tests/test.sh in the sandbox after the episode, as a checker with nothing of the agent's "
            "(exit 0, and reward 1 where it writes one)",
    sample_count=14,
    backends=("agent",),
    sandboxes=tuple(SANDBOXES.names()),
    agent=AgentSpec(tools=[bash], environment=environment, oracle=oracle_steps, workspace_environment=True,
                    external_host=external_host),
)


def test_terminal_lite(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when the task's tests pass in the sandbox after the episode."""
    env = episode.state
    if not isinstance(env, TerminalEnv):
        raise HarnessError("the episode has no terminal sandbox")
    try:
        checked = env.check()
    finally:
        env.sandbox.stop()
    outcome, passed = checked.outcome, checked.passed
    tail = (outcome.stdout[-1500:] + ("\n" + outcome.stderr[-1500:] if outcome.stderr else "")).strip()
    meta: dict[str, Any] = {"test_exit_status": outcome.returncode, "test_timed_out": outcome.timed_out,
                            "test_reward": checked.reward, "test_reward_text": checked.reward_text,
                            "verdict_reason": checked.reason,
                            "test_seconds": round(outcome.seconds, 3), "test_output": tail}
    if not passed:
        meta["reason"] = checker_reason(checked.reason, tail)
    score(Score(correct=passed, value=1.0 if passed else 0.0, extracted=outcome.returncode, expected=0,
                metadata=meta))


def checker_reason(verdict: str, output: str) -> str:
    """Why the task's tests failed, in a line: the harness's verdict reason, then the last lines the checker
    printed."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = " | ".join(lines[-3:])
    return verdict + (f": {said}" if said else " (the checker printed nothing)")


@register_scorer("terminal_tests", needs_sample=True)
def record_terminal_tests(record: dict[str, Any], sample: Sample) -> Score:
    """terminal_lite: the verdict again from the checker's stored exit status, timeout and reward."""

    return rescore_record(record, sample)
