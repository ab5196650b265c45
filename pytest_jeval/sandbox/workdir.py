"""Sandboxed programs that work in a caller's directory (an agent's workspace).

:func:`run_python` runs code in a fresh run directory it deletes afterwards. An agent's
``python`` and ``bash`` tools instead work in the episode's *workspace*, a directory that
lives for the whole episode and that in-process file tools read and write between runs.
:func:`run_in_workspace` runs one program there under the same isolation plan, limits,
scrubbed environment and kill logic as every other sandboxed run; the workspace takes the
place of the run directory (with bubblewrap it is the only host directory mounted, at
``/sandbox``).

Plans that run the program as another uid (``uid-per-run``, ``uid-drop``) need the
workspace to be that uid's. A workspace made by :func:`make_workspace_dir` takes one uid for
the whole episode at its first run and is given to it once (the file tools give what they
create to the workspace's owner), so a run costs the same however many files the workspace
holds. Any other folder is chowned to the run's uid before the start and back to the runner
after the end. Both walk the tree through ``O_NOFOLLOW`` descriptors (links are never
followed; set-uid and set-gid bits are stripped; a file with more than one hard link is left
alone, as it may also live outside the workspace).

As root a workspace is a size-limited file system of its own (:mod:`.quota`): an episode's
programs cannot fill the host's disk or its inode table, and cannot hard-link host files.

The programs never have network: a plan without a network namespace is refused
(``SandboxError``), so the promise holds on every machine or the tool does not run.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import IO

from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.files import UnsafeDirectoryError, private_base_dir, remove_tree
from pytest_jeval.sandbox.limits import (
    MIB,
    Limits,
    sandbox_base_dir,
    sandbox_python,
    scrubbed_env,
    world_accessible,
)
from pytest_jeval.sandbox.plans import (
    SANDBOX_HOME,
    IsolationPlan,
    current_plan,
    quota_tags,
    run_identity,
    sandbox_layout,
    spawn_options,
)
from pytest_jeval.sandbox.process import (
    ExecResult,
    SandboxError,
    StdinFile,
    _classify,
    kill_group,
    read_capped,
    wait_unreaped,
)
from pytest_jeval.sandbox.quota import RunCgroup, mount_quota_fs, run_cgroup, unmount_quota_fs
from pytest_jeval.sandbox.uids import run_uid

__all__ = ["WORKSPACE_DISK_BYTES", "WORKSPACE_FILES", "make_room", "make_workspace_dir", "remove_workspace_dir",
           "run_in_workspace", "workspace_base_dir", "workspace_quota"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
WORKSPACE_DISK_BYTES = int(os.environ.get("JEVAL_WORKSPACE_MB", "256")) * MIB
"""Size of an episode's workspace file system (root only; ``JEVAL_WORKSPACE_MB``)."""
WORKSPACE_FILES = int(os.environ.get("JEVAL_WORKSPACE_FILES", "65536"))
"""Files and folders an episode's workspace may hold (root only; ``JEVAL_WORKSPACE_FILES``)."""


class _Workspace:
    """A workspace this module made: its quota and, once a run needed one, the uid it belongs to."""

    def __init__(self, mounted: bool, disk_bytes: int = 0, files: int = 0) -> None:
        self.mounted = mounted
        self.disk_bytes, self.files = disk_bytes, files
        self.owner: tuple[int, int] | None = None
        self.stack = contextlib.ExitStack()
        self.lock = threading.Lock()


_workspaces: dict[str, _Workspace] = {}
_registry_lock = threading.Lock()


def workspace_base_dir(parent: str | None = None) -> str:
    """The 0711 directory workspaces are made in: ``<parent>/jeval-workspace-<euid>``.

    ``parent`` defaults to ``/tmp`` when running as root (sandboxed programs then run as
    other uids, which must be able to enter it) and to the temporary directory otherwise.
    """
    if parent is None:
        parent = sandbox_base_dir(os.geteuid() == 0 if hasattr(os, "geteuid") else False)
    return private_base_dir(parent, "jeval-workspace")


