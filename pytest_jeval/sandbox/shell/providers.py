"""Sandbox providers for terminal tasks: start, exec, copy in, copy out, stop.

A :class:`Provider` starts one :class:`Sandbox` per episode from a task's
``environment/`` folder. The sandbox is the task's machine: the agent's ``bash`` calls
run in it one after another, and the checker runs ``tests/test.sh`` in it afterwards.

``bubblewrap`` (the default, the only supported provider) keeps the task's state in a
private host directory and starts a fresh ``bwrap`` for every exec:

| path inside | what | writable |
|---|---|---|
| ``/`` | the cached Debian root filesystem (:mod:`.rootfs`) | no (read-only bind) |
| ``/app`` | the task directory: ``environment/`` copied in | yes, kept for the episode |
| ``/tmp`` | private to the episode (also the agent's ``HOME``) | yes, kept for the episode |
| ``/tests``, ``/logs`` | the checker's files, copied in after the episode (checker execs only) | ``/logs`` only |
| ``/root``, ``/tmp`` of a checker exec | fresh and empty for each check (``HOME`` is ``/root``) | yes |
| ``/proc``, ``/dev`` | private | no |

Each exec is built by :mod:`pytest_jeval.sandbox.bwrap`: new user (no capability), PID,
network, IPC, UTS and mount namespaces (no network at all: only a loopback), its own session
and process group, the rlimits of the project's sandbox, a cgroup bounding its processes'
memory and number together (where cgroups are usable), a scrubbed environment. As root the
sandbox's files are a size-limited file system of their own and belong to one uid taken for
the sandbox's life (so nothing is walked between execs). At its timeout the whole group is
killed, and with it the PID namespace: no process outlives an exec.

The checker (``exec(..., checker=True)``) gets nothing the agent could have prepared: a fresh
home and ``/tmp``, an environment of the harness's (:func:`checker_environment`, with git
settings that keep a repository's hooks, fsmonitor, pager and gpg program from running), and
the verdict is decided by the harness (:mod:`.verifier`).

``docker`` is a sketch for real Terminal-Bench 2 task folders: it is **untested here**
and refused unless ``JEVAL_TERMINAL_DOCKER=untested`` is set (docs/terminal.md).
"""

from __future__ import annotations

import abc
import atexit
import contextlib
import dataclasses
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from pytest_jeval.core.registry import Registry, RegistryError
from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.bwrap import Bind, Layout
from pytest_jeval.sandbox.limits import Limits
from pytest_jeval.sandbox.plans import base_dir, current_plan, spawn_options
from pytest_jeval.sandbox.process import StdinFile, kill_group, read_capped, wait_unreaped
from pytest_jeval.sandbox.quota import run_cgroup
from pytest_jeval.sandbox.uids import run_uid
from pytest_jeval.sandbox.workdir import chown_path, chown_tree, make_workspace_dir, remove_workspace_dir

__all__ = ["SANDBOXES", "BubblewrapProvider", "DockerProvider", "ExecOutcome", "Provider", "ProviderUnavailable",
           "Sandbox", "get_provider", "stop_all"]

TASK_DIR = "/app"
"""The task's working directory inside the sandbox (Terminal-Bench 2's ``WORKDIR``)."""
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_OUTPUT = 16 * 1024
"""Bytes of stdout and of stderr an exec keeps (head and tail)."""


class ProviderUnavailable(Exception):
    """The provider cannot run on this machine (a program or the root filesystem is missing);
    the message names the command that installs it."""


@dataclasses.dataclass(frozen=True)
class ExecOutcome:
    """What one command in the sandbox did."""

    returncode: int
    """The exit status (a shell's ``128 + N`` for a command killed by signal N)."""
    stdout: str
    stderr: str
    timed_out: bool
    """True when the timeout ran out and the command's processes were killed."""
    seconds: float
    """Wall-clock seconds of the exec, sandbox start included."""


