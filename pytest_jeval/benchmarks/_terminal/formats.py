"""Terminal-Bench task folders in their two upstream layouts, read into one :class:`TaskSpec`.

**Harbor** (Terminal-Bench 2.x, ``terminalbench-v2.1``)::

    task.toml               [metadata], [agent] timeout_sec, [verifier] timeout_sec/env,
                            [environment] build_timeout_sec/cpus/memory_mb/storage_mb/gpus/allow_internet/docker_image
    instruction.md          the agent's task
    environment/Dockerfile  the environment (the folder is the build context)
    tests/test.sh           the verifier, run as ``bash /tests/test.sh``; it writes /logs/verifier/reward.txt or .json
    solution/solve.sh       the reference solution (the oracle)

**Terminal-Bench 1** (``terminalbench``)::

    task.yaml               instruction, max_agent_timeout_sec (360), max_test_timeout_sec (60), parser_name, ...
    Dockerfile              the environment (the task folder is the build context)
    docker-compose.yaml     optional: one service (``client``); more services are refused
    run-tests.sh            the verifier, copied to /tests beside tests/ and run as ``bash /tests/run-tests.sh``
    tests/                  test_outputs.py and its files
    solution.sh             the reference solution (or solution.yaml: a list of commands)

:func:`load_task` reads either (:class:`TaskError` names the folder and what is wrong);
:attr:`TaskSpec.not_runnable` says why a well-formed task cannot run on this machine (it
is still a sample: it is recorded unscored with that reason).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Layout", "TaskError", "TaskSpec", "find_tasks", "layout_of", "load_task"]

Layout = Literal["harbor", "tb1"]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
TB1_AGENT_TIMEOUT = 360.0
TB1_TEST_TIMEOUT = 60.0
HARBOR_VERIFIER_TIMEOUT = 600.0
HARBOR_BUILD_TIMEOUT = 600.0


class TaskError(ValueError):
    """A task folder that cannot be read; the message names it and says what is wrong."""


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One Terminal-Bench task, whichever layout it came in."""

    id: str
    path: Path
    layout: Layout
    instruction: str
    dockerfile: Path | None
    context: Path | None
    tests_dir: Path
    """Copied to ``/tests`` after the agent phase."""
    test_script: str
    """The verifier's file name in ``/tests`` (``test.sh``; ``run-tests.sh`` for Terminal-Bench 1)."""
    extra_test_files: tuple[Path, ...] = ()
    """Files copied into ``/tests`` beside ``tests_dir``'s (Terminal-Bench 1's ``run-tests.sh``)."""
    solution_dir: Path | None = None
    """Copied to ``/solution`` for the oracle (Harbor)."""
    solution_script: Path | None = None
    solution_commands: tuple[str, ...] = ()
    """Terminal-Bench 1's ``solution.yaml``: the commands the oracle types, in order."""
    agent_timeout: float | None = None
    verifier_timeout: float = HARBOR_VERIFIER_TIMEOUT
    build_timeout: float = HARBOR_BUILD_TIMEOUT
    allow_internet: bool = False
    """The task allows the network in its environment (Harbor's ``allow_internet``, default true)."""
    cpus: int | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    verifier_env: tuple[tuple[str, str], ...] = ()
    solution_env: tuple[tuple[str, str], ...] = ()
    parser: str = "reward"
    """How the verdict is read: ``reward`` (Harbor's reward files) or ``pytest`` (Terminal-Bench 1)."""
    category: str = ""
    difficulty: str = ""
    tags: tuple[str, ...] = ()
    not_runnable: str | None = None
    """Why this task cannot run here (a GPU, several containers, no Dockerfile), or None."""
    not_runnable_kind: str | None = None
    """The first reason's kind: ``gpu``, ``containers``, ``no-dockerfile`` or ``parser``."""

    @property
    def test_scripts(self) -> list[Path]:
        """Every shell script of the verifier (to find what it installs)."""
        found = [p for p in sorted(self.tests_dir.rglob("*.sh")) if p.is_file()]
        return [*self.extra_test_files, *found]


def layout_of(path: Path) -> Layout | None:
    """``harbor`` for a folder with ``task.toml``, ``tb1`` for one with ``task.yaml``, else None."""
    if (path / "task.toml").is_file():
        return "harbor"
    if (path / "task.yaml").is_file():
        return "tb1"
    return None