def make_workspace_dir(parent: str | None = None, *, disk_bytes: int | None = None,
                       files: int | None = None) -> str:
    """A fresh, empty, private (0700) workspace directory with a unique name.

    As root it is a file system of its own, ``disk_bytes`` large (default
    :data:`WORKSPACE_DISK_BYTES`) holding at most ``files`` entries (default
    :data:`WORKSPACE_FILES`), removed with :func:`remove_workspace_dir` (or, after a kill, by
    the next run: see :mod:`pytest_jeval.sandbox.quota`).
    """
    path = tempfile.mkdtemp(prefix="ws-", dir=workspace_base_dir(parent))
    disk_bytes, files = disk_bytes or WORKSPACE_DISK_BYTES, files or WORKSPACE_FILES
    try:
        mounted = mount_quota_fs(path, size_bytes=disk_bytes, files=files)
    except OSError:
        os.rmdir(path)
        raise
    with _registry_lock:
        _workspaces[os.path.abspath(path)] = _Workspace(mounted, disk_bytes, files)
    return path


def make_room(path: str | os.PathLike[str], *, disk_bytes: int, files: int) -> bool:
    """Let a workspace hold at least ``disk_bytes`` and ``files`` entries: a size-limited one (root) grows to
    that (never shrinks); True when it did. A benchmark that copies a large tree in (a repository checkout)
    asks for the tree's size plus room to work."""
    from pytest_jeval.sandbox.quota import grow_quota_fs

    key = os.path.abspath(os.fspath(path))
    with _registry_lock:
        ws = _workspaces.get(key)
    if ws is None or not ws.mounted or (disk_bytes <= ws.disk_bytes and files <= ws.files):
        return False
    size, count = max(disk_bytes, ws.disk_bytes), max(files, ws.files)
    grow_quota_fs(key, size_bytes=size, files=count)
    ws.disk_bytes, ws.files = size, count
    return True