class Sandbox(abc.ABC):
    """One running task environment."""

    workdir: str = TASK_DIR

    @abc.abstractmethod
    def exec(self, command: str, *, timeout: float, stdin: str | None = None, checker: bool = False) -> ExecOutcome:
        """Run ``bash -c command`` in :attr:`workdir`; killed (with its children) after ``timeout`` s.

        ``checker=True``: run it as the task's checker, with nothing the agent could have prepared (a fresh
        home and ``/tmp``, the harness's environment, :func:`checker_environment`) and ``/tests``, ``/logs``.
        """

    @abc.abstractmethod
    def copy_in(self, source: Path, dest: str) -> None:
        """Copy the host file or folder ``source`` to ``dest`` (an absolute path inside the sandbox)."""

    @abc.abstractmethod
    def copy_out(self, source: str, dest: Path) -> None:
        """Copy ``source`` (a file inside the sandbox) to the host path ``dest``."""

    @abc.abstractmethod
    def stop(self) -> None:
        """End the sandbox and delete its files (a second call does nothing)."""

    def read_text(self, source: str, limit: int = 4096) -> str | None:
        """The first ``limit`` bytes of the regular file ``source`` as text, or None when there is none."""
        with tempfile.TemporaryDirectory() as tmp:
            try:
                self.copy_out(source, Path(tmp) / "file")
            except (OSError, ValueError, subprocess.SubprocessError):
                return None
            with open(Path(tmp) / "file", "rb") as fh:
                return fh.read(limit).decode("utf-8", "replace")


class Provider(abc.ABC):
    """Makes sandboxes of one kind."""

    name: ClassVar[str]
    supported: ClassVar[bool]
    """True only for providers this project's test suite runs."""

    @abc.abstractmethod
    def check(self) -> None:
        """Raise :class:`ProviderUnavailable` (naming the install command) when it cannot run here."""

    @abc.abstractmethod
    def start(self, environment: Path | None) -> Sandbox:
        """A new sandbox with the files of the folder ``environment`` in :data:`TASK_DIR`."""


# ------------------------------------------------------------------------------------------ bubblewrap

_live: set[Sandbox] = set()
_live_lock = threading.Lock()


def stop_all() -> None:
    """Stop every sandbox still running in this process (also run at exit)."""
    with _live_lock:
        boxes = list(_live)
    for box in boxes:
        box.stop()


atexit.register(stop_all)

_PARTS = ("app", "tmp", "tests", "logs")
MIB = 1024 * 1024
TASK_DISK_BYTES = int(os.environ.get("JEVAL_TASK_DISK_MB", "1024")) * MIB
"""Size of a task sandbox's files (``/app``, ``/tmp``, the checker's) as root (``JEVAL_TASK_DISK_MB``)."""
TASK_FILES = int(os.environ.get("JEVAL_TASK_FILES", "100000"))
"""Files and folders a task sandbox may hold as root (``JEVAL_TASK_FILES``)."""
CHECKER_HOME = "/root"
"""``HOME`` of the checker: a fresh, empty folder for each check."""
GIT_GUARDS = (
    ("core.hooksPath", "/nonexistent/jeval-no-hooks"), ("core.fsmonitor", "false"), ("core.pager", "cat"),
    ("core.editor", "true"), ("sequence.editor", "true"), ("core.sshCommand", "ssh"), ("core.askPass", "true"),
    ("credential.helper", ""), ("gpg.program", "gpg"), ("gpg.openpgp.program", "gpg"), ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"), ("log.showSignature", "false"), ("protocol.ext.allow", "never"),
)
"""Git settings the checker's environment imposes over every configuration file (command-line scope):
a repository the agent set up cannot make the checker's ``git`` run a program of the agent's (hooks,
fsmonitor, pager, editor, ssh, askpass, credential helper, gpg verification)."""


def git_guard_env() -> dict[str, str]:
    """The variables that keep a checker's or verifier's ``git`` off every global configuration and impose
    :data:`GIT_GUARDS` (``GIT_CONFIG_COUNT`` and its key/value pairs)."""
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": str(len(GIT_GUARDS))}
    for i, (key, value) in enumerate(GIT_GUARDS):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def checker_environment() -> dict[str, str]:
    """The whole environment of a checker run: nothing of the agent's (see :meth:`Sandbox.exec`)."""
    return {"PATH": SANDBOX_PATH, "HOME": CHECKER_HOME, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb",
            "USER": "root", **git_guard_env()}


