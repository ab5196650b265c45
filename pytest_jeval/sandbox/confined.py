"""Confining a program that is not generated Python: an external agent CLI, for one episode.

:func:`confine` builds the launch of one agent process (the runner in
``agents/external/episode.py`` starts it):

* **bubblewrap** (:mod:`.bwrap`): its own user namespace with no capability (inherited mounts
  are locked: it cannot unmount ``/proc`` or ``/tmp``, nor remount anything read-write), PID,
  IPC, UTS, mount and network namespaces, no further user namespaces;
* **a file system built for it**: the host's system directories and a few ``/etc`` files
  read-only; its own program and what that needs (:func:`readable_paths`: the virtualenv or
  npm prefix of its interpreter, the files its command line names) read-only; its workspace
  and home read-write; a private ``/tmp``. Not there: the host's ``/`` and ``/tmp``, this
  package (covered where a bind would show it), the suite, the datasets, other episodes;
* **a network that reaches the recording proxy and nothing else**: in its network namespace
  only a loopback exists; :mod:`._relay` listens on ``127.0.0.1:RELAY_PORT`` there and relays
  to the proxy's Unix socket, bound in at :data:`PROXY_SOCKET`;
* **an identity of its own** when the runner is root: an otherwise unused uid (:mod:`.uids`)
  for the whole episode, so it cannot signal, trace or read another run;
* **quotas for the episode as a whole** (:mod:`.quota`): a cgroup bounding its processes'
  memory and number (where cgroups are usable) and size-limited workspace and home.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.bwrap import Bind, Layout
from pytest_jeval.sandbox.limits import MIB, make_preexec, sandbox_python
from pytest_jeval.sandbox.quota import RunCgroup, run_cgroup
from pytest_jeval.sandbox.uids import run_uid
from pytest_jeval.sandbox.workdir import chown_tree, workspace_quota

__all__ = ["AGENT_MEMORY_MB", "AGENT_PROCESSES", "PROXY_SOCKET", "RELAY_PORT", "AgentHost", "Confinement", "confine",
           "confinement_problem", "installation_of", "readable_paths"]

RELAY_PORT = 8642
"""The port the proxy answers on inside the agent's network namespace (``http://127.0.0.1:8642/v1``)."""
PROXY_SOCKET = "/run/jeval/proxy.sock"
"""Where the proxy's Unix socket appears inside the sandbox."""
AGENT_MEMORY_MB = int(os.environ.get("JEVAL_AGENT_MEMORY_MB", "4096"))
"""Memory of an agent's processes together (``JEVAL_AGENT_MEMORY_MB``; where cgroups are usable)."""
AGENT_PROCESSES = int(os.environ.get("JEVAL_AGENT_PROCESSES", "1024"))
"""Processes and threads of an agent together (``JEVAL_AGENT_PROCESSES``; where cgroups are usable)."""
AGENT_TMP_BYTES = 256 * MIB
"""Size of the agent's private ``/tmp``."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Host folders every sandbox shows anyway (read-only)."""
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""This package's folder: hidden from every agent (its data holds benchmarks' answers)."""
RELAY_SOURCE = Path(__file__).with_name("_relay.py")
TAGS = ("bwrap", "userns", "no-caps", "pidns", "netns", "mountns", "ipcns", "utsns", "built-fs", "proxy-only-network")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    return any(_under(path, s) for s in SYSTEM)


def _venv_of(path: str) -> str | None:
    """The virtualenv ``path`` lies in (a folder with ``pyvenv.cfg`` at most three levels up), or None."""
    folder = os.path.dirname(path)
    for _ in range(4):
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def _venv_base(venv: str) -> str | None:
    """The prefix of the interpreter a virtualenv was made from (``home`` in its ``pyvenv.cfg``)."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition("=")
                if key.strip() == "home":
                    home = value.strip()
                    return os.path.dirname(home) if os.path.basename(home) == "bin" else home
    except OSError:
        return None
    return None


