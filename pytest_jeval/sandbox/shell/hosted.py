"""An external agent CLI inside a task's environment: what of the host it needs, and how it starts there.

The agent program (a ``command`` CLI, Hermes' virtualenv, OpenClaw's Node install) is the host's,
but it runs with the task's root file system, so the shell commands it runs use the task's tools
and act on the task's files (``/app``). What it needs of the host is bound in **read-only**:

* :data:`HOST_ROOT` ``/usr`` (``/jeval/host/usr``): the host's ``/usr``, its dynamic loader, C library and
  system programs (a program under ``/usr`` runs from here);
* the same path as on the host: the program's own installation outside the system folders (a virtualenv and
  the Python it was made from, an npm prefix, a script the command line names);
* :data:`AGENT_HOME`: the agent's own home (its configuration, the prompt file), read-write;
* :data:`AGENT_SOCKET`: the recording proxy's Unix socket; the relay (:mod:`pytest_jeval.sandbox._relay`)
  answers on ``127.0.0.1:RELAY_PORT``.

Every host program is started through the host's own dynamic loader with the host's libraries
(``ld.so --library-path ...``), so it does not depend on the task's C library or on what the task
image has installed; nothing of this reaches the environment of the commands the agent runs (no
``LD_LIBRARY_PATH``). Node (:data:`SELF_EXECUTING`) is the exception: it starts copies of itself through
``/proc/self/exe``, so it runs directly, on the task's C library and ``libstdc++`` (every Debian image with
``apt`` has them). A virtualenv made from the system's Python (its ``pyvenv.cfg`` names ``/usr``, which is the
task's inside) starts as the host's Python under :data:`HOST_ROOT` with the virtualenv's path as ``argv[0]``
and ``PYTHONHOME`` pointing there, taken out of the environment before the agent's code runs (:data:`BOOT`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Sequence

__all__ = ["AGENT_HOME", "AGENT_SOCKET", "HOST_ROOT", "HostedError", "HostedPlan", "host_loader", "hosted_plan"]

HOST_ROOT = "/jeval/host"
"""Where the host's system folders appear inside the task's environment (read-only)."""
AGENT_HOME = "/jeval/agent/home"
"""The agent's home inside the task's environment."""
AGENT_SOCKET = "/jeval/agent/proxy.sock"
"""The recording proxy's Unix socket inside the task's environment."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
_LOADERS = ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3",
            "/lib64/ld64.so.2", "/lib/ld-linux.so.2", "/lib/ld-linux-riscv64-lp64d.so.1",
            "/lib64/ld-linux-loongarch-lp64d.so.1")


SELF_EXECUTING = ("node",)
"""Programs started directly, with the task's own C library, not through the host's loader: Node starts copies of
itself through ``/proc/self/exe`` (which would be the loader). They need the task's glibc and libstdc++."""


class HostedError(ValueError):
    """The agent cannot run inside the task's environment (the message says why)."""


@dataclasses.dataclass(frozen=True)
class HostedPlan:
    """How one agent command starts inside a task's environment."""

    argv: list[str]
    """The relay, then the agent, with paths as seen inside."""
    binds: list[tuple[str, str]]
    """``(host path, path inside)``, read-only."""
    path_dirs: list[str]
    """Folders of the adapter's ``PATH`` that exist inside (its own installation), put before the task's."""


def _system(path: str) -> bool:
    return any(path == s or path.startswith(s + "/") for s in SYSTEM)


def host_loader() -> str:
    """The host's dynamic loader (its real path)."""
    for candidate in _LOADERS:
        if os.path.exists(candidate):
            return os.path.realpath(candidate)
    raise HostedError("the host's dynamic loader (ld-linux) was not found")


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return []
    return first[2:].split(maxsplit=1) if first.startswith("#!") else []


def _venv_of(path: str) -> str | None:
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(3):
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return folder
        folder = os.path.dirname(folder)
    return None


def _resolve(argv: Sequence[str], search_path: str) -> list[str]:
    """``argv`` with its program an executable file (a script's ``#!`` interpreter put in front)."""
    out = list(argv)
    for _ in range(3):
        program = out[0] if os.sep in out[0] else shutil.which(out[0], path=search_path or None)
        if program is None or not os.path.isfile(program):
            raise HostedError(f"{out[0]} is not an executable file on the host")
        out[0] = os.path.abspath(program)
        if _is_elf(os.path.realpath(program)):
            return out
        line = _shebang(program)
        if not line:
            raise HostedError(f"{program} is neither a program nor a script with #!")
        interpreter, *rest = line
        if os.path.basename(interpreter) == "env" and rest:
            words = rest[0].split()
            if words and words[0] == "-S":
                words = words[1:]
            if not words:
                raise HostedError(f"{program}: #!{interpreter} names no program")
            out = [words[0], *words[1:], program, *out[1:]]
        else:
            out = [interpreter, *rest, program, *out[1:]]
    raise HostedError(f"{argv[0]}: too many #! interpreters")


def _inside(program: str) -> str:
    """Where a host program is found inside: under :data:`HOST_ROOT` when it is a system one."""
    real = os.path.realpath(program)
    return program if not _system(real) else HOST_ROOT + real  # else its installation is at the same path