class BubblewrapSandbox(Sandbox):
    """A task environment kept in a private host directory; every exec is a fresh ``bwrap``.

    The directory is a size-limited file system of its own as root (:data:`TASK_DISK_BYTES`,
    :data:`TASK_FILES`), and belongs to one uid for the sandbox's whole life (taken at the start
    where the runner is root), so an exec costs the same however many files ``/app`` holds:
    nothing is walked between execs.
    """

    def __init__(self, bwrap: str, rootfs: Path, *, memory_mb: int = 2048, max_processes: int = 256,
                 file_size_mb: int = 256, disk_bytes: int | None = None, files: int | None = None) -> None:
        self.bwrap = bwrap
        self.rootfs = rootfs
        self.memory_mb, self.max_processes, self.file_size_mb = memory_mb, max_processes, file_size_mb
        self._stack = contextlib.ExitStack()
        self.root: Path | None = Path(make_workspace_dir(disk_bytes=disk_bytes or TASK_DISK_BYTES,
                                                         files=files or TASK_FILES))
        self._lock = threading.Lock()
        self._checks = 0
        try:
            self.owner = self._take_owner()
            for part in _PARTS:
                os.mkdir(self.root / part, 0o755)
            if self.owner is not None:
                chown_tree(str(self.root), *self.owner)
        except BaseException:
            self._stack.close()
            remove_workspace_dir(self.root)
            raise
        with _live_lock:
            _live.add(self)

    def _take_owner(self) -> tuple[int, int] | None:
        """The uid the sandbox's files and processes belong to for its whole life (None: the runner's)."""
        plan = current_plan()
        if plan.uid_per_run:
            uid = self._stack.enter_context(run_uid(base_dir(plan)))
            return uid, uid
        return plan.run_as

    def _host(self, inside: str) -> Path:
        """The host path of an absolute sandbox path below one of the writable parts."""
        if self.root is None:
            raise RuntimeError("the sandbox was stopped")
        norm = os.path.normpath(inside)
        parts = norm.strip("/").split("/")
        if not os.path.isabs(inside) or parts[0] not in _PARTS or ".." in parts:
            raise ValueError(f"{inside!r} is not below {', '.join('/' + p for p in _PARTS)}")
        return self.root.joinpath(*parts)

    def layout(self, *, checker: str | None = None) -> Layout:
        """What one exec sees: the root filesystem read-only, ``/app`` and ``/tmp`` read-write. A checker
        exec (``checker`` names its fresh folder) gets its own empty ``/tmp`` and home, ``/tests``
        read-only and ``/logs`` read-write; the agent's execs never see ``/tests`` or ``/logs``."""
        assert self.root is not None
        binds = [Bind(str(self.root / "app"), TASK_DIR, writable=True)]
        if checker is None:
            binds.append(Bind(str(self.root / "tmp"), "/tmp", writable=True))
        else:
            fresh = self.root / checker
            binds += [Bind(str(fresh / "tmp"), "/tmp", writable=True),
                      Bind(str(fresh / "home"), CHECKER_HOME, writable=True),
                      Bind(str(self.root / "tests"), "/tests"), Bind(str(self.root / "logs"), "/logs", writable=True)]
        return Layout(binds=binds, root=str(self.rootfs), tmp_bytes=None, chdir=self.workdir, hostname="jeval-task")

    def argv(self, command: str, *, checker: str | None = None) -> list[str]:
        """The ``bwrap`` command line of one exec."""
        return bwrap_mod.command(self.bwrap, self.layout(checker=checker), ["/bin/bash", "-c", command]).argv

    def exec(self, command: str, *, timeout: float, stdin: str | None = None, checker: bool = False) -> ExecOutcome:
        """Run ``bash -c command`` in ``/app``; the sandbox's processes are killed at ``timeout``.

        ``checker=True`` runs it as the task's checker: a fresh empty ``HOME`` and ``/tmp``, the
        environment of :func:`checker_environment` (nothing the agent set), ``/tests`` and ``/logs``.
        """
        with self._lock:
            if self.root is None:
                raise RuntimeError("the sandbox was stopped")
            plan = current_plan()
            limits = Limits.for_run(timeout, self.memory_mb, self.max_processes, self.file_size_mb)
            if checker:
                self._checks += 1
                fresh = f"checker-{self._checks}"
                for sub in ("", "/tmp", "/home"):
                    os.mkdir(str(self.root / fresh) + sub, 0o755)
                    if self.owner is not None:
                        os.chown(str(self.root / fresh) + sub, *self.owner)
                env = checker_environment()
            else:
                fresh = None
                env = {"PATH": SANDBOX_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb",
                       "USER": "nobody"}
            with run_cgroup(self.memory_mb * MIB, self.max_processes) as cgroup, tempfile.TemporaryFile() as out, \
                    tempfile.TemporaryFile() as err, StdinFile(stdin) as inp:
                start = time.monotonic()
                try:
                    proc = subprocess.Popen(
                        self.argv(command, checker=fresh), cwd="/", env=env, stdin=inp, stdout=out, stderr=err,
                        close_fds=True, start_new_session=True,
                        **spawn_options(plan, self.owner, limits, cgroup=cgroup))
                finally:
                    if cgroup is not None:
                        cgroup.close()
                try:
                    exited = wait_unreaped(proc, timeout)
                finally:
                    kill_group(proc.pid)
                    returncode = int(proc.wait())
                    if cgroup is not None:
                        cgroup.kill_all()
                seconds = time.monotonic() - start
                stdout, stderr = read_capped(out, MAX_OUTPUT), read_capped(err, MAX_OUTPUT)
                oom = cgroup is not None and cgroup.oom_kills() > 0
        from pytest_jeval.core.redact import redact

        if oom:
            stderr += "\njeval: the sandbox's processes went over its memory limit; one was killed\n"
        return ExecOutcome(returncode, redact(stdout), redact(stderr), not exited, seconds)

    def copy_in(self, source: Path, dest: str) -> None:
        """Copy a host file or folder into ``/app``, ``/tmp``, ``/tests`` or ``/logs`` (links are refused);
        what is copied belongs to the sandbox's uid."""
        with self._lock:
            target = self._host(dest)
            existed = os.path.lexists(target)
            _copy_tree(Path(source), target)
            if self.owner is not None and not existed:
                chown_path(str(target), *self.owner)

    def copy_out(self, source: str, dest: Path) -> None:
        """Copy a regular file of the sandbox to the host (a link or special file is refused)."""
        with self._lock:
            path = self._host(source)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ValueError(f"{source} is not a regular file")
                with os.fdopen(os.dup(fd), "rb") as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
            finally:
                os.close(fd)

    def read_text(self, source: str, limit: int = 4096) -> str | None:
        """The first ``limit`` bytes of a regular file of the sandbox as text, or None when there is none
        (a missing file, a link, a folder, a FIFO: never followed, never blocking)."""
        with self._lock:
            try:
                fd = os.open(self._host(source), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except (OSError, ValueError):
                return None
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                return os.read(fd, limit).decode("utf-8", "replace")
            finally:
                os.close(fd)

    def stop(self) -> None:
        """Delete the sandbox's files (no process of it is running between execs) and release its uid."""
        with self._lock:
            root, self.root = self.root, None
            with _live_lock:
                _live.discard(self)
        if root is not None:
            try:
                remove_workspace_dir(root)
            finally:
                self._stack.close()


def _copy_tree(source: Path, target: Path) -> None:
    """Copy files (mode bits kept, set-id bits dropped) and folders; links and special files are refused."""
    info = os.lstat(source)
    if stat.S_ISDIR(info.st_mode):
        target.mkdir(mode=0o755, exist_ok=True)
        for child in sorted(os.listdir(source)):
            _copy_tree(source / child, target / child)
    elif stat.S_ISREG(info.st_mode):
        if os.path.lexists(target):
            raise ValueError(f"{target.name} already exists in the sandbox")
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, stat.S_IMODE(info.st_mode) & 0o777 | 0o600)
    else:
        raise ValueError(f"{source} is a link or special file; task folders hold only files and folders")