def _shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if os.path.basename(parts[0]) == "env" and len(parts) > 1:
        return shutil.which(parts[1])
    return parts[0]


def installation_of(program: str, _depth: int = 0) -> list[str]:
    """The host folders (or files) a program needs to run, besides the system directories.

    A virtualenv's program brings the virtualenv and its base interpreter's prefix; a program
    under ``node_modules`` brings the npm prefix holding it; ``<prefix>/bin/<program>`` brings
    ``<prefix>``; any other file brings itself. A script's ``#!`` interpreter is followed too.
    """
    path = os.path.abspath(program)
    found: list[str] = []
    venv = _venv_of(path)
    real = os.path.realpath(path)
    if venv is not None:
        found.append(venv)
        base = _venv_base(venv)
        if base is not None and not _system(base):
            found.append(base)
    parts = real.split(os.sep)
    if "node_modules" in parts:
        found.append(os.sep.join(parts[: parts.index("node_modules")]) or os.sep)
    elif not _system(real) and venv is None:
        folder = os.path.dirname(real)
        prefix = os.path.dirname(folder) if os.path.basename(folder) == "bin" else None
        found.append(prefix if prefix and prefix != os.sep and not _system(prefix) else real)
    if _depth < 2 and os.path.isfile(real):
        interpreter = _shebang(real)
        if interpreter:
            found.extend(installation_of(interpreter, _depth + 1))
    return [p for p in dict.fromkeys(found) if not _system(p)]


def readable_paths(argv: Sequence[str], *, search_path: str = "", writable: Sequence[str] = (),
                   extra: Sequence[str] = ()) -> list[str]:
    """What an agent's command needs shown read-only: the installation of its program (found on
    ``search_path`` when not a path), every other existing absolute path its arguments name, and ``extra``.
    Paths inside ``writable`` folders are left out (they are shown read-write)."""
    if not argv:
        return []
    program = argv[0] if os.sep in argv[0] else (shutil.which(argv[0], path=search_path or None) or argv[0])
    found = installation_of(program) if os.path.exists(program) else []
    for arg in [*argv[1:], *extra]:
        if os.path.isabs(arg) and os.path.exists(arg) and not _system(os.path.realpath(arg)):
            found.append(arg)
    keep = [os.path.realpath(w) for w in writable]
    out: list[str] = []
    for path in dict.fromkeys(found):
        real = os.path.realpath(path)
        if any(_under(real, w) or _under(path, w) for w in keep):
            continue
        out.append(path)
    return out


@dataclasses.dataclass
class Confinement:
    """One confined launch: the command line and the ``Popen`` options that start it."""

    argv: list[str]
    popen: dict[str, Any]
    cgroup: RunCgroup | None
    tags: list[str]
    owner: tuple[int, int] | None
    env: dict[str, str] | None = None
    """The environment to start it with, when the place it runs changed the agent's (``PATH``); None: as given."""
    cwd: str | None = None
    """The launcher's working directory on the host; None: the agent's workspace."""


class AgentHost(Protocol):
    """A place other than its own sandbox where an external agent runs: a task's environment
    (:mod:`pytest_jeval.sandbox.shell.agent_host`). A benchmark gives one per episode through
    ``AgentSpec.external_host``; the agent then works on the task's files with the task's tools."""

    home: str
    """The agent's home as it sees it (the episode's home folder is bound there)."""
    workdir: str
    """The agent's working directory as it sees it (the task's)."""

    def launch(self, argv: Sequence[str], *, home: str, socket_path: str, readable: Sequence[str],
               env: Mapping[str, str]) -> contextlib.AbstractContextManager[Confinement]:
        """The confined launch of ``argv`` there (the relay to ``socket_path`` first); ``home`` is the episode's
        home folder on the host, ``readable`` the host paths its program needs, ``env`` its environment."""
        ...


