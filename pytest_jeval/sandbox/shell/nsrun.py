"""The launcher of image sandboxes: a user namespace with a full uid map, an overlay root, then bubblewrap.

Run by the harness (as root) with nothing but the standard library, in one of three modes:

``nsrun.py keep SPEC.json``
    makes the sandbox's namespaces and keeps them: a child enters a new user and mount
    namespace, the launcher (host root) writes its uid and gid maps (``0 uid_base count``:
    container root is host uid ``uid_base``), and the child, now root of its namespace, makes
    every mount private, mounts the overlay (``userxattr``: the kernel's unprivileged overlay)
    on ``merged``, prints ``ready`` and waits until its standard input closes. The overlay is
    mounted once for the sandbox's whole life, so no two mounts ever share its writable layer.
``nsrun.py enter SPEC.json``
    runs one command in a kept sandbox: joins its user and mount namespaces through the pidfd
    ``pidfd`` (inherited: it names that very process, never a reused pid), becomes root there,
    makes the mount points of the command's binds, and runs ``argv`` (``bwrap`` over ``merged``,
    which adds ``/proc``, ``/dev``, the binds and new PID, IPC, UTS and network namespaces) as
    pid 1 of a PID namespace of its own: when the launcher dies, however early, the kernel kills
    everything in it. Killing its process group ends the command; the kept namespaces stay.
``nsrun.py run SPEC.json``
    ``keep`` and ``enter`` in one: the namespaces last as long as the command (the builder's steps).

SPEC holds ``uid_base``, ``uid_count``; ``lower`` (top first), ``upper``, ``work``, ``merged`` (the
overlay); ``argv``; ``uid``/``gid`` (non-zero: the launcher switches before exec and bwrap makes a
user namespace of that one uid); ``mount_points`` (made when missing); ``cpus`` (the CPU affinity);
``pidfd`` (``enter``); ``stage`` (``keep``: ``[source, target]`` pairs bound read-only by host root in a
mount namespace of the child's before it enters its user namespace, for sources below a folder only
root may enter). Mounts exist only inside these namespaces: they vanish with their last
process, however it ends, and nothing is ever mounted on the host. Every process dies with its
parent (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _die_with_parent(parent: int) -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        os._exit(125)


def overlay_options(spec: dict[str, Any]) -> str:
    """The overlay's mount options (paths were checked by the harness: no ``,`` ``:`` or ``=``)."""
    lower = ":".join(str(p) for p in spec["lower"])
    return f"lowerdir={lower},upperdir={spec['upper']},workdir={spec['work']},userxattr"


def _become_root() -> None:
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)


def _mount(spec: dict[str, Any]) -> None:
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    _check(_libc.mount(b"overlay", str(spec["merged"]).encode(), b"overlay", 0, overlay_options(spec).encode()),
           "mount overlay")


