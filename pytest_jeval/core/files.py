"""Creating the runner's files without ever following a link it did not create.

Every results file (JSONL, summaries, ``summary.json``, the lock, the HTML report,
response-cache entries) is written through this module:

* a whole file is written to a fresh temporary name in the same directory, opened
  with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (so no existing file, link or not, is ever
  opened), then renamed over the target (a rename replaces a link at the target
  name, it does not write through it);
* an appended file is opened with ``O_NOFOLLOW`` and refused unless it is a plain
  file with a single link;
* directories the runner creates are ``0o755`` (never world-writable) and, below a
  directory the user named, never symbolic links.

The runner may run as root next to a sandbox that can write shared directories:
a link planted there must never redirect one of its writes.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "UnsafePathError", "make_dir", "open_append", "read_bytes", "refuse_special",
           "write_atomic"]

DIR_MODE = 0o755
"""Mode of the directories the runner creates (before the umask, which can only remove bits)."""
FILE_MODE = 0o644
"""Mode of the files the runner creates."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO must not block the open


class UnsafePathError(OSError):
    """A results path that is a link, or not a plain file: the runner does not write through it."""


def _refuse(path: Path, what: str) -> UnsafePathError:
    return UnsafePathError(errno.ELOOP, f"{path}: {what}; pytest-jeval does not write through it")


def make_dir(path: Path, *, allow_link: bool = True) -> list[Path]:
    """Create ``path`` and its missing parents with mode ``0o755``; return those it created.

    ``allow_link=False`` refuses a ``path`` that exists as a symbolic link (for the
    runner's own subdirectories; a directory the user named may be a link).
    """
    created: list[Path] = []
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            continue  # made by a concurrent process meanwhile; checked below
        created.append(directory)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        if not allow_link:
            raise _refuse(path, "is a symbolic link")
        info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"{path} is not a directory")
    return created


def _check_plain(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refuse(path, "is not a plain file")
    if info.st_nlink > 1:
        os.close(fd)
        raise _refuse(path, f"has {info.st_nlink} hard links")


def _open(path: Path, flags: int, mode: int = FILE_MODE) -> int:
    try:
        fd = os.open(path, flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and os.path.islink(path)):
            raise _refuse(path, "is a symbolic link") from None
        raise
    _check_plain(fd, path)
    return fd


def open_append(path: Path) -> int:
    """A read-write ``O_APPEND`` descriptor on ``path`` (created ``0o644`` when missing)."""
    return _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)


def read_bytes(path: Path) -> bytes | None:
    """The content of the plain file ``path``, or None when there is none; links are refused."""
    try:
        fd = _open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - write(2) reports errors by raising
            raise OSError(errno.EIO, "short write")
        view = view[written:]


def refuse_special(path: Path) -> None:
    """Raise :class:`UnsafePathError` when ``path`` exists and is neither a plain file nor a link: a device
    node, a FIFO, a socket or a folder is never replaced (``-o /dev/null`` would replace the machine's)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket"
                if stat.S_ISSOCK(info.st_mode) else "not a regular file")
        raise UnsafePathError(errno.EEXIST, f"{path} is {kind}, not a regular file: pytest-jeval does not replace "
                                            "it; choose another output path")


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: a fresh ``O_EXCL`` temporary file in its directory, then a rename.

    A reader sees the old file or the new one, never a part; a killed run leaves at
    most a ``.*.tmp`` file. ``durable`` flushes the data to disk before the rename.
    A failed write (disk full) removes the temporary file and raises. An existing ``path`` that is
    not a plain file (a device node, a FIFO, a socket, a folder) is refused (:class:`UnsafePathError`)
    before anything is written, and again just before the rename.
    """
    refuse_special(path)
    for _ in range(16):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 16 collisions of 48 random bits
        raise FileExistsError(errno.EEXIST, f"no free temporary name next to {path}")
    try:
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        refuse_special(path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
