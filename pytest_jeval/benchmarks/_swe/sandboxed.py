"""Running a bash script in a checkout, in the project's sandbox, with the environment mounted read-only.

Every program of an instance (its install step, the agent's commands, the tests, the workload) runs through
:func:`pytest_jeval.sandbox.run_in_workspace`: bubblewrap with no network, the checkout as the only
writable host folder (at ``/sandbox``, where upstream has ``/testbed``), the environment and its base
interpreter read-only at their own paths, a private ``/tmp``, rlimits, and a per-run uid when the runner
is root; every process of a run is killed when it ends. The checkout's own interpreter is
``/sandbox/.jeval/venv`` (made by :mod:`.trees`), first on ``PATH``; its ``HOME`` and ``TMPDIR`` are in
``/sandbox/.jeval``, which git is told to ignore. pip gets ``--no-index`` and no build isolation: the
build backend comes from the environment.

The paths a checkout's interpreter writes are ``/sandbox/...``, so the checkout must be mounted there:
the bubblewrap plan is required (:func:`require_bubblewrap`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pytest_jeval.benchmarks._swe.envs import Env
from pytest_jeval.sandbox import ExecResult, SandboxError, run_in_workspace

__all__ = ["HOME", "JEVAL_DIR", "SandboxUnavailable", "require_bubblewrap", "run_script"]

ROOT = "/sandbox"
JEVAL_DIR = ".jeval"
VENV = f"{ROOT}/{JEVAL_DIR}/venv"
HOME = f"{ROOT}/{JEVAL_DIR}/home"
TMP = f"{ROOT}/{JEVAL_DIR}/tmp"
MEMORY_MB = 8192
MAX_PROCESSES = 512
FILE_SIZE_MB = 2048


class SandboxUnavailable(RuntimeError):
    """This machine's sandbox cannot run SWE instances (the message says what to install)."""


def require_bubblewrap() -> None:
    """SandboxUnavailable unless the sandbox runs programs under bubblewrap (checkouts live at /sandbox)."""
    from pytest_jeval.sandbox.plans import current_plan

    plan = current_plan()
    if plan.bwrap is None:
        raise SandboxUnavailable(
            f"SWE-bench instances run in the bubblewrap sandbox, and this machine's sandbox is {plan.name!r}: "
            "install bubblewrap (make bubblewrap, or apt-get install -y bubblewrap) where user namespaces work")


def prelude(env: Env, extra: Mapping[str, str] | None = None) -> str:
    """The lines every script starts with: its environment variables, folders and working directory."""
    exports = {
        "HOME": HOME, "TMPDIR": TMP, "LANG": "C.UTF-8",
        "PATH": f"{VENV}/bin:{env.bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads this "no" option inverted: 0 turns isolation off
        "GIT_CONFIG_NOSYSTEM": "1",
        **(extra or {}),
    }
    lines = [f"export {k}={_quote(v)}" for k, v in exports.items()]
    return "\n".join([*lines, 'mkdir -p "$HOME" "$TMPDIR"', f"cd {ROOT}", ""])


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def run_script(tree: Path | str, script: str, env: Env, *, timeout: float, stdin: str | None = None,
               max_output: int = 65_536, extra_env: Mapping[str, str] | None = None,
               ro_paths: tuple[str, ...] = ()) -> ExecResult:
    """Run ``script`` with bash in the checkout ``tree`` (see the module docstring).

    SandboxUnavailable when the sandbox cannot start the program at all.
    """
    text = prelude(env, extra_env) + script
    try:
        return run_in_workspace(os.fspath(tree), ["-c", text], executable="/bin/bash", stdin=stdin, timeout=timeout,
                                memory_mb=MEMORY_MB, max_processes=MAX_PROCESSES, file_size_mb=FILE_SIZE_MB,
                                max_output=max_output, ro_paths=(*env.ro_paths, *ro_paths))
    except SandboxError as exc:
        raise SandboxUnavailable(f"the sandbox cannot run the instance's programs: {exc}") from exc
