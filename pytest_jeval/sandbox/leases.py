"""Leases: what a run made on the machine (a cgroup, a mounted workspace), found again after a kill.

A lease is a file ``<tmp>/jeval-sandbox-<euid>/leases/<token>`` that its process holds an
exclusive ``flock`` on for as long as the things it names live; the file lists them, one
JSON object a line (``{"cgroup": path}``, ``{"workspace": path}``). The kernel drops the lock
when the holder dies, however it dies, so a lease whose lock can be taken belongs to a run
that is gone: :func:`sweep` (run once per process, before its first lease) removes what such
leases name, then the lease. Things made without a lease (by older versions) are never touched.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import threading
from collections.abc import Callable

from pytest_jeval.sandbox.files import UnsafeDirectoryError, private_base_dir

__all__ = ["Lease", "leases_dir", "register_cleaner", "sweep", "take_lease"]

_lock = threading.Lock()
_swept = False
_cleaners: dict[str, Callable[[str], None]] = {}


def leases_dir() -> str:
    """The runner's 0700 folder of leases."""
    base = private_base_dir("/tmp" if os.path.isdir("/tmp") else None)
    path = os.path.join(base, "leases")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise UnsafeDirectoryError(f"{path} must be a 0700 directory owned by uid {os.geteuid()}")
    return path


class Lease:
    """One held lease; :meth:`note` what it covers, :meth:`release` when that is gone."""

    def __init__(self, token: str, path: str, fd: int) -> None:
        self.token, self.path, self.fd = token, path, fd

    def note(self, kind: str, value: str) -> None:
        """Record that this lease covers ``value`` (a path) of ``kind`` (a registered cleaner's name)."""
        os.write(self.fd, (json.dumps({kind: value}) + "\n").encode("utf-8", "surrogateescape"))

    def release(self) -> None:
        """Delete the lease (what it covers must be gone) and drop its lock."""
        if self.fd < 0:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = -1


def register_cleaner(kind: str, cleaner: Callable[[str], None]) -> None:
    """``cleaner(value)`` removes a ``kind`` a dead run left behind (called by :func:`sweep`)."""
    _cleaners[kind] = cleaner


def take_lease() -> Lease:
    """A new lease, locked by this process (the first one of a process sweeps first)."""
    import fcntl

    global _swept
    with _lock:
        if not _swept:
            _swept = True
            sweep()
    folder = leases_dir()
    while True:
        token = secrets.token_hex(8)
        path = os.path.join(folder, token)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_APPEND, 0o600)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        return Lease(token, path, fd)


def sweep() -> list[str]:
    """Remove what the leases of dead runs name, then the leases; the values removed."""
    import fcntl

    folder = leases_dir()
    removed: list[str] = []
    for token in sorted(os.listdir(folder)):
        path = os.path.join(folder, token)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    continue  # held: its run is alive
                raise
            with os.fdopen(os.dup(fd), "rb") as fh:
                lines = fh.read().decode("utf-8", "surrogateescape").splitlines()
            done = True
            for line in reversed(lines):  # cgroups (noted last) before the workspaces their processes used
                try:
                    (kind, value), = json.loads(line).items()
                except (ValueError, AttributeError):
                    continue
                cleaner = _cleaners.get(kind)
                if cleaner is None:
                    done = False
                    continue
                try:
                    cleaner(str(value))
                    removed.append(str(value))
                except OSError:
                    done = False
            if done:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        finally:
            os.close(fd)
    return removed
