"""Resource limits and the scrubbed environment for sandboxed child processes.

The limits are applied with ``setrlimit`` in a ``preexec_fn`` (after ``fork``,
before ``exec``), so they bind the sandbox launcher and everything it execs or
forks. The ``preexec_fn`` only calls ``resource.setrlimit`` with values computed
beforehand in the parent: no imports, no locks, nothing that could deadlock in a
child forked from a multi-threaded parent.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Callable

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


def make_preexec(limits: Limits) -> Callable[[], None]:
    """A ``preexec_fn`` that applies ``limits`` in the child (fork-safe: only setrlimit)."""
    pairs = limits.rlimit_pairs()
    if resource is None:  # pragma: no cover - Windows
        return lambda: None
    setrlimit = resource.setrlimit

    def preexec() -> None:
        for res, values in pairs:
            try:
                setrlimit(res, values)
            except (ValueError, OSError):
                # e.g. RLIMIT_AS on macOS; the wall-clock timeout still applies.
                pass

    return preexec


def sandbox_python() -> str:
    """The interpreter for sandboxed code: ``$JEVAL_SANDBOX_PYTHON`` or ``sys.executable``.

    After a uid drop it must be executable (and its libraries readable) by the
    unprivileged user; point the variable at a system Python when it is not.
    """
    return os.environ.get("JEVAL_SANDBOX_PYTHON") or sys.executable


def sandbox_base_dir(dropping_privileges: bool) -> str | None:
    """Where run directories are made: ``/tmp`` when the child runs as another user
    (the parent's ``$TMPDIR`` may sit below a directory that user cannot enter)."""
    if dropping_privileges and os.path.isdir("/tmp"):
        return "/tmp"
    return None


def scrubbed_env(home: str) -> dict[str, str]:
    """The whole environment of a sandboxed child: PATH, LANG, HOME and TMPDIR.

    ``HOME`` and ``TMPDIR`` point into the run's private temporary directory.
    Nothing else from the parent is passed on (no ``*_KEY``, ``*_TOKEN``, ...).
    """
    env = {name: os.environ[name] for name in PASSED_ENV_VARS if os.environ.get(name)}
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", DEFAULT_LANG)
    env["HOME"] = home
    env["TMPDIR"] = home
    return env
