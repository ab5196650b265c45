"""The launcher of image sandboxes: a user namespace with a full uid map, an overlay root, then bubblewrap.

Run as ``python -I -S nsrun.py SPEC.json`` by the harness (as root); it uses nothing but the
standard library. SPEC holds:

``uid_base``, ``uid_count``
    the host uids the namespace's ``0 .. count-1`` map to (container root is ``uid_base``).
``lower`` (top first), ``upper``, ``work``, ``merged``
    the overlay: the image's read-only layers, the writable layer of this sandbox, the
    overlay's work directory and the (empty) directory it is mounted on.
``uid``, ``gid``
    the identity the command runs as inside (0: root, with a container's capabilities).
``argv``
    the ``bwrap`` command line that runs inside, over ``merged`` as ``/``.
``cpus``
    CPUs the sandbox may run on (None: all).

What happens: the launcher forks a child, which enters a new user and mount namespace;
the launcher (host root) writes the child's uid and gid maps (``0 uid_base count``) and
lets it go on; the child becomes root of its namespace, makes every mount private, mounts
the overlay (``userxattr``: the kernel's unprivileged overlay) on ``merged`` and execs
``bwrap``, which builds the sandbox's own mount table over it (``/proc``, ``/dev``, the
binds) in new PID, IPC, UTS and (unless the spec allows the network) network namespaces.
Mounts exist only inside these namespaces: they vanish with the last process, however
it ends, so nothing is ever left mounted on the host. Both processes die with their parent
(``PR_SET_PDEATHSIG``); the exit status is the command's.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
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


def overlay_options(spec: dict[str, object]) -> str:
    """The overlay's mount options (paths were checked by the harness: no ``,`` ``:`` or ``=``)."""
    lower = ":".join(str(p) for p in spec["lower"])  # type: ignore[attr-defined]
    return f"lowerdir={lower},upperdir={spec['upper']},workdir={spec['work']},userxattr"


def child(spec: dict[str, object], ready_w: int, go_r: int, parent: int) -> None:
    """In the forked child: new namespaces, become root there, mount the overlay, exec bwrap."""
    _die_with_parent(parent)
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(user, mount)")
    os.write(ready_w, b"u")
    os.close(ready_w)
    if os.read(go_r, 1) != b"g":
        os._exit(125)  # the launcher died or refused
    os.close(go_r)
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    _check(_libc.mount(b"overlay", str(spec["merged"]).encode(), b"overlay", 0,
                       overlay_options(spec).encode()), "mount overlay")
    uid, gid = int(spec.get("uid", 0)), int(spec.get("gid", 0))  # type: ignore[call-overload]
    if uid or gid:
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # bwrap then makes a user namespace of its own
    argv = [str(a) for a in spec["argv"]]  # type: ignore[attr-defined]
    os.execv(argv[0], argv)


def main(argv: list[str]) -> int:
    """Read the spec, start the child, map its ids, relay its exit status."""
    with open(argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
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
            child(spec, ready_w, go_r, parent)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
