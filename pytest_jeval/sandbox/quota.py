"""Quotas for a run and an episode as a whole, not per process.

Rlimits (:mod:`.limits`) bind each process: three children of 600 MiB each pass a 1 GiB
``RLIMIT_AS``, and ``RLIMIT_FSIZE`` bounds one file, not how many. Two mechanisms bound the total:

**A cgroup per run** (memory and processes). Each sandboxed run (a ``python`` tool call, a
terminal command, an external agent) gets its own cgroup, joined by the launcher before it
execs (:func:`~pytest_jeval.sandbox.limits.make_preexec`), with ``memory.limit_in_bytes`` (its
processes together; the kernel's OOM killer ends one of them past it) and ``pids.max``
(processes and threads together). The runs of one episode never overlap (its tools run one
after another and nothing outlives a run), so this bounds the episode at every moment. This
needs **cgroup v1** ``memory`` and ``pids`` hierarchies the runner can write (root); cgroup v2
is not used (a process may not create controlled children of its own cgroup there unless it
was delegated one with no process in it). :func:`cgroup_support` says which applies here; the
run's isolation tags say ``cgroup-memory`` and ``cgroup-pids`` when they did.

**A size-limited file system per episode** (disk and files). As root, a workspace is a tmpfs
mounted for the episode (``size=``, ``nr_inodes=``): writes past the size fail with "No space
left on device", files past the count too. Without root no workspace is mounted and only the
per-file limit applies (tag ``disk-quota`` absent).

Both are recorded in a lease (:mod:`.leases`): a run killed with SIGKILL leaves its cgroup and
its mounted workspace behind, and the next run on the machine removes them.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import os
import signal
import sys
import time
from collections.abc import Iterator

from pytest_jeval.sandbox import leases

__all__ = ["CGROUP_V1", "RunCgroup", "cgroup_support", "mount_quota_fs", "run_cgroup", "unmount_quota_fs"]

CGROUP_V1 = "/sys/fs/cgroup"
"""Where the cgroup v1 hierarchies are mounted (``<here>/memory``, ``<here>/pids``)."""
CONTROLLERS = ("memory", "pids")
MNT_DETACH = 2
MS_NOSUID, MS_NODEV, MS_REMOUNT = 2, 4, 32


def _own_path(controller: str) -> str | None:
    """This process's cgroup in the v1 hierarchy of ``controller`` (from ``/proc/self/cgroup``)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as fh:
            for line in fh:
                _, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(","):
                    return path
    except (OSError, ValueError):
        return None
    return None


def _parent_dir(controller: str) -> str | None:
    own = _own_path(controller)
    if own is None:
        return None
    path = os.path.join(CGROUP_V1, controller) + own.rstrip("/")
    return path if os.path.isfile(os.path.join(path, "cgroup.procs")) else None


@functools.lru_cache(maxsize=1)
def cgroup_support() -> tuple[bool, str]:
    """``(usable, why)``: whether runs get cgroups here, and the reason when they do not."""
    if not sys.platform.startswith("linux"):
        return False, "not Linux"
    if os.geteuid() != 0:
        return False, "the runner is not root (cgroups are root's to make)"
    for controller in CONTROLLERS:
        parent = _parent_dir(controller)
        if parent is None:
            return False, f"no cgroup v1 {controller} hierarchy at {CGROUP_V1}/{controller} (cgroup v2 is not used)"
        probe = os.path.join(parent, f"jeval-probe-{os.getpid()}")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as exc:
            return False, f"cannot make a cgroup in {parent}: {exc.strerror}"
    return True, ""


@dataclasses.dataclass
class RunCgroup:
    """The cgroups (one per controller) of one run."""

    dirs: dict[str, str]
    fds: list[int] = dataclasses.field(default_factory=list)

    def attach_fds(self) -> list[int]:
        """``cgroup.procs`` descriptors for the launcher to join (see ``make_preexec``); closed by :meth:`close`."""
        if not self.fds:
            self.fds = [os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                        for d in self.dirs.values()]
        return self.fds

    def close(self) -> None:
        """Close the descriptors the launcher inherited."""
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def _read(self, controller: str, name: str) -> str:
        try:
            with open(os.path.join(self.dirs[controller], name), encoding="utf-8") as fh:
                return fh.read()
        except OSError:
            return ""

    def oom_kills(self) -> int:
        """How many of the run's processes the OOM killer ended (0 where the kernel does not say)."""
        for line in self._read("memory", "memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def forks_refused(self) -> int:
        """How many forks ``pids.max`` refused."""
        for line in self._read("pids", "pids.events").splitlines():
            if line.startswith("max "):
                return int(line.split()[1])
        return 0

    def kill_all(self) -> None:
        """SIGKILL every process still in the run's cgroups (none may outlive its run)."""
        for _ in range(50):
            pids = [int(p) for d in self.dirs.values() for p in _procs(d)]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)


