"""Resource limits and the scrubbed environment for sandboxed child processes.

The limits are applied with ``setrlimit`` in a ``preexec_fn`` (after ``fork``,
before ``exec``), so they bind the sandbox launcher and everything it execs or
forks. The ``preexec_fn`` only calls ``resource.setrlimit`` and ``prctl`` (a
C function resolved beforehand) with values computed in the parent: no imports,
no locks, nothing that could deadlock in a child forked from a multi-threaded
parent. ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` makes the launcher die with the
thread that started it, however the runner ends (SIGTERM, SIGKILL, a crash).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import os
import signal
import stat
import sys
from collections.abc import Callable, Sequence

try:  # POSIX only; on other platforms the sandbox runs without rlimits.
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

MIB = 1024 * 1024

#: Environment variables copied from the parent. Nothing else is inherited:
#: API keys, tokens, cloud credentials, proxies, ``PYTHON*`` settings all stay out.
PASSED_ENV_VARS = ("PATH", "LANG")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_LANG = "C.UTF-8"


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-process resource limits for one sandboxed run."""

    cpu_seconds: int
    """RLIMIT_CPU soft limit (SIGXCPU); the hard limit is one second higher (SIGKILL)."""
    memory_bytes: int
    """RLIMIT_AS: address space per process."""
    max_processes: int
    """RLIMIT_NPROC: processes and threads of the (sandbox) user, counted system-wide."""
    file_size_bytes: int
    """RLIMIT_FSIZE: largest file the child may write (also bounds captured output)."""
    open_files: int = 256
    """RLIMIT_NOFILE."""

    @classmethod
    def for_run(cls, timeout: float, memory_mb: int, max_processes: int, file_size_mb: int) -> Limits:
        """Limits matching a run's wall-clock ``timeout`` and sizes in MiB."""
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if memory_mb <= 0 or max_processes <= 0 or file_size_mb <= 0:
            raise ValueError("memory_mb, max_processes and file_size_mb must be positive")
        return cls(
            cpu_seconds=max(1, math.ceil(timeout)) + 1,
            memory_bytes=int(memory_mb) * MIB,
            max_processes=int(max_processes),
            file_size_bytes=int(file_size_mb) * MIB,
        )

    def rlimit_pairs(self) -> list[tuple[int, tuple[int, int]]]:
        """``(resource, (soft, hard))`` pairs for every limit this platform knows."""
        if resource is None:  # pragma: no cover - Windows
            return []
        wanted = [
            ("RLIMIT_CPU", (self.cpu_seconds, self.cpu_seconds + 1)),
            ("RLIMIT_AS", (self.memory_bytes, self.memory_bytes)),
            ("RLIMIT_NPROC", (self.max_processes, self.max_processes)),
            ("RLIMIT_FSIZE", (self.file_size_bytes, self.file_size_bytes)),
            ("RLIMIT_NOFILE", (self.open_files, self.open_files)),
            ("RLIMIT_CORE", (0, 0)),
        ]
        pairs = []
        for name, (soft, hard) in wanted:
            res = getattr(resource, name, None)
            if res is None:
                continue
            current_hard = resource.getrlimit(res)[1]
            if current_hard != resource.RLIM_INFINITY:
                # An unprivileged process may not raise its hard limit.
                soft, hard = min(soft, current_hard), min(hard, current_hard)
            pairs.append((res, (soft, hard)))
        return pairs


PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
START_FAILED = 125
"""Exit status of a launcher that could not apply its confinement (the reason is on its stderr)."""