def _relay_python(dropping: bool) -> str:
    return os.path.realpath(sandbox_python(dropping))


def _layout(*, readable: Sequence[str], workspace: str, home: str, socket_path: str, python: str) -> Layout:
    binds: list[Bind] = []
    prefix = os.path.dirname(os.path.dirname(python))
    if not _system(prefix):
        binds.append(Bind(prefix, prefix))
    for path in readable:
        if os.path.exists(path):
            binds.append(Bind(path, path))
    binds += [Bind(workspace, workspace, writable=True), Bind(home, home, writable=True),
              Bind(socket_path, PROXY_SOCKET)]
    return Layout(binds=binds, hide=[PACKAGE_DIR], chdir=workspace, hostname="jeval-agent", tmp_bytes=AGENT_TMP_BYTES)


@contextlib.contextmanager
def confine(argv: Sequence[str], *, workspace: str, home: str, socket_path: str, readable: Sequence[str] = (),
            memory_mb: int | None = None, max_processes: int | None = None) -> Iterator[Confinement]:
    """The confined launch of ``argv`` for one episode (see the module docstring), held for the ``with`` block.

    ``socket_path`` is the proxy's Unix socket on the host; the program reaches it as
    ``http://127.0.0.1:RELAY_PORT``. ``workspace`` and ``home`` are given to the episode's uid.
    Raises OSError when bubblewrap is missing (see :func:`confinement_problem`).
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise OSError("bubblewrap (bwrap) is not installed")
    with contextlib.ExitStack() as stack:
        owner: tuple[int, int] | None = None
        if os.geteuid() == 0:
            from pytest_jeval.sandbox.files import private_base_dir

            uid = stack.enter_context(run_uid(private_base_dir("/tmp")))
            owner = (uid, uid)
            chown_tree(workspace, uid, uid)
            chown_tree(home, uid, uid)
        cgroup = stack.enter_context(run_cgroup((memory_mb or AGENT_MEMORY_MB) * MIB,
                                                max_processes or AGENT_PROCESSES))
        python = _relay_python(owner is not None)
        layout = _layout(readable=readable, workspace=workspace, home=home, socket_path=socket_path, python=python)
        relay = [python, "-I", "-S", "-B", "-c", RELAY_SOURCE.read_text(encoding="utf-8"), str(RELAY_PORT),
                 PROXY_SOCKET, "--", *argv]
        command = bwrap_mod.command(bwrap, layout, relay, stage=owner is not None)
        fds = cgroup.attach_fds() if cgroup is not None else []
        popen = {"preexec_fn": make_preexec(None, identity=owner, cgroup_fds=fds, staged=command.staged)}
        tags = [*TAGS, *(("uid-per-run",) if owner else ()), *(("cgroup-memory", "cgroup-pids") if cgroup else ()),
                *(("disk-quota",) if workspace_quota(workspace) and workspace_quota(home) else ())]
        yield Confinement(command.argv, popen, cgroup, tags, owner)


@functools.lru_cache(maxsize=1)
def confinement_problem() -> str | None:
    """Why agents cannot be confined here (no bubblewrap, no user namespaces), or None; probed once."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed"
    import tempfile

    from pytest_jeval.sandbox.files import private_base_dir

    base = private_base_dir("/tmp" if os.path.isdir("/tmp") else None)
    folder = tempfile.mkdtemp(dir=base)
    try:
        os.chmod(folder, 0o711)
        with confine(["/bin/sh", "-c", "exit 0"], workspace=folder, home=folder,
                     socket_path=os.devnull) as box:
            done = subprocess.run(box.argv, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"},
                                  start_new_session=True, **box.popen)
            if box.cgroup is not None:
                box.cgroup.close()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot make the agent's sandbox here: {exc}"
    finally:
        os.rmdir(folder)
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"bubblewrap cannot make the agent's sandbox here (exit status {done.returncode}: {err})"
    return None