def find_tasks(folder: Path, layout: Layout | None = None) -> list[Path]:
    """The task folders directly in ``folder`` (of ``layout`` when given), sorted by name; ``folder`` itself
    when it is a task."""
    folder = Path(folder)
    if layout_of(folder) is not None and (layout is None or layout_of(folder) == layout):
        return [folder]
    return sorted(p for p in folder.iterdir() if p.is_dir() and layout_of(p) is not None
                  and (layout is None or layout_of(p) == layout))


def load_task(path: Path) -> TaskSpec:
    """Read the task folder ``path`` in either layout."""
    path = Path(path)
    if not path.is_dir():
        raise TaskError(f"task folder {path} does not exist")
    if not _ID.match(path.name):
        raise TaskError(f"task folder name {path.name!r} must match {_ID.pattern}")
    layout = layout_of(path)
    if layout == "harbor":
        return _harbor(path)
    if layout == "tb1":
        return _tb1(path)
    raise TaskError(f"{path} is not a Terminal-Bench task: it has neither task.toml (Harbor) nor task.yaml "
                    "(Terminal-Bench 1)")


def _table(data: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise TaskError(f"{where}: [{name}] must be a table")
    return value


def _seconds(table: dict[str, Any], key: str, where: str, default: float | None) -> float | None:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskError(f"{where}: {key} must be a positive number of seconds, not {value!r}")
    return float(value)


def _env(table: dict[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    env = table.get("env", {})
    if not isinstance(env, dict):
        raise TaskError(f"{where}: env must be a table of strings")
    return tuple((str(k), str(v)) for k, v in env.items())


def _harbor(path: Path) -> TaskSpec:
    where = f"task {path.name} task.toml"
    try:
        data = tomllib.loads((path / "task.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{where} is not valid TOML: {exc}") from None
    for rel in ("instruction.md", "tests/test.sh"):
        if not (path / rel).is_file():
            raise TaskError(f"task {path.name}: {rel} is missing (Harbor layout: task.toml, instruction.md, "
                            "environment/Dockerfile, tests/test.sh, solution/solve.sh)")
    instruction = (path / "instruction.md").read_text(encoding="utf-8").strip()
    if not instruction:
        raise TaskError(f"task {path.name}: instruction.md is empty")
    meta, agent, verifier = (_table(data, n, where) for n in ("metadata", "agent", "verifier"))
    environment, solution = _table(data, "environment", where), _table(data, "solution", where)
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TaskError(f"{where}: metadata.tags must be a list of strings")
    reasons: list[tuple[str, str]] = []
    env_dir = path / "environment"
    dockerfile = env_dir / "Dockerfile" if (env_dir / "Dockerfile").is_file() else None
    if (env_dir / "docker-compose.yaml").is_file() or (env_dir / "docker-compose.yml").is_file():
        reasons.append(("containers", "the task defines several containers (environment/docker-compose.yaml)"))
    if dockerfile is None:
        image = environment.get("docker_image")
        reasons.append(("no-dockerfile", f"the task names only a prebuilt image ({image}) and no "
                        "environment/Dockerfile" if image else "the task has no environment/Dockerfile"))
    gpus = environment.get("gpus", 0)
    if isinstance(gpus, int) and gpus > 0:
        reasons.append(("gpu", f"the task needs {gpus} GPU(s) ([environment] gpus)"))
    solve = path / "solution" / "solve.sh"
    return TaskSpec(
        id=path.name, path=path, layout="harbor", instruction=instruction, dockerfile=dockerfile,
        context=env_dir if dockerfile is not None else None, tests_dir=path / "tests", test_script="test.sh",
        solution_dir=path / "solution" if solve.is_file() else None, solution_script=solve if solve.is_file() else None,
        agent_timeout=_seconds(agent, "timeout_sec", where, None),
        verifier_timeout=_seconds(verifier, "timeout_sec", where, HARBOR_VERIFIER_TIMEOUT) or HARBOR_VERIFIER_TIMEOUT,
        build_timeout=_seconds(environment, "build_timeout_sec", where, HARBOR_BUILD_TIMEOUT) or HARBOR_BUILD_TIMEOUT,
        allow_internet=bool(environment.get("allow_internet", True)),
        cpus=_int(environment, "cpus", where), memory_mb=_int(environment, "memory_mb", where),
        storage_mb=_int(environment, "storage_mb", where), verifier_env=_env(verifier, where),
        solution_env=_env(solution, where), parser="reward", category=str(meta.get("category", "")),
        difficulty=str(meta.get("difficulty", "")), tags=tuple(tags),
        not_runnable=_not_runnable(reasons)[0], not_runnable_kind=_not_runnable(reasons)[1])


def _not_runnable(reasons: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """``(reasons joined, the first one's kind)``, or ``(None, None)``."""
    if not reasons:
        return None, None
    return "; ".join(text for _, text in reasons), reasons[0][0]


def _int(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TaskError(f"{where}: {key} must be a positive number, not {value!r}")
    return int(value)


def _tb1(path: Path) -> TaskSpec:
    import yaml

    where = f"task {path.name} task.yaml"
    try:
        data = yaml.safe_load((path / "task.yaml").read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskError(f"{where} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TaskError(f"{where} must be a mapping")
    instruction = data.get("instruction")
    if instruction is None and isinstance(data.get("descriptions"), list):  # the earliest task.yaml files
        found = [d.get("description") for d in data["descriptions"] if isinstance(d, dict)
                 and d.get("key", "base") == "base"]
        instruction = found[0] if found else None
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskError(f"{where}: instruction is missing or empty")
    for rel in ("run-tests.sh", "tests"):
        if not (path / rel).exists():
            raise TaskError(f"task {path.name}: {rel} is missing (Terminal-Bench 1 layout: task.yaml, Dockerfile, "
                            "run-tests.sh, tests/, solution.sh)")
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TaskError(f"{where}: tags must be a list of strings")
    reasons: list[tuple[str, str]] = []
    dockerfile, context = path / "Dockerfile", path
    compose = next((path / n for n in ("docker-compose.yaml", "docker-compose.yml") if (path / n).is_file()), None)
    if compose is not None:
        dockerfile, context, problem = _compose_client(compose, path)
        if problem:
            reasons.append(("containers", problem))
    if not dockerfile.is_file():
        reasons.append(("no-dockerfile", f"the task has no {dockerfile.relative_to(path)}"))
    parser = str(data.get("parser_name") or "pytest")
    if parser != "pytest":
        reasons.append(("parser", f"parser_name {parser!r} is not supported (only pytest)"))
    commands: tuple[str, ...] = ()
    script = path / "solution.sh"
    if (path / "solution.yaml").is_file() and not script.is_file():
        commands = _solution_yaml(path / "solution.yaml", path.name)
    return TaskSpec(
        id=path.name, path=path, layout="tb1", instruction=instruction.strip(),
        dockerfile=dockerfile if dockerfile.is_file() else None, context=context, tests_dir=path / "tests",
        test_script="run-tests.sh", extra_test_files=(path / "run-tests.sh",),
        solution_script=script if script.is_file() else None, solution_commands=commands,
        agent_timeout=_seconds(data, "max_agent_timeout_sec", where, TB1_AGENT_TIMEOUT),
        verifier_timeout=_seconds(data, "max_test_timeout_sec", where, TB1_TEST_TIMEOUT) or TB1_TEST_TIMEOUT,
        allow_internet=True, parser="pytest", category=str(data.get("category", "")),
        difficulty=str(data.get("difficulty", "")), tags=tuple(tags),
        not_runnable=_not_runnable(reasons)[0], not_runnable_kind=_not_runnable(reasons)[1])


def _compose_client(compose: Path, task: Path) -> tuple[Path, Path, str | None]:
    """The Dockerfile and context of the compose file's one service, and a reason when there are several."""
    import yaml

    try:
        data = yaml.safe_load(compose.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise TaskError(f"task {task.name}: {compose.name} is not valid YAML: {exc}") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or not services:
        return task / "Dockerfile", task, None
    problem = None
    if len(services) > 1:
        problem = f"the task runs several containers ({', '.join(sorted(services))} in {compose.name})"
    name = "client" if "client" in services else sorted(services)[0]
    build = (services[name] or {}).get("build") if isinstance(services[name], dict) else None
    if isinstance(build, str):
        return task / build / "Dockerfile", task / build, problem
    if isinstance(build, dict):
        context = task / str(build.get("context", "."))
        return context / str(build.get("dockerfile", "Dockerfile")), context, problem
    return task / "Dockerfile", task, problem


def _solution_yaml(path: Path, task: str) -> tuple[str, ...]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskError(f"task {task}: solution.yaml is not valid YAML: {exc}") from None
    commands = []
    for item in data or []:
        command = item.get("command") if isinstance(item, dict) else item
        if isinstance(command, str):
            commands.append(command)
    return tuple(commands)
