"""One run per output directory: ``.jeval.lock`` names the run that writes there.

The lock is an ``flock`` on the lock file, which the kernel drops when its holder
dies however it ends, so a lock left by a killed run is stale by construction and
the next run takes it over (and says so). The file's content names the holder:
pid, host, start time and command line, for the message a second run stops with.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from pytest_jeval.core.files import FILE_MODE, UnsafePathError
from pytest_jeval.core.paths import lock_path

__all__ = ["LockedError", "RunLock"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LockedError(Exception):
    """Another run holds the output directory's lock."""


def _describe(holder: dict[str, Any]) -> str:
    started = holder.get("started_at")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, (int, float)) else "?"
    return f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {when}: {holder.get('command', '?')}"


def _alive(pid: Any) -> bool | None:
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLock:
    """The lock of one output directory, held from session start to session end."""

    def __init__(self, output_dir: Path) -> None:
        self.path = lock_path(output_dir)
        self._fd: int | None = None
        self.took_over: str | None = None
        """A description of the stale holder this run replaced, if any."""

    def _read(self, fd: int) -> dict[str, Any]:
        try:
            data = json.loads(os.pread(fd, 65536, 0) or b"{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockedError` naming the run that holds it."""
        for _ in range(8):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, FILE_MODE)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafePathError(errno.ELOOP, f"{self.path}: is a symbolic link; "
                                          "pytest-jeval does not write through it") from None
                raise
            previous = self._read(fd)
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    os.close(fd)
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise
                    raise LockedError(self._locked_message(previous)) from None
            try:  # the file may have been removed (and recreated) by its holder meanwhile
                same = os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            break
        else:  # pragma: no cover - eight lost races in a row
            raise LockedError(f"the lock {self.path} keeps changing; another run is starting here")
        if previous.get("pid") is not None:
            self.took_over = _describe(previous)
        mine = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time(),
                "command": " ".join(["pytest", *sys.argv[1:]])[:500]}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(mine) + "\n").encode("utf-8"), 0)
        self._fd = fd

    def _locked_message(self, holder: dict[str, Any]) -> str:
        alive = _alive(holder.get("pid")) if holder.get("host") == socket.gethostname() else None
        state = " (that process is gone; a child it left behind still holds the lock)" if alive is False else ""
        who = _describe(holder) if holder else "a run that has not written its details yet"
        return (f"jeval: another run is writing to {self.path.parent}: {who}{state}. "
                "Wait for it to finish, or give this run another --jeval-output.")

    def release(self) -> None:
        """Remove the lock file and drop the lock."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None
