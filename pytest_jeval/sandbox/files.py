"""Run directories and files that sandboxed code can never turn against the runner.

The runner may be root. Every directory a sandboxed program can write is made
here, and the runner touches it only in ways a planted link cannot redirect:

* run directories are made with ``mkdtemp`` (mode 0700) inside a base directory
  owned by the runner with mode 0711 (others may enter it, never list or write it);
  an existing base directory that is a link, is owned by someone else or is
  writable by others is refused;
* files are created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to a directory
  descriptor, before the sandboxed program starts;
* a run directory is removed by descending through directory descriptors opened
  with ``O_NOFOLLOW``: links are unlinked, never followed, and permissions are
  repaired only on directories proven (``fstat`` of an ``O_PATH`` descriptor) to
  be the ones found in the tree.
"""

from __future__ import annotations

import os
import stat
import tempfile


class UnsafeDirectoryError(RuntimeError):
    """A directory the sandbox relies on is a link, foreign-owned or writable by others."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def private_base_dir(parent: str | None = None, name: str = "jeval-sandbox") -> str:
    """``<parent>/<name>-<euid>`` (``parent`` defaults to the temporary directory):
    owned by the runner, mode 0711, created when missing."""
    path = os.path.join(parent or tempfile.gettempdir(), f"{name}-{os.geteuid()}")
    try:
        os.mkdir(path, 0o711)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise UnsafeDirectoryError(
            f"{path} is not a directory owned by uid {os.geteuid()} and closed to writes by others; remove it")
    if stat.S_IMODE(info.st_mode) != 0o711:
        os.chmod(path, 0o711)
    return path


def make_run_dir(base: str, owner: tuple[int, int] | None) -> str:
    """A fresh 0700 directory under ``base``, chowned to ``owner``."""
    path = tempfile.mkdtemp(prefix="run-", dir=base)
    if owner is not None:
        os.chown(path, *owner, follow_symlinks=False)
    return path


def write_new_file(directory: str, name: str, data: bytes, owner: tuple[int, int] | None = None) -> str:
    """Create ``directory/name`` (must not exist, never through a link) with ``data``; its path."""
    if "/" in name or name in (".", ".."):
        raise ValueError(f"not a plain file name: {name!r}")
    dir_fd = os.open(directory, _DIR_FLAGS)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if owner is not None:
                os.fchown(fd, *owner)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)
    return os.path.join(directory, name)


def remove_tree(path: str) -> None:
    """Delete ``path`` and everything in it without following any link; OSErrors propagate.

    A missing ``path`` is fine. Directories the sandboxed program made unreadable are
    opened again after ``chmod`` through their own ``O_PATH`` descriptor.
    """
    parent, name = os.path.split(os.path.abspath(path))
    parent_fd = os.open(parent, _DIR_FLAGS)
    try:
        try:
            info = os.lstat(name, dir_fd=parent_fd)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            _remove_dir_in(parent_fd, name)
        else:
            os.unlink(name, dir_fd=parent_fd)
    finally:
        os.close(parent_fd)


def _open_dir(parent_fd: int, name: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        # Only reachable when not root: the owner (us) may repair the mode. O_PATH with
        # O_NOFOLLOW pins the very directory; chmod goes through that descriptor.
        if not hasattr(os, "O_PATH"):  # pragma: no cover - not Linux
            raise
        pin = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            if not stat.S_ISDIR(os.fstat(pin).st_mode):
                raise
            os.chmod(f"/proc/self/fd/{pin}", stat.S_IRWXU)
        finally:
            os.close(pin)
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)


def _remove_dir_in(parent_fd: int, name: str) -> None:
    fd = _open_dir(parent_fd, name)
    try:
        os.fchmod(fd, stat.S_IRWXU)  # a directory the program made read-only
        with os.scandir(fd) as entries:
            children = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        for child, is_dir in children:
            if is_dir:
                _remove_dir_in(fd, child)
            else:
                os.unlink(child, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)