def _load_libc() -> ctypes.CDLL | None:
    """libc (Linux), resolved once in the parent; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no libc
        return None


_LIBC = _load_libc()
_PRCTL: Callable[..., int] | None = getattr(_LIBC, "prctl", None)


def make_preexec(limits: Limits | None, *, identity: tuple[int, int] | None = None,
                 cgroup_fds: Sequence[int] = (), staged: Sequence[tuple[str, str]] = ()) -> Callable[[], None]:
    """A ``preexec_fn`` that confines the child before it execs the launcher.

    In order: it joins the run's cgroups (``cgroup_fds``: ``cgroup.procs`` files the runner
    opened), bind-mounts each staged ``(source, target)`` in a mount namespace of its own (root
    only, see :mod:`pytest_jeval.sandbox.bwrap`), drops to ``identity`` (uid, gid; no
    supplementary groups), arms the parent-death signal (a credential change clears it, so it
    comes after the drop) and applies ``limits``. Fork-safe: only system calls on values
    computed in the parent, no imports, no locks. A step that fails ends the child with
    :data:`START_FAILED` and a line on its stderr.
    """
    pairs = limits.rlimit_pairs() if limits is not None and resource is not None else []
    setrlimit = resource.setrlimit if resource is not None else None
    prctl, parent, getppid, exit_now, write = _PRCTL, os.getpid(), os.getppid, os._exit, os.write
    sigkill = int(signal.SIGKILL)
    fds = list(cgroup_fds)
    mounts = [(src.encode("utf-8", "surrogateescape"), dst.encode("utf-8", "surrogateescape")) for src, dst in staged]
    unshare: Callable[..., int] | None = getattr(_LIBC, "unshare", None) if mounts else None
    mount: Callable[..., int] | None = getattr(_LIBC, "mount", None) if mounts else None
    if mounts and (unshare is None or mount is None):
        raise OSError("staged binds need Linux (unshare, mount)")
    setgroups, setresgid, setresuid = os.setgroups, os.setresgid, os.setresuid

    def fail(message: bytes) -> None:
        try:
            write(2, b"jeval sandbox: " + message + b"\n")
        finally:
            exit_now(START_FAILED)

    def preexec() -> None:
        for fd in fds:
            try:
                write(fd, b"0")
            except OSError:
                fail(b"could not join the run's cgroup")
        if mounts and unshare is not None and mount is not None:
            if unshare(CLONE_NEWNS) != 0 or mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                fail(b"could not make a private mount namespace for staged binds")
            for src, dst in mounts:
                if mount(src, dst, None, MS_BIND | MS_REC, None) != 0:
                    fail(b"could not stage " + src)
        if identity is not None:
            try:
                setgroups([])
                setresgid(identity[1], identity[1], identity[1])
                setresuid(identity[0], identity[0], identity[0])
            except OSError:
                fail(b"could not drop privileges")
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
            if getppid() != parent:  # the runner died before the signal was armed
                exit_now(START_FAILED)
        if setrlimit is None:  # pragma: no cover - Windows
            return
        for res, values in pairs:
            try:
                setrlimit(res, values)
            except (ValueError, OSError):
                # e.g. RLIMIT_AS on macOS; the wall-clock timeout still applies.
                pass

    return preexec


def sandbox_python(dropping_privileges: bool = False) -> str:
    """The interpreter for sandboxed code: ``$JEVAL_SANDBOX_PYTHON`` or ``sys.executable``.

    After a uid drop it must be executable (and its libraries readable) by the
    unprivileged user. When ``dropping_privileges`` and ``sys.executable`` lies
    below a directory others cannot enter (``/root/.pyenv``), the system Python of
    the same version (``/usr/bin/python3.X``, ``/usr/local/bin/python3.X``) is used
    instead when one exists and is world-accessible.
    """
    forced = os.environ.get("JEVAL_SANDBOX_PYTHON")
    if forced:
        return forced
    if not dropping_privileges:
        return sys.executable
    real = os.path.realpath(sys.executable)
    if world_accessible(real) and world_accessible(os.path.realpath(sys.base_prefix)):
        return real
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if os.path.exists(candidate) and world_accessible(os.path.realpath(candidate)):
            return candidate
    return sys.executable


def world_accessible(path: str) -> bool:
    """True when every directory above ``path`` can be entered by others (``o+x``)."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    while True:
        try:
            mode = os.stat(parent).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
        if parent == os.path.dirname(parent):
            return True
        parent = os.path.dirname(parent)


def sandbox_base_dir(dropping_privileges: bool) -> str | None:
    """Where run directories are made: ``/tmp`` when the child runs as another user
    (the parent's ``$TMPDIR`` may sit below a directory that user cannot enter)."""
    if dropping_privileges and os.path.isdir("/tmp"):
        return "/tmp"
    return None


def scrubbed_env(home: str, tmpdir: str | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed child: PATH, LANG, HOME and TMPDIR.

    ``HOME`` and ``TMPDIR`` point into the run's private temporary directory
    (``TMPDIR`` to ``tmpdir`` when given: the private ``/tmp`` of a bubblewrap run).
    Nothing else from the parent is passed on (no ``*_KEY``, ``*_TOKEN``, ...).
    """
    env = {name: os.environ[name] for name in PASSED_ENV_VARS if os.environ.get(name)}
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", DEFAULT_LANG)
    env["HOME"] = home
    env["TMPDIR"] = tmpdir or home
    return env