def workspace_quota(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a workspace with its own size-limited file system."""
    ws = _workspaces.get(os.path.abspath(os.fspath(path)))
    return ws is not None and ws.mounted


def remove_workspace_dir(path: str | os.PathLike[str]) -> None:
    """Delete a workspace (unmounting its file system, releasing its uid); missing: fine."""
    key = os.path.abspath(os.fspath(path))
    with _registry_lock:
        ws = _workspaces.pop(key, None)
    if ws is not None:
        ws.stack.close()
        if ws.mounted:
            unmount_quota_fs(key)
    remove_tree(key)


def workspace_owner(path: str, plan: IsolationPlan) -> tuple[tuple[int, int] | None, bool]:
    """``(owner, fixed)``: the uid a registered workspace's runs use for the whole episode (taken and
    given the tree once, at its first run), or ``(None, False)`` for a folder this module did not make."""
    ws = _workspaces.get(path)
    if ws is None:
        return None, False
    with ws.lock:
        if ws.owner is None and plan.drops_privileges:
            if plan.uid_per_run:
                uid = ws.stack.enter_context(run_uid(_plan_base(plan)))
                ws.owner = (uid, uid)
            else:
                ws.owner = plan.run_as
            if ws.owner is not None:
                chown_tree(path, *ws.owner)
        return ws.owner, True


def _plan_base(plan: IsolationPlan) -> str:
    from pytest_jeval.sandbox.plans import base_dir

    return base_dir(plan)


def run_in_workspace(
    workspace: str | os.PathLike[str],
    args: Sequence[str],
    *,
    executable: str | None = None,
    stdin: str | None = None,
    timeout: float = 10.0,
    memory_mb: int = 1024,
    max_processes: int = 64,
    file_size_mb: int = 64,
    max_output: int = 65_536,
    ro_paths: Sequence[str] = (),
) -> ExecResult:
    """Run one program sandboxed, with ``workspace`` as its writable working directory and home.

    ``executable`` is an absolute path of a program the sandbox contains (``/bin/bash``);
    None runs the sandbox's Python interpreter. ``args`` follow it. The program has no
    network, the limits of :func:`run_python` (``memory_mb`` and ``max_processes`` also bound
    all its processes together where cgroups are usable) and ``timeout`` seconds of wall-clock
    time, after which its whole process group is killed (``status == "timeout"``). ``stdout`` and
    ``stderr`` keep at most ``max_output`` bytes each and have keys redacted. With plans
    that translate "killed by a signal" from an exit status above 128, that translation is
    applied to the Python interpreter only (a shell's own 128+N statuses are reported as
    they are). Raises ``SandboxError`` when the program cannot be started at all (no
    network isolation on this machine, a workspace the run's uid cannot reach).

    A workspace made by :func:`make_workspace_dir` belongs to one uid for the whole episode, so
    a run costs the same however many files it holds; any other folder is given to the run's uid
    before it and back to the runner after it (a walk over its tree).

    ``ro_paths`` are host directories the program may read (and execute from) at the same
    path, never write: with bubblewrap each is bound read-only; with the other plans the host
    file system is visible anyway, and each must then be reachable by the run's uid. A missing
    path, or one the run's uid cannot enter, is a ``SandboxError``.
    """
    limits = Limits.for_run(timeout, memory_mb, max_processes, file_size_mb)
    plan = current_plan()
    if "netns" not in plan.tags:
        raise SandboxError(
            f"the sandbox on this machine ({plan.name}) has no network namespace, and workspace programs "
            "must run without network; install bubblewrap (apt-get install -y bubblewrap)")
    path = os.path.abspath(os.fspath(workspace))
    extra = [os.path.abspath(os.fspath(p)) for p in ro_paths]
    for ro in extra:
        if not os.path.isdir(ro):
            raise SandboxError(f"read-only path {ro} is not a directory")
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise SandboxError(f"workspace {path} is not usable: {exc}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise SandboxError(f"workspace {path} is not a directory")
    runner = (os.geteuid(), os.getegid())
    try:
        fixed_owner, fixed = workspace_owner(path, plan)
    except (OSError, UnsafeDirectoryError, RuntimeError) as exc:
        raise SandboxError(f"could not prepare workspace {path} for the sandbox: {exc}") from exc
    with contextlib.ExitStack() as stack:
        owner = fixed_owner if fixed else stack.enter_context(run_identity(plan))
        cgroup = stack.enter_context(run_cgroup(memory_mb * MIB, max_processes))
        if owner is not None and not world_accessible(path):
            raise SandboxError(f"workspace {path} lies below a directory uid {owner[0]} cannot enter")
        for ro in extra:
            if owner is not None and not world_accessible(os.path.join(ro, ".")):
                raise SandboxError(f"read-only path {ro} lies below a directory uid {owner[0]} cannot enter")
        try:
            if owner is not None and not fixed:
                chown_tree(path, *owner)
            try:
                with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, StdinFile(stdin) as inp:
                    python = sandbox_python(plan.drops_privileges)
                    argv, inner_home = _command(plan, python, executable, list(args), path, extra)
                    returncode, timed_out, duration = _execute(
                        plan, limits, argv, path, inner_home, owner, inp, out, err, timeout,
                        translate=executable is None, cgroup=cgroup)
                    stdout, stderr = read_capped(out, max_output), read_capped(err, max_output)
            finally:
                if owner is not None and not fixed:
                    chown_tree(path, *runner)
        except (OSError, UnsafeDirectoryError) as exc:
            raise SandboxError(f"could not prepare workspace {path} for the sandbox: {exc}") from exc
        oom = cgroup is not None and cgroup.oom_kills() > 0
        tags = [*plan.tags, *quota_tags(cgroup), *(("disk-quota",) if workspace_quota(path) else ())]
    from pytest_jeval.core.redact import redact  # keys the program found never reach the model or a record

    stdout, stderr = redact(stdout), redact(stderr)
    return ExecResult(_classify(returncode, timed_out, stderr, oom), returncode, stdout, stderr, duration, tags)


def _command(
    plan: IsolationPlan, python: str, executable: str | None, args: list[str], workspace: str,
    ro_paths: Sequence[str] = (),
) -> tuple[list[str], str]:
    """``(argv, home)`` of one run, as :meth:`IsolationPlan.command` builds it for Python."""
    if plan.bwrap is None:
        return [*plan.prefix, executable or python, *args], workspace
    real = os.path.realpath(python)  # bound read-only, so that `python3` works from a shell too
    layout = sandbox_layout(real, workspace)
    # the extra read-only folders are bound at their own paths over the fresh root, like the others
    layout.binds.extend(bwrap_mod.Bind(ro, ro) for ro in ro_paths)
    return bwrap_mod.command(plan.bwrap, layout, [executable or real, *args]).argv, SANDBOX_HOME


def _execute(
    plan: IsolationPlan, limits: Limits, argv: list[str], cwd: str, home: str, owner: tuple[int, int] | None,
    inp: IO[bytes] | int, out: IO[bytes], err: IO[bytes], timeout: float, *, translate: bool,
    cgroup: RunCgroup | None = None,
) -> tuple[int, bool, float]:
    env = scrubbed_env(home, "/tmp" if plan.bwrap else None)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=inp, stdout=out, stderr=err, close_fds=True,
            start_new_session=True, **spawn_options(plan, owner, limits, cgroup=cgroup))
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"could not start the sandboxed program: {exc}") from exc
    finally:
        if cgroup is not None:
            cgroup.close()
    try:
        exited = wait_unreaped(proc, timeout)
    finally:
        kill_group(proc.pid)  # the whole group, before reaping (the group id cannot be reused yet)
        returncode = int(proc.wait())
        if cgroup is not None:
            cgroup.kill_all()
    duration = time.monotonic() - start
    if translate and plan.shell_init and returncode > 128:
        returncode = -(returncode - 128)
    return returncode, not exited, duration


def chown_tree(path: str, uid: int, gid: int) -> None:
    """Give ``path`` and everything in it to ``uid:gid`` without following any link.

    Set-uid/set-gid bits of regular files are cleared; regular files with more than one
    hard link keep their owner (the other link may be outside the tree).
    """
    fd = os.open(path, _DIR_FLAGS)
    try:
        _chown_dir(fd, uid, gid)
    finally:
        os.close(fd)


def chown_path(path: str, uid: int, gid: int) -> None:
    """:func:`chown_tree` for a folder; for anything else the entry itself (never what a link points to)."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        chown_tree(path, uid, gid)
        return
    parent, name = os.path.split(os.path.abspath(path))
    dir_fd = os.open(parent, _DIR_FLAGS)
    try:
        _chown_file(dir_fd, name, uid, gid)
    finally:
        os.close(dir_fd)


def _chown_dir(fd: int, uid: int, gid: int) -> None:
    os.fchown(fd, uid, gid)
    with os.scandir(fd) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        try:
            info = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(info.st_mode):
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            try:
                _chown_dir(child, uid, gid)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode):
            _chown_file(fd, name, uid, gid)
        else:  # links, FIFOs, sockets: the entry itself, never what it points to
            os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)


def _chown_file(dir_fd: int, name: str, uid: int, gid: int) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:  # replaced meanwhile by something that cannot be opened: the entry itself
        os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.fchown(fd, uid, gid)
            return
        if info.st_nlink > 1:
            return
        os.fchown(fd, uid, gid)
        if info.st_mode & (stat.S_ISUID | stat.S_ISGID):
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
    finally:
        os.close(fd)