BOOT = ("import os, runpy, sys; os.environ.pop('PYTHONHOME', None); a = sys.argv[1:]; "
        "sys.argv = a[1:] if a[0] == '-m' else a; "
        "runpy.run_module(a[1], run_name='__main__', alter_sys=True) if a[0] == '-m' "
        "else runpy.run_path(a[0], run_name='__main__')")
"""How a virtualenv of the system's Python starts inside: its standard library from the host's ``/usr`` (through
``PYTHONHOME``, taken out of the environment before the agent's code runs, so its commands never see it)."""


def _system_venv(agent: list[str], start: list[str], search_path: str) -> list[str] | None:
    """The start of a program of a virtualenv made from the system's Python (``pyvenv.cfg`` names ``/usr``, the
    task's inside), or None when ``agent`` is not one: the host's Python under :data:`HOST_ROOT` with the
    virtualenv's path as its ``argv[0]`` (so the virtualenv is found) and ``PYTHONHOME`` its prefix there."""
    program = agent[0]
    real = os.path.realpath(program)
    if _system(os.path.abspath(program)) or not _system(real) or _venv_of(program) is None:
        return None
    rest = agent[1:]
    while rest and rest[0] in ("-I", "-S", "-B", "-u", "-s", "-E"):
        rest = rest[1:]
    if not rest or (rest[0].startswith("-") and rest[0] != "-m") or (rest[0] == "-m" and len(rest) < 2):
        raise HostedError(f"{program} {' '.join(agent[1:3])}: a virtualenv of the system's Python runs a script or "
                          "-m module inside a task's environment, nothing else")
    env = os.path.realpath(shutil.which("env", path=search_path or None) or "/usr/bin/env")
    prefix = os.path.dirname(os.path.dirname(real))
    return [*start, HOST_ROOT + env, f"PYTHONHOME={HOST_ROOT}{prefix}", *start, "--argv0", program, HOST_ROOT + real,
            "-c", BOOT, *rest]


def _library_dirs(readable: Sequence[str], loader: str) -> list[str]:
    dirs = [os.path.join(p, "lib") for p in readable if os.path.isdir(os.path.join(p, "lib"))]
    host = [os.path.dirname(loader), "/usr/local/lib", "/usr/lib"]
    for folder in host:
        if os.path.isdir(folder):
            dirs.append(HOST_ROOT + os.path.realpath(folder))
    return list(dict.fromkeys(dirs))


def hosted_plan(argv: Sequence[str], *, readable: Sequence[str], search_path: str, relay: Sequence[str],
                adapter_path: str = "", hidden: str = "") -> HostedPlan:
    """The start of ``argv`` (the agent) behind ``relay`` (``[python, flags..., -c, source, PORT, SOCKET, --]``,
    host paths) inside a task's environment; ``readable`` are the host paths its installation needs
    (:func:`pytest_jeval.sandbox.confined.readable_paths`), ``hidden`` a folder that must not be shown."""
    if not argv:
        raise HostedError("the agent's command is empty")
    loader = host_loader()
    extra = [p for p in readable if not _system(os.path.realpath(p))]
    relay_program = os.path.realpath(relay[0])
    if not _system(relay_program):
        from pytest_jeval.sandbox.confined import installation_of

        extra += installation_of(relay_program)
    for path in extra:
        real = os.path.realpath(path)
        if hidden and os.path.isdir(real) and (hidden == real or hidden.startswith(real.rstrip("/") + "/")):
            raise HostedError(f"{path} holds the harness's package ({hidden}); it cannot be shown to an agent")
    libs = ":".join(_library_dirs([p for p in extra if os.path.isdir(p)], loader))
    start = [HOST_ROOT + loader, "--library-path", libs]
    agent = _resolve(argv, search_path)
    direct = os.path.basename(agent[0]).startswith(SELF_EXECUTING)
    venv_start = _system_venv(agent, start, search_path)
    if venv_start is not None:
        line = [*start, _inside(relay_program), *relay[1:], *venv_start]
    else:
        agent[0] = _inside(agent[0])
        line = [*start, _inside(relay_program), *relay[1:], *([] if direct else start), *agent]
    binds = [("/usr", HOST_ROOT + "/usr")]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.isdir(path) and not os.path.islink(path):
            binds.append((path, HOST_ROOT + path))
    binds += [(p, p) for p in dict.fromkeys(extra) if os.path.exists(p)]
    path_dirs = [d for d in adapter_path.split(os.pathsep)
                 if d and not _system(os.path.realpath(d)) and any(d == p or d.startswith(p.rstrip("/") + "/")
                                                                  for p, _ in binds[1:])]
    return HostedPlan(line, binds, path_dirs)


def relay_command(port: int, socket_inside: str) -> list[str]:
    """The relay's command line (host paths): a Python of the host, then ``-c`` its source."""
    from pytest_jeval.sandbox.confined import RELAY_SOURCE
    from pytest_jeval.sandbox.limits import sandbox_python

    python = os.path.realpath(sandbox_python(True) if os.geteuid() == 0 else sys.executable)
    return [python, "-I", "-S", "-B", "-c", RELAY_SOURCE.read_text(encoding="utf-8"), str(port), socket_inside, "--"]
