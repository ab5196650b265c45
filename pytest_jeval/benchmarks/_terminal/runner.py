"""One Terminal-Bench episode: the task's environment, the ``bash`` tool, the oracle, the verdict, the record.

Shared by ``terminalbench-v2.1`` (Harbor layout), ``terminalbench`` (Terminal-Bench 1 layout) and
``terminalbench-native`` (the task's own Dockerfile under a container engine). The benchmark
modules only choose the layout and the sandbox.

A sample is one task folder. :func:`to_sample` reads and checks it before any request (a
malformed folder is a usage error); a task that cannot run on this machine (it needs a GPU or
several containers, its base image is not supported, its Dockerfile does not parse, its
verifier downloads something) stays a sample, and its episode ends before any model call with
that reason (``stop_reason = "not_run"``): it is recorded **unscored**, never as a wrong answer,
and counted in the summary. See docs/terminal.md.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval import LoadContext, Sample, Score
from pytest_jeval.agents import Episode, HarnessError, NotRunnable, ToolContext, ToolError, tool
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks._terminal.formats import Layout, TaskError, TaskSpec, find_tasks, load_task
from pytest_jeval.benchmarks._terminal.kit import Kit, build_kit, requirements_of
from pytest_jeval.benchmarks._terminal.verify import VerifierOutcome, snapshot_home, verifier_environment, verify
from pytest_jeval.sandbox.quota import cgroup_support
from pytest_jeval.sandbox.shell.dockerfile import DockerfileError
from pytest_jeval.sandbox.shell.environments import (
    BuiltEnvironment,
    EnvironmentRefused,
    build_environment,
    plan_environment,
)
from pytest_jeval.sandbox.shell.image_sandbox import ImageSandbox, check_image_sandboxes
from pytest_jeval.sandbox.shell.images import BuildError
from pytest_jeval.sandbox.shell.providers import ExecOutcome, ProviderUnavailable
from pytest_jeval.suite.dataset import DatasetLoadError

__all__ = [
    "NO_EXTERNAL_NATIVE",
    "SYSTEM_PROMPT",
    "TaskEnv",
    "TerminalBenchOptions",
    "bash",
    "environment",
    "external_host",
    "oracle_steps",
    "read_rows",
    "summarize",
    "test_task",
    "to_sample",
]

SYSTEM_PROMPT = (
    "You are an agent working in a Linux terminal (a Debian system; you are its user, usually root). Complete the "
    "task below with the bash tool: each call runs one command line with bash -c in the task's working directory and "
    "returns its exit status and output. Files you change anywhere stay for later calls; background processes end "
    "with the call that started them. There is no network unless the task says otherwise. When the task is done, "
    "reply with a short summary and no tool call."
)
NO_EXTERNAL_NATIVE = ("an external agent CLI runs inside the task's environment with its program and the recording "
                      "proxy's socket bound in, which is done for the image sandboxes only; a container engine's "
                      "container is not given them here. Run terminalbench-v2.1 (the same tasks without Docker), the "
                      "built-in loop (agent = \"orchestrator\") or a named agent")
"""Why ``backend = "command"``/``"hermes"``/``"openclaw"`` is refused for ``terminalbench-native``."""
TASK_MEMORY_MB = int(os.environ.get("JEVAL_IMAGE_MEMORY_MB", "8192"))
"""Memory of a task sandbox's processes together when its ``task.toml`` names no ``memory_mb``
(``JEVAL_IMAGE_MEMORY_MB``; where cgroups are usable)."""
TASK_PROCESSES = int(os.environ.get("JEVAL_IMAGE_PROCESSES", "4096"))
"""Processes and threads of a task sandbox together (``JEVAL_IMAGE_PROCESSES``; where cgroups are usable)."""
MAX_COMMAND_CHARS = 100_000
ORACLE_CHUNK = 90_000
"""Characters of solution files one oracle step writes (the bash tool takes 100,000)."""
COMMAND_TIMEOUT = 900.0
"""The bash tool's own timeout (the episode's remaining time bounds it too)."""
_URL_FETCH = re.compile(r"\b(curl|wget|git\s+clone|git\s+fetch|git\s+pull|pip3?\s+download)\b[^\n]*?"
                        r"((?:https?|git|ssh)://[^\s'\"|;)]+)")
_UV_INSTALLER = re.compile(r"astral\.sh/uv/(?:[0-9.]+/)?install\.sh")
_LOCAL = re.compile(r"://(?:localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(?:[:/]|$)")


class TerminalBenchOptions(BaseModel):
    """``[benchmarks.options]`` of the Terminal-Bench benchmarks."""

    model_config = ConfigDict(extra="forbid")

    allow_internet: bool = False
    """Give the agent phase the network when the task allows it (``[environment] allow_internet``, Harbor's
    default true). Off by default: the agent works offline, and the record says so."""
    command_timeout: float = Field(COMMAND_TIMEOUT, gt=0)
    """Seconds one ``bash`` call may take (the episode's remaining time bounds it too)."""


# -------------------------------------------------------------------------------------------- loading

@functools.cache
def _sandbox_problem(kind: str) -> str | None:
    try:
        if kind == "docker":
            from pytest_jeval.benchmarks._terminal.native import check_engine

            check_engine()
        else:
            check_image_sandboxes()
    except ProviderUnavailable as exc:
        return str(exc)
    return None


def read_rows(layout: Layout, benchmark: str) -> Callable[[Sequence[Path], LoadContext], list[dict[str, Any]]]:
    """A ``read_rows`` listing the task folders of ``data_dir`` (or of the folders ``data_files`` name)."""

    def rows(files: Sequence[Path], ctx: LoadContext) -> list[dict[str, Any]]:
        folders = [ctx.local_dir] if ctx.local_dir is not None else [Path(f) for f in files]
        if not folders:
            raise DatasetLoadError(f"{benchmark} reads task folders: set data_dir = \"...\" to a folder of "
                                   f"{'Harbor (task.toml)' if layout == 'harbor' else 'Terminal-Bench 1 (task.yaml)'}"
                                   " task folders, e.g. a checkout of the task repository")
        found: list[dict[str, Any]] = []
        for folder in folders:
            if not folder.is_dir():
                raise DatasetLoadError(f"{benchmark}: {folder} is not a folder of task folders")
            found += [{"path": str(p)} for p in find_tasks(folder, layout)]
        if not found:
            marker = "task.toml" if layout == "harbor" else "task.yaml"
            raise DatasetLoadError(f"{benchmark}: no task folder (with {marker}) in {', '.join(map(str, folders))}")
        return found

    return rows


def static_network_need(task: TaskSpec) -> str | None:
    """A URL the verifier's scripts fetch (other than uv's installer and localhost), as a reason; else None."""
    for script in task.test_scripts:
        for number, line in enumerate(script.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for match in _URL_FETCH.finditer(line):
                url = match.group(2)
                if not _UV_INSTALLER.search(url) and not _LOCAL.search(url):
                    rel = script.relative_to(task.path)
                    return (f"the verifier fetches {url} ({rel}:{number}: {match.group(1)}); there is no network "
                            "during verification here")
    return None


def to_sample(layout: Layout, sandbox: str) -> Callable[[dict[str, Any], int, LoadContext], Sample]:
    """The ``to_sample`` of a Terminal-Bench benchmark of ``layout`` run in ``sandbox`` (``image`` or ``docker``)."""

    def make(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
        kind = "docker" if ctx.sandbox == "docker" else sandbox
        problem = _sandbox_problem(kind)
        if problem is not None:
            raise DatasetLoadError(f"{ctx.benchmark} cannot run here: {problem}")
        try:
            task = load_task(Path(row["path"]))
        except TaskError as exc:
            raise ValueError(str(exc)) from None
        if task.layout != layout:
            raise ValueError(f"{ctx.benchmark} reads the {layout} layout; {task.path} is a {task.layout} task")
        reason, why = task.not_runnable, task.not_runnable_kind
        if reason is None:
            reason, why = static_network_need(task), "verifier-network"
        if reason is None and task.dockerfile is not None and kind == "image":
            try:
                plan_environment(task.dockerfile, task.context)
            except DockerfileError as exc:
                reason, why = str(exc), "dockerfile-syntax"
            except EnvironmentRefused as exc:
                reason, why = str(exc), exc.kind
        options = ctx.options.model_dump() if isinstance(ctx.options, BaseModel) else {}
        return Sample(id=task.id, input=task.instruction, target="the task's tests pass", subject=task.category or None,
                      metadata={"task_dir": str(task.path), "layout": task.layout, "sandbox": kind,
                                "not_runnable": reason, "not_runnable_kind": why if reason else None,
                                "difficulty": task.difficulty, "tags": list(task.tags),
                                "options": options})

    return make


def prompt(sample: Sample) -> list[dict[str, str]]:
    """The system prompt and the task's instruction."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": sample.input}]


# -------------------------------------------------------------------------------------------- the episode

@dataclasses.dataclass
class TaskEnv:
    """One episode's task, its built environment, its verifier kit and its running sandbox (``episode.state``)."""

    task: TaskSpec
    sandbox: Any
    """An :class:`~pytest_jeval.sandbox.shell.image_sandbox.ImageSandbox` (or a docker sandbox)."""
    built: BuiltEnvironment | None
    kit: Kit | None
    options: TerminalBenchOptions
    facts: dict[str, Any]
    """What the record keeps about the environment (build, start-up, network, limits, deviations)."""
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    stopped: bool = False
    pristine_home: Path | None = None
    """The image's home as built, copied before the agent phase; bound over the agent's for the verifier."""

    def stop(self) -> None:
        """End the sandbox and delete its files."""
        with self.lock:
            if not self.stopped:
                self.stopped = True
                self.sandbox.stop()


def _options(sample: Sample) -> TerminalBenchOptions:
    return TerminalBenchOptions(**(sample.metadata.get("options") or {}))


def _home(built: BuiltEnvironment) -> str:
    if built.uid == 0:
        return "/root"
    for root in (built.layer, built.base_root):
        passwd = root / "etc" / "passwd"
        if passwd.is_file():
            for line in passwd.read_text(errors="replace").splitlines():
                fields = line.split(":")
                if len(fields) > 5 and fields[2] == str(built.uid):
                    return fields[5]
            break
    return "/"


def environment() -> Callable[[Sample, Path], TaskEnv]:
    """The ``AgentSpec.environment`` of the Terminal-Bench benchmarks (image sandboxes, or a container engine)."""

    def start(sample: Sample, workspace: Path) -> TaskEnv:
        reason = sample.metadata.get("not_runnable")
        if reason:
            raise NotRunnable(str(reason))
        task = load_task(Path(sample.metadata["task_dir"]))
        opts = _options(sample)
        if sample.metadata.get("sandbox") == "docker":
            from pytest_jeval.benchmarks._terminal.native import start_native

            return start_native(task, opts)
        assert task.dockerfile is not None
        try:
            built = build_environment(plan_environment(task.dockerfile, task.context), timeout=task.build_timeout)
        except (BuildError, DockerfileError, EnvironmentRefused) as exc:
            raise NotRunnable(f"the environment could not be built: {exc}") from None
        scripts = [p.read_text(encoding="utf-8", errors="replace") for p in task.test_scripts]
        try:
            kit = build_kit(requirements_of(scripts))
        except BuildError as exc:
            raise NotRunnable(f"the verifier kit could not be built: {exc}") from None
        network = bool(opts.allow_internet and task.allow_internet)
        cpus = _cpus(task.cpus)
        start_at = time.monotonic()
        env = dict(built.env)
        env.setdefault("HOME", _home(built))
        sandbox = ImageSandbox(built.lowers, env=env, workdir=built.workdir, uid=built.uid, gid=built.gid,
                               network=network, cpus=cpus, file_size_mb=task.storage_mb or 10240,
                               memory_mb=task.memory_mb or TASK_MEMORY_MB, max_processes=TASK_PROCESSES)
        try:
            first = sandbox.exec("true", timeout=60)
            if first.returncode != 0:
                raise HarnessError(f"the task's sandbox does not start: {first.stderr.strip()[-500:]}")
            pristine = snapshot_home(sandbox, env["HOME"], built.workdir)
        except RuntimeError as exc:
            sandbox.stop()
            raise HarnessError(str(exc)) from None
        except BaseException:
            sandbox.stop()
            raise
        facts = {
            "from": task.dockerfile and built.plan.base.reference, "built_as": built.plan.base.name,
            "debian_release": built.plan.base.release, "python_requested": built.plan.base.python_requested,
            "python_provided": built.plan.base.python, "environment_key": built.plan.key,
            "build_seconds": built.build_seconds, "first_build_seconds": built.first_build_seconds,
            "environment_cached": built.cached, "layer_bytes": built.layer_bytes, "base_bytes": built.base_bytes,
            "kit_requirements": list(kit.requirements), "kit_python": kit.python,
            "kit_build_seconds": kit.build_seconds,
            "startup_seconds": round(time.monotonic() - start_at, 3), "agent_network": network,
            "limits": _limits(task, cpus, sandbox),
            "deviations": deviations(task, built, kit, network, opts) + verifier_deviations(
                env["HOME"], pristine is not None, verifier_environment(dict(built.env), {}, env["HOME"])[1])}
        return TaskEnv(task, sandbox, built, kit, opts, facts, pristine_home=pristine)

    return start


def external_host(state: Any) -> Any:
    """Where an external agent CLI runs: inside the task's image sandbox
    (:class:`~pytest_jeval.sandbox.shell.agent_host.ImageAgentHost`)."""
    from pytest_jeval.sandbox.shell.agent_host import agent_host

    host = agent_host(state.sandbox) if isinstance(state, TaskEnv) else None
    if host is None:
        raise ValueError(NO_EXTERNAL_NATIVE)
    return host


def _cpus(wanted: int | None) -> tuple[int, ...] | None:
    import os

    if not wanted:
        return None
    have = sorted(os.sched_getaffinity(0))
    if wanted >= len(have):
        return None
    with _cpu_lock:
        global _cpu_next
        start, _cpu_next = _cpu_next, _cpu_next + wanted
    return tuple(have[(start + i) % len(have)] for i in range(wanted))


_cpu_lock = threading.Lock()
_cpu_next = 0


def _limits(task: TaskSpec, cpus: tuple[int, ...] | None, sandbox: ImageSandbox | None = None) -> dict[str, Any]:
    grouped = sandbox is not None and sandbox.cgroup is not None
    memory = task.memory_mb or TASK_MEMORY_MB
    applied = {"cpus": task.cpus, "cpus_applied": f"CPU affinity {list(cpus)}" if cpus else
               ("not needed: the machine has no more CPUs" if task.cpus else None),
               "memory_mb": task.memory_mb,
               "memory_applied": (f"a cgroup: {memory} MiB and {TASK_PROCESSES} processes for all the sandbox's "
                                  "processes together" if grouped else "not enforced (cgroups are not usable here)"),
               "storage_mb": task.storage_mb, "storage_applied": "as the largest file one process may write"
               if task.storage_mb else None}
    return {k: v for k, v in applied.items() if v is not None}


def deviations(task: TaskSpec, built: BuiltEnvironment | None, kit: Kit | None, network: bool,
               opts: TerminalBenchOptions) -> list[str]:
    """How this run differs from upstream's Docker run, one sentence each (kept in every record)."""
    out: list[str] = []
    if built is not None:
        base = built.plan.base
        out.append(f"environment built from {task.dockerfile.name if task.dockerfile else 'the Dockerfile'} without "
                   f"Docker: FROM {base.reference} built as Debian {base.release} ({base.flavor}) with mmdebstrap, RUN "
                   "steps under bubblewrap in a user namespace with the host's CA certificates")
        out.extend(built.plan.notes)
    if kit is not None:
        out.append(f"verifier bootstrap offline: uv, uvx, pytest and python are a read-only kit (Python {kit.python} "
                   f"from Debian, with {', '.join(kit.requirements)} installed at build time); curl, wget, apt-get "
                   "and pip are stand-ins; no network during verification")
    if task.allow_internet and not network:
        out.append("no network in the agent phase (the task allows the internet; set [benchmarks.options] "
                   "allow_internet = true to give it)")
    out.append("the agent runs commands with a bash tool (one bash -c per call), not in a tmux session")
    if task.memory_mb and not cgroup_support()[0]:
        out.append(f"memory_mb = {task.memory_mb} is recorded, not enforced (cgroups are not usable here)")
    if task.agent_timeout:
        out.append(f"the task's agent timeout ({task.agent_timeout:g} s) is recorded; [run] episode_timeout bounds "
                   "the episode")
    return out


DISAGREEMENT = ("a reward file saying 1 or more while the test script exited non-zero scores 0 (Harbor reads the "
                "reward file alone)")


def verifier_deviations(home: str, fresh_home: bool, dropped: Sequence[str]) -> list[str]:
    """How the verifier's run differs from Harbor's (it verifies in the agent's container as it was left)."""
    out = [("the verifier runs with a clean environment: PYTHONNOUSERSITE=1, git reading no global or system "
            "configuration (hooks, fsmonitor, pager, editor and gpg programs off), " +
            (f"HOME ({home}) a fresh copy of the image's home as built, not the agent's" if fresh_home else
             f"HOME ({home}) kept as the agent left it (it is / or overlaps the working directory)")),
           DISAGREEMENT]
    if dropped:
        out.append(f"the image's ENV {', '.join(dropped)} is not given to the verifier")
    return out


def format_outcome(outcome: ExecOutcome, timeout: float) -> str:
    """What the model sees of one command."""
    head = f"timed out after {timeout:g}s; the command and its processes were killed" if outcome.timed_out \
        else f"exit status: {outcome.returncode}"
    parts = [head]
    for label, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        parts.append(f"{label}:\n{text}" if text else f"{label}: (empty)")
    return "\n".join(parts)


@tool(name="bash", timeout=COMMAND_TIMEOUT)
def bash(command: str, ctx: ToolContext) -> str:
    """Run a bash command line in the task's Linux environment (in its working directory) and return its exit
    status, stdout and stderr. Changes to files stay between calls; background processes do not.

    Args:
        command: The command line, run with bash -c.
    """
    if "\x00" in command:
        raise ToolError("command contains a NUL byte")
    if len(command) > MAX_COMMAND_CHARS:
        raise ToolError(f"command is longer than {MAX_COMMAND_CHARS} characters")
    env = ctx.state
    if not isinstance(env, TaskEnv):
        raise HarnessError("the task's sandbox is not running")
    timeout = min(ctx.timeout, env.options.command_timeout)
    with env.lock:
        if env.stopped:
            raise HarnessError("the task's sandbox was stopped")
        try:
            outcome = env.sandbox.exec(command, timeout=timeout)
        except (OSError, RuntimeError) as exc:
            raise HarnessError(f"the task's sandbox cannot run: {exc}") from exc
    if outcome.timed_out:
        raise ToolError(format_outcome(outcome, timeout))
    return format_outcome(outcome, timeout)


# -------------------------------------------------------------------------------------------- the oracle

def _heredoc_write(path: str, text: str) -> str:
    tag = "JEVAL_EOF"
    while tag in text:
        tag += "_"
    end = "" if text.endswith("\n") else "\n"
    return f"mkdir -p \"$(dirname '{path}')\"\ncat > '{path}' <<'{tag}'\n{text}{end}{tag}"


def oracle_steps(sample: Sample) -> list[OracleStep]:
    """The task's reference solution as ``bash`` calls that show what runs: Harbor's ``solution/`` written to
    ``/solution`` then ``bash /solution/solve.sh`` (with ``[solution] env``); Terminal-Bench 1's ``solution.sh``
    written to ``/oracle`` and run, or ``solution.yaml``'s commands one by one."""
    task = load_task(Path(sample.metadata["task_dir"]))
    steps: list[OracleStep] = []
    if task.solution_commands:
        return [*(ToolStep("bash", {"command": c}) for c in task.solution_commands), SayStep("done")]
    if task.solution_script is None:
        return [SayStep("(this task has no reference solution)")]
    if task.layout == "harbor" and task.solution_dir is not None:
        files = [p for p in sorted(task.solution_dir.rglob("*")) if p.is_file()]
        root, run = "/solution", "/solution/solve.sh"
    else:
        files, root, run = [task.solution_script], "/oracle", f"/oracle/{task.solution_script.name}"
    chunk: list[str] = []
    size = 0
    for path in files:
        rel = path.relative_to(task.solution_dir if task.layout == "harbor" and task.solution_dir else path.parent)
        target = f"{root}/{rel.as_posix()}"
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
            write = _heredoc_write(target, text) if "\x00" not in text else None
        except UnicodeDecodeError:
            write = None
        if write is None:
            import base64

            write = f"mkdir -p \"$(dirname '{target}')\"\nbase64 -d > '{target}' <<'JEVAL_B64'\n" \
                    f"{base64.encodebytes(data).decode()}JEVAL_B64"
        if size + len(write) > ORACLE_CHUNK and chunk:
            steps.append(ToolStep("bash", {"command": "\n".join(chunk)}))
            chunk, size = [], 0
        chunk.append(write)
        size += len(write)
    env = " ".join(f"{k}={_quote(v)}" for k, v in task.solution_env)
    chunk.append(f"{'env ' + env + ' ' if env else ''}bash {run}")
    steps.append(ToolStep("bash", {"command": "\n".join(chunk)}))
    steps.append(SayStep("done"))
    return steps


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


# -------------------------------------------------------------------------------------------- the verdict

def test_task(sample: Sample, episode: Episode, score: Any) -> None:
    """Verify the episode's environment and record the verdict (unscored when the task could not run here)."""
    if episode.stop_reason == "not_run":
        reason = episode.error or "the task cannot run here"
        kind = sample.metadata.get("not_runnable_kind") or next(
            (k for prefix, k in _RUNTIME_KINDS if reason.startswith(prefix)), "other")
        score(Score.unscorable(reason, expected=1.0, not_runnable=True, unscored_kind=kind))
        return
    env = episode.state
    if not isinstance(env, TaskEnv):
        raise HarnessError("the episode has no Terminal-Bench environment")
    try:
        with env.lock:
            env.facts["episode_bytes"] = env.sandbox.upper_bytes() if hasattr(env.sandbox, "upper_bytes") else None
            outcome = _verify(env)
    finally:
        env.stop()
    meta = {**env.facts, "reward": outcome.reward, "reward_source": outcome.source, "rewards": outcome.rewards,
            "test_exit_status": outcome.exit_status, "test_timed_out": outcome.timed_out,
            "test_seconds": outcome.seconds, "test_output": outcome.output, "tests": outcome.tests,
            "verifier_network": list(outcome.network), "verifier_problem": outcome.problem}
    if outcome.unscored_reason is not None:
        score(Score.unscorable(outcome.unscored_reason, expected=1.0, unscored_kind="verifier-network", **meta))
        return
    assert outcome.reward is not None
    score(Score(correct=outcome.passed, value=outcome.reward, extracted=outcome.reward, expected=1.0, metadata=meta))


_RUNTIME_KINDS = (("the environment could not be built", "build-failed"), ("the verifier kit", "kit-failed"),
                  ("docker build failed", "build-failed"))


def _verify(env: TaskEnv) -> VerifierOutcome:
    if env.built is None or env.kit is None:
        from pytest_jeval.benchmarks._terminal.native import verify_native

        return verify_native(env)
    return verify(env.sandbox, env.task, env.kit, image_env=dict(env.built.env), home=env.sandbox.env["HOME"],
                  pristine_home=env.pristine_home)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json`` extras: unscored tasks by kind (``gpu``, ``verifier-network``, ``unsupported-base``,
    ``dockerfile-syntax``, ``build-failed``, ...), build and start-up figures, and what a do-nothing agent
    passes (from the records of a ``nop`` run)."""
    kinds: Counter[str] = Counter()
    builds, startups, layers = [], [], []
    for record in records:
        meta = record.get("scoring_metadata") or {}
        if record.get("is_correct") is None and meta.get("unscored_reason"):
            kinds[str(meta.get("unscored_kind") or "other")] += 1
        if isinstance(meta.get("build_seconds"), (int, float)) and meta.get("build_seconds"):
            builds.append(float(meta["build_seconds"]))
        if isinstance(meta.get("startup_seconds"), (int, float)):
            startups.append(float(meta["startup_seconds"]))
        if isinstance(meta.get("layer_bytes"), int):
            layers.append(meta["layer_bytes"])
    out: dict[str, Any] = {"unscored_by_kind": dict(kinds.most_common()),
                           "not_runnable": sum(1 for r in records if (r.get("scoring_metadata") or {}).get(
                               "not_runnable"))}
    if builds:
        out["environments_built"] = len(builds)
        out["build_seconds_total"] = round(sum(builds), 1)
    if startups:
        out["startup_seconds_median"] = sorted(startups)[len(startups) // 2]
    if layers:
        out["layer_mib_mean"] = round(sum(layers) / len(layers) / 2**20, 1)
    agents = {(r.get("agent") or {}).get("name") for r in records}
    if agents == {"nop"}:
        out["nop_passes"] = sorted(str(r.get("id")) for r in records if r.get("is_correct") is True)
    return out