def _procs(path: str) -> list[str]:
    try:
        with open(os.path.join(path, "cgroup.procs"), encoding="utf-8") as fh:
            return fh.read().split()
    except OSError:
        return []


def _remove_cgroup(path: str) -> None:
    """Kill what is left in a cgroup and remove it (missing: fine)."""
    if not os.path.isdir(path):
        return
    for _ in range(100):
        pids = _procs(path)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)  # the killed processes are still exiting
    os.rmdir(path)


@contextlib.contextmanager
def run_cgroup(memory_bytes: int | None, max_processes: int | None) -> Iterator[RunCgroup | None]:
    """A fresh cgroup for one run with these totals, removed afterwards (None where cgroups are not usable).

    Whatever is still in it at the end is killed.
    """
    usable, _why = cgroup_support()
    if not usable:
        yield None
        return
    lease = leases.take_lease()
    group = RunCgroup({})
    try:
        for controller in CONTROLLERS:
            parent = _parent_dir(controller)
            assert parent is not None
            path = os.path.join(parent, f"jeval-{lease.token}")
            lease.note("cgroup", path)
            os.mkdir(path)
            group.dirs[controller] = path
        if memory_bytes is not None:
            _write(group.dirs["memory"], "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(group.dirs["memory"], "memory.memsw.limit_in_bytes", str(memory_bytes))
        if max_processes is not None:
            _write(group.dirs["pids"], "pids.max", str(max_processes))
        yield group
    finally:
        group.close()
        try:
            for path in group.dirs.values():
                _remove_cgroup(path)
        finally:
            lease.release()


def _write(folder: str, name: str, value: str) -> None:
    with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
        fh.write(value)


# -------------------------------------------------------------------------------------- file systems

_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
_mounted: dict[str, leases.Lease] = {}


def quota_fs_support() -> bool:
    """True when workspaces can be size-limited file systems here (root on Linux)."""
    return _LIBC is not None and os.geteuid() == 0


def mount_quota_fs(path: str, *, size_bytes: int, files: int, mode: int = 0o700) -> bool:
    """Mount a tmpfs of ``size_bytes`` and ``files`` inodes on the empty folder ``path`` (root only).

    False (nothing mounted) where that is not possible; the mount is leased, so a killed
    run's mount is removed by the next run.
    """
    if not quota_fs_support():
        return False
    assert _LIBC is not None
    lease = leases.take_lease()
    lease.note("workspace", path)
    options = f"size={int(size_bytes)},nr_inodes={int(files)},mode={mode:o}".encode()
    if _LIBC.mount(b"tmpfs", os.fsencode(path), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        err = ctypes.get_errno()
        lease.release()
        raise OSError(err, f"could not mount the workspace's file system on {path}: {os.strerror(err)}")
    _mounted[path] = lease
    return True


def grow_quota_fs(path: str, *, size_bytes: int, files: int) -> bool:
    """Give a file system mounted by :func:`mount_quota_fs` a new size and entry count (a remount: what it
    holds stays); False when ``path`` is not one."""
    if path not in _mounted:
        return False
    assert _LIBC is not None
    options = f"size={int(size_bytes)},nr_inodes={int(files)}".encode()
    if _LIBC.mount(b"tmpfs", os.fsencode(path), b"tmpfs", MS_REMOUNT | MS_NOSUID | MS_NODEV, options) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"could not resize the workspace's file system on {path}: {os.strerror(err)}")
    return True


def unmount_quota_fs(path: str) -> bool:
    """Unmount a workspace mounted by :func:`mount_quota_fs` (its files go with it); False when it was not."""
    lease = _mounted.pop(path, None)
    if lease is None:
        return False
    try:
        _detach(path)
    finally:
        lease.release()
    return True


def _detach(path: str) -> None:
    assert _LIBC is not None
    if _LIBC.umount2(os.fsencode(path), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        if err not in (22, 2):  # EINVAL: not a mount point; ENOENT: gone
            raise OSError(err, f"could not unmount {path}: {os.strerror(err)}")


def _clean_workspace(path: str) -> None:
    """A dead run's workspace: unmount it and remove the folder."""
    from pytest_jeval.sandbox.files import remove_tree

    if _LIBC is not None and os.geteuid() == 0:
        _detach(path)
    remove_tree(path)


leases.register_cleaner("cgroup", _remove_cgroup)
leases.register_cleaner("workspace", _clean_workspace)