class BubblewrapProvider(Provider):
    """The default provider: the cached root filesystem under bubblewrap (see the module docstring)."""

    name = "bubblewrap"
    supported = True

    def _bwrap(self) -> str:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise ProviderUnavailable(
                "terminal tasks need bubblewrap: apt-get install -y bubblewrap (or make bubblewrap)")
        return bwrap

    def check(self) -> None:
        """bwrap is installed, the project's sandbox uses it, and the root filesystem is built."""
        from pytest_jeval.sandbox.shell.rootfs import RootfsError, require_rootfs

        self._bwrap()
        plan = current_plan()
        if plan.bwrap is None:
            raise ProviderUnavailable(
                f"terminal tasks need the bubblewrap sandbox, but this machine's sandbox is {plan.name!r} "
                "(bwrap cannot create namespaces here; see docs/sandbox.md)")
        try:
            require_rootfs()
        except RootfsError as exc:
            raise ProviderUnavailable(str(exc)) from None

    def start(self, environment: Path | None) -> Sandbox:
        """A sandbox with the files of ``environment`` copied into ``/app``."""
        from pytest_jeval.sandbox.shell.rootfs import require_rootfs

        box = BubblewrapSandbox(self._bwrap(), require_rootfs())
        try:
            if environment is not None:
                for child in sorted(os.listdir(environment)):
                    box.copy_in(environment / child, f"{TASK_DIR}/{child}")
        except BaseException:
            box.stop()
            raise
        return box


# -------------------------------------------------------------------------------------- docker (untested)