def _exec(spec: dict[str, Any], parent: int) -> None:
    """Run the command as pid 1 of a new PID namespace and relay its exit status (does not return).

    When this process dies, however early, the kernel kills that namespace's init and with it every
    process in it (bwrap and all it started), whether or not bwrap had armed its own parent-death
    signal yet: nothing outlives the launcher."""
    _check(_libc.unshare(CLONE_NEWPID), "unshare(pid)")
    alive_r, alive_w = os.pipe()  # our end stays open while we live: EOF tells the child we died
    pid = os.fork()
    if pid == 0:
        try:
            os.close(alive_w)
            _check(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
            if select.select([alive_r], [], [], 0)[0]:
                os._exit(125)  # the launcher died before the signal was armed
            os.close(alive_r)
            _exec_command(spec)
        except BaseException as exc:
            os.write(2, f"jeval sandbox launcher: {exc}\n".encode())
            os._exit(125)
    os.close(alive_r)
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _exec_command(spec: dict[str, Any]) -> None:
    """Make the binds' mount points, switch to the spec's user, exec its command (bwrap)."""
    merged = str(spec["merged"])
    for target in spec.get("mount_points", []):
        path = merged + "/" + str(target).strip("/")
        if not os.path.lexists(path):  # made as root here: bwrap may run as another user
            os.makedirs(path, mode=0o755, exist_ok=True)
    uid, gid = int(spec.get("uid", 0)), int(spec.get("gid", 0))
    if uid or gid:
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        _check(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    argv = [str(a) for a in spec["argv"]]
    os.execv(argv[0], argv)


def _stage(pairs: list[list[str]]) -> None:
    """Still host root, in a mount namespace of its own: bind each ``[source, target]`` read-only (a source the
    namespace's uids cannot reach, below a folder only root may enter, becomes reachable at its public target)."""
    if not pairs:
        return
    _check(_libc.unshare(CLONE_NEWNS), "unshare(mount) for staged binds")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate / (staging)")
    for source, target in pairs:
        _check(_libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {source}")
        _check(_libc.mount(b"none", target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None),
               f"remount {target} read-only")


def _namespaced_child(spec: dict[str, Any], ready_w: int, go_r: int, parent: int, keep: bool) -> None:
    """The forked child: new user and mount namespaces, root there, the overlay mounted; then keep or exec."""
    _die_with_parent(parent)
    _stage(spec.get("stage") or [])
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(user, mount)")
    os.write(ready_w, b"u")
    os.close(ready_w)
    if os.read(go_r, 1) != b"g":
        os._exit(125)  # the launcher died or refused
    os.close(go_r)
    _become_root()
    _die_with_parent(parent)  # a change of credentials clears the parent-death signal: set it again
    _mount(spec)
    if not keep:
        _exec(spec, parent)
    os.write(1, f"ready {os.getpid()}\n".encode())
    while os.read(0, 4096):  # until the harness closes our stdin (or dies)
        pass
    os._exit(0)


def make(spec: dict[str, Any], *, keep: bool) -> int:
    """``keep`` and ``run``: start the namespaced child, map its ids, relay its exit status."""
    cpus = spec.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    base, count = int(spec["uid_base"]), int(spec["uid_count"])
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(go_w)
            _namespaced_child(spec, ready_w, go_r, parent, keep)
        except BaseException as exc:
            os.write(2, f"jeval sandbox launcher: {exc}\n".encode())
            os._exit(125)
    os.close(ready_w)
    os.close(go_r)
    try:
        if os.read(ready_r, 1) != b"u":
            raise OSError("the sandbox child failed before entering its namespaces")
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w", encoding="ascii") as fh:
                fh.write(f"0 {base} {count}\n")
        os.write(go_w, b"g")
    except OSError as exc:
        os.write(2, f"jeval sandbox launcher: {exc}\n".encode())
        os.kill(pid, signal.SIGKILL)
    finally:
        os.close(go_w)
        os.close(ready_r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def enter(spec: dict[str, Any]) -> int:
    """``enter``: join the kept namespaces through the pidfd, become root there, exec the command."""
    cpus = spec.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    parent = os.getppid()
    _check(_libc.setns(int(spec["pidfd"]), CLONE_NEWUSER | CLONE_NEWNS), "setns(the sandbox's namespaces)")
    os.close(int(spec["pidfd"]))
    _become_root()
    _die_with_parent(parent)  # the harness armed it; the change of credentials cleared it
    _exec(spec, parent)
    return 125  # not reached


def main(argv: list[str]) -> int:
    """``nsrun.py {keep,enter,run} SPEC.json``."""
    mode, path = argv[1], argv[2]
    with open(path, encoding="utf-8") as fh:
        spec = json.load(fh)
    try:
        if mode == "enter":
            return enter(spec)
        return make(spec, keep=mode == "keep")
    except OSError as exc:
        os.write(2, f"jeval sandbox launcher: {exc}\n".encode())
        return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv))
