"""The per-episode workspace: a private directory the file tools and the sandbox share.

An episode's workspace is made from the sample's attachments before the first turn
(:func:`make_workspace`) and removed afterwards (:func:`remove_workspace`). The file
tools reach it only through :func:`confine` and :func:`open_in`: a path the model gives
must name something inside the workspace once every link is resolved, and the file is
then opened one directory at a time with ``O_NOFOLLOW`` along that resolved path, so a
link planted between the check and the open (by a sandboxed program) is refused, never
followed. See docs/agent-tools.md.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pytest_jeval.agents.tool import ToolError
from pytest_jeval.sandbox.plans import SANDBOX_HOME
from pytest_jeval.sandbox.workdir import make_workspace_dir, remove_workspace_dir

__all__ = ["confine", "make_workspace", "open_in", "relative_name", "remove_workspace"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1 << 20


def make_workspace(files: Sequence[Path | str] = (), *, parent: str | None = None) -> Path:
    """A fresh private (0700) directory for one episode, with ``files`` copied in by base name.

    The directory is made below ``<parent>/jeval-workspace-<euid>`` (a 0711 directory of
    the runner; ``parent`` defaults to ``/tmp`` as root, the temporary directory otherwise).
    Each file's content is copied (links in the source path are followed; the copy is a new
    regular file, never a link). Raises ValueError, before anything is made, when two files
    share a base name, and when a file is missing or not a regular file.
    """
    sources: dict[str, Path] = {}
    for item in files:
        src = Path(item)
        name = src.name
        if name in ("", ".", ".."):
            raise ValueError(f"attachment {str(item)!r} has no file name")
        if name in sources:
            raise ValueError(
                f"two attachments have the base name {name!r} ({sources[name]} and {src}); "
                "a workspace holds each name once")
        if not src.is_file():
            raise ValueError(f"attachment {src} {'is not a regular file' if src.exists() else 'does not exist'}")
        sources[name] = src
    workspace = make_workspace_dir(parent)
    try:
        for name, src in sources.items():
            _copy_in(workspace, name, src)
    except BaseException:
        remove_workspace_dir(workspace)
        raise
    return Path(workspace)


def _copy_in(workspace: str, name: str, src: Path) -> None:
    fd_in = os.open(src, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd_in).st_mode):
            raise ValueError(f"attachment {src} is not a regular file")
        dir_fd = os.open(workspace, _DIR_FLAGS)
        try:
            fd_out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        try:
            while chunk := os.read(fd_in, _COPY_CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd_out, view):]
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def remove_workspace(path: Path | str) -> None:
    """Delete the workspace and everything in it, never following a link (missing: fine); its file
    system is unmounted where it has one."""
    remove_workspace_dir(os.fspath(path))


def confine(workspace: Path, path: str) -> Path:
    """The path inside ``workspace`` that ``path`` names, with every link resolved.

    ``path`` is relative to the workspace, or absolute below it (``/sandbox/...``, the
    workspace as sandboxed programs see it under bubblewrap, is accepted too). Raises
    :class:`ToolError` when it contains a NUL byte or resolves outside the workspace
    (``..``, another absolute path, a link pointing out).
    """
    if not isinstance(path, str):
        raise ToolError(f"path must be a string, not {type(path).__name__}")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    root = os.path.realpath(workspace)
    given = os.path.abspath(workspace)
    rel = path
    if os.path.isabs(rel):
        for base in (given, root, SANDBOX_HOME):
            if rel == base or rel.startswith(base.rstrip("/") + "/"):
                rel = rel[len(base):].lstrip("/")
                break
        else:
            raise ToolError(f"{path!r} is outside the workspace (give a path relative to it)")
    resolved = os.path.realpath(os.path.join(root, rel))
    if resolved != root and not resolved.startswith(root.rstrip("/") + "/"):
        raise ToolError(f"{path!r} is outside the workspace")
    return Path(resolved)


def relative_name(workspace: Path, resolved: Path) -> str:
    """How the model should see ``resolved`` (a result of :func:`confine`): relative, ``.`` for the root."""
    rel = os.path.relpath(resolved, os.path.realpath(workspace))
    return "." if rel == "." else rel


@contextmanager
def open_in(workspace: Path, path: str, flags: int = os.O_RDONLY, *, create_parents: bool = False,
            mode: int = 0o600) -> Iterator[tuple[int, str]]:
    """Open what ``path`` names inside ``workspace`` (``flags`` for the last component).

    Yields ``(fd, name)``: the descriptor and the path relative to the workspace. The
    components are opened one at a time with ``O_NOFOLLOW`` along the resolved path, so
    a link that appeared after :func:`confine` is refused. ``create_parents`` makes
    missing directories (0700) on the way. Errors are :class:`ToolError`.
    """
    resolved = confine(workspace, path)
    name = relative_name(workspace, resolved)
    parts = [] if name == "." else name.split("/")
    try:
        fd = os.open(os.path.realpath(workspace), _DIR_FLAGS)
    except OSError as exc:
        raise ToolError(f"the workspace cannot be opened: {exc.strerror}") from exc
    root = os.fstat(fd)
    owner = (root.st_uid, root.st_gid) if root.st_uid != os.geteuid() and os.geteuid() == 0 else None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                if last:
                    child = os.open(part, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=fd)
                else:
                    child = _open_subdir(fd, part, create_parents)
            except OSError as exc:
                raise _tool_error(exc, path, _is_link(fd, part)) from exc
            os.close(fd)
            fd = child
            if owner is not None:  # what the harness makes belongs to the workspace's sandboxed owner
                _give(fd, owner)
        if not parts and flags & (os.O_WRONLY | os.O_RDWR):
            raise ToolError(f"{path!r} is a directory")
        yield fd, name
    finally:
        os.close(fd)


def _give(fd: int, owner: tuple[int, int]) -> None:
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) != owner and (stat.S_ISDIR(info.st_mode) or info.st_nlink <= 1):
        os.fchown(fd, *owner)


def _open_subdir(fd: int, part: str, create: bool) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
        os.mkdir(part, 0o700, dir_fd=fd)
        return os.open(part, _DIR_FLAGS, dir_fd=fd)


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _tool_error(exc: OSError, path: str, link: bool) -> ToolError:
    if exc.errno == errno.ENOENT:
        return ToolError(f"{path!r} does not exist")
    if link or exc.errno == errno.ELOOP:
        return ToolError(f"{path!r} changed into a link while it was opened; refused")
    if exc.errno == errno.ENOTDIR:
        return ToolError(f"a component of {path!r} is not a directory")
    if exc.errno == errno.EISDIR:
        return ToolError(f"{path!r} is a directory")
    return ToolError(f"{path!r}: {exc.strerror or exc}")