DOCKER_OPT_IN = "JEVAL_TERMINAL_DOCKER"


class DockerSandbox(Sandbox):
    """UNTESTED: a container built from a task's ``environment/Dockerfile``."""

    def __init__(self, docker: str, container: str) -> None:
        self.docker, self.container = docker, container
        self.stopped = False

    def exec(self, command: str, *, timeout: float, stdin: str | None = None, checker: bool = False) -> ExecOutcome:
        """``docker exec`` (the command is killed by ``timeout`` on the host side); a checker gets the
        harness's environment and a fresh home."""
        start = time.monotonic()
        env_args = [a for k, v in checker_environment().items() for a in ("-e", f"{k}={v}")] if checker else []
        if checker:
            command = 'export HOME="$(mktemp -d)"; ' + command
        try:
            proc = subprocess.run([self.docker, "exec", "-i", *env_args, "-w", self.workdir, self.container, "bash",
                                   "-c", command], input=(stdin or "").encode(), capture_output=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"").decode("utf-8", "replace")
            return ExecOutcome(124, out, "", True, time.monotonic() - start)
        return ExecOutcome(proc.returncode, proc.stdout.decode("utf-8", "replace")[-MAX_OUTPUT:],
                           proc.stderr.decode("utf-8", "replace")[-MAX_OUTPUT:], False, time.monotonic() - start)

    def copy_in(self, source: Path, dest: str) -> None:
        """``docker cp``."""
        subprocess.run([self.docker, "cp", str(source), f"{self.container}:{dest}"], check=True, capture_output=True)

    def copy_out(self, source: str, dest: Path) -> None:
        """``docker cp``."""
        subprocess.run([self.docker, "cp", f"{self.container}:{source}", str(dest)], check=True, capture_output=True)

    def stop(self) -> None:
        """``docker rm -f``."""
        if not self.stopped:
            self.stopped = True
            subprocess.run([self.docker, "rm", "-f", self.container], check=False, capture_output=True)


class DockerProvider(Provider):
    """UNTESTED sketch: ``docker build`` of ``environment/``, then ``docker run`` without network.

    Refused unless ``JEVAL_TERMINAL_DOCKER=untested`` is set: nothing here is run by the test suite.
    """

    name = "docker"
    supported = False

    def check(self) -> None:
        """Refused without the opt-in; docker must be installed."""
        if os.environ.get(DOCKER_OPT_IN) != "untested":
            raise ProviderUnavailable(
                f'sandbox = "docker" is not supported (it is untested here); set {DOCKER_OPT_IN}=untested to try it '
                'anyway, or use the default sandbox = "bubblewrap"')
        if shutil.which("docker") is None:
            raise ProviderUnavailable("sandbox = \"docker\" needs the docker CLI and a daemon (docs.docker.com)")

    def start(self, environment: Path | None) -> Sandbox:
        """Build the image (tag by the folder's hash) and start a container that sleeps."""
        self.check()
        docker = shutil.which("docker") or "docker"
        if environment is None or not (environment / "Dockerfile").is_file():
            raise ValueError("the docker provider needs environment/Dockerfile")
        tag = f"jeval-terminal-{abs(hash(str(environment.resolve()))):x}"
        subprocess.run([docker, "build", "-q", "-t", tag, str(environment)], check=True, capture_output=True)
        proc = subprocess.run([docker, "run", "-d", "--network", "none", tag, "sleep", "infinity"],
                              check=True, capture_output=True, text=True)
        return DockerSandbox(docker, proc.stdout.strip())


def _check(name: str, member: Any) -> type[Provider]:
    if not (isinstance(member, type) and issubclass(member, Provider)):
        raise TypeError(f"{member!r} is not a Provider subclass")
    return member


SANDBOXES: Registry[type[Provider]] = Registry("sandboxes", kind="sandbox provider", check=_check, builtins={
    "bubblewrap": "pytest_jeval.sandbox.shell.providers:BubblewrapProvider",
    "docker": "pytest_jeval.sandbox.shell.providers:DockerProvider",
})
"""Sandbox providers for shell tasks by name (``sandbox = "..."`` in a suite, or a task index): the
built-ins, then the ``pytest_jeval.sandboxes`` entry points (``name = "package.module:ProviderClass"``)."""


def get_provider(name: str) -> Provider:
    """The provider called ``name``; ValueError (naming the registered ones) for an unknown one."""
    try:
        return SANDBOXES.get(name)()
    except RegistryError as exc:
        raise ValueError(str(exc)) from None
