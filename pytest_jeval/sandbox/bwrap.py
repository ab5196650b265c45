"""Every bubblewrap command line of the project, built in one place.

Three kinds of programs run under bubblewrap: generated code (:mod:`.plans`), terminal tasks
(:mod:`.shell.providers`) and external agent CLIs (``agents/external``). Each describes what its
sandbox holds as a :class:`Layout`; :func:`command` turns it into the ``bwrap`` command line,
always with the same promises:

* new user, PID, network, IPC, UTS, mount (and, where the kernel has it, cgroup) namespaces;
  the program is ``uid`` (65534) in its user namespace with **no capability**, so every mount
  it inherits is locked (no unmount, no remount, no new mount), and it may not make further
  user namespaces (``--disable-userns``);
* a network namespace of its own: only a loopback, nothing of the host's network (an external
  agent reaches its proxy through a Unix socket bound in, see :mod:`._relay`);
* a file system built for it: a fresh tmpfs root holding the host's system directories
  (``/usr``, ``/bin``, ``/lib*``) and a few ``/etc`` files read-only, or a given root filesystem
  read-only; a private ``/proc``, ``/dev`` and size-limited ``/tmp`` and ``/dev/shm``; then only
  the binds the layout names. Nothing else of the host is there: no home, no ``/tmp`` of the
  host, no other sandbox's files. Host paths in :attr:`Layout.hide` (this package's folder)
  are covered by an empty read-only tmpfs wherever a bind would show them;
* ``--die-with-parent`` and ``--new-session``: the sandbox dies with its launcher and cannot
  reach the harness's terminal.

When the runner is root, the launcher runs ``bwrap`` as an otherwise unused uid
(:mod:`.uids`); a bind source that uid cannot reach (an interpreter under ``/root/.pyenv``) is
*staged*: the launcher bind-mounts it onto a public empty folder in a mount namespace of its
own before it drops privileges (:mod:`.launch`), and ``bwrap`` binds that folder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Sequence

from pytest_jeval.sandbox.files import private_base_dir

__all__ = ["ETC_SHOWN", "SANDBOX_UID", "TMPFS_BYTES", "Bind", "BwrapCommand", "Layout", "command", "stage_dir"]

SANDBOX_UID = 65534
"""The identity of the program inside its user namespace (``nobody``)."""
TMPFS_BYTES = 64 * 1024 * 1024
"""Default size of a sandbox's private ``/tmp`` and ``/dev/shm``."""
ETC_SHOWN = ("alternatives", "ca-certificates", "ca-certificates.conf", "debian_version", "gai.conf", "host.conf",
             "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types", "nsswitch.conf", "os-release",
             "protocols", "services", "ssl", "timezone")
"""What of the host's ``/etc`` a sandbox built on the host's system directories sees (read-only)."""
ETC_MADE = {
    "/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
    "/etc/hosts": "127.0.0.1 localhost\n::1 localhost\n",
    "/etc/hostname": "jeval-sandbox\n",
}
"""Files made for the sandbox instead of the host's (no user names, no host names of the machine)."""
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


@dataclasses.dataclass(frozen=True)
class Bind:
    """A host path shown inside the sandbox."""

    source: str
    """The host path (a folder or a file)."""
    dest: str
    """Where it appears inside."""
    writable: bool = False
    """Read-write (else read-only)."""
    optional: bool = False
    """Skipped when ``source`` does not exist (else bwrap fails)."""


@dataclasses.dataclass
class Layout:
    """What one sandbox's file system holds; nothing else of the host is in it."""

    binds: list[Bind] = dataclasses.field(default_factory=list)
    """Host paths shown inside, in order (a later bind may lie inside an earlier one)."""
    root: str | None = None
    """A host folder shown read-only as ``/`` (a root filesystem); None: a fresh tmpfs root holding the
    host's system directories and :data:`ETC_SHOWN`."""
    tmp_bytes: int | None = TMPFS_BYTES
    """Size of the private ``/tmp``; None: no tmpfs there (a bind provides ``/tmp``)."""
    shm_bytes: int = TMPFS_BYTES
    """Size of the private ``/dev/shm``."""
    hide: list[str] = dataclasses.field(default_factory=list)
    """Host folders covered by an empty read-only tmpfs wherever a bind shows them."""
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    """Read-only files made for the sandbox: path inside -> text (on top of :data:`ETC_MADE`)."""
    etc: tuple[str, ...] = ETC_SHOWN
    """What of the host's ``/etc`` is shown (without :attr:`root`)."""
    etc_made: bool = True
    """Add :data:`ETC_MADE` (without :attr:`root`)."""
    chdir: str = "/"
    """The working directory inside."""
    hostname: str = "jeval-sandbox"
    splice: bool = False
    """With :attr:`root`: build ``/`` on an empty root from the entries of ``root`` (each bound read-only, links
    made again), so a bind may lie anywhere (a folder on the way to one is made, holding that folder's entries),
    then make ``/`` read-only; nothing is ever written into ``root``."""


@dataclasses.dataclass(frozen=True)
class BwrapCommand:
    """A ``bwrap`` command line and what the launcher must stage before it drops privileges."""

    argv: list[str]
    staged: list[tuple[str, str]]
    """``(host source, public stage path)``: bind-mounted by the launcher in its own mount namespace."""


def stage_dir() -> str:
    """The runner's folder of public empty mount points for staged binds (``<tmp>/jeval-sandbox-<euid>/stage``)."""
    base = private_base_dir("/tmp" if os.path.isdir("/tmp") else None)
    path = os.path.join(base, "stage")
    try:
        os.mkdir(path, 0o711)
    except FileExistsError:
        pass
    return path


def _stage_target(source: str) -> str:
    """A public empty folder or file (as ``source`` is) that ``source`` is bind-mounted on when staged."""
    is_dir = os.path.isdir(source)
    name = hashlib.sha256(source.encode("utf-8", "surrogateescape")).hexdigest()[:24] + ("" if is_dir else ".f")
    target = os.path.join(stage_dir(), name)
    if not os.path.lexists(target):
        if is_dir:
            try:
                os.mkdir(target, 0o755)
            except FileExistsError:
                pass
        else:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            os.close(fd)
    return target


def made_file(text: str) -> str:
    """A read-only host file holding ``text`` (made once, in the runner's private folder) to bind into sandboxes."""
    base = os.path.join(private_base_dir("/tmp" if os.path.isdir("/tmp") else None), "files")
    try:
        os.mkdir(base, 0o711)
    except FileExistsError:
        pass
    data = text.encode("utf-8")
    path = os.path.join(base, hashlib.sha256(data).hexdigest()[:32])
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=base)
    try:
        os.write(fd, data)
        os.fchmod(fd, 0o644)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def _reachable(path: str, stage: bool) -> bool:
    """True when ``bwrap`` (running as the sandbox's host uid) can reach ``path`` without staging."""
    from pytest_jeval.sandbox.limits import world_accessible

    return not stage or world_accessible(path)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def command(bwrap: str, layout: Layout, argv: Sequence[str], *, uid: int = SANDBOX_UID,
            stage: bool = False) -> BwrapCommand:
    """The ``bwrap`` command line running ``argv`` in a sandbox laid out as ``layout``.

    ``stage``: the launcher drops privileges (root runner), so sources the dropped uid cannot
    reach are staged (see the module docstring).
    """
    out = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
           "--cap-drop", "ALL", "--uid", str(uid), "--gid", str(uid), "--hostname", layout.hostname]
    staged: list[tuple[str, str]] = []

    def bind(source: str, dest: str, *, writable: bool = False, optional: bool = False) -> None:
        if optional and not os.path.lexists(source):
            return
        if not _reachable(source, stage):
            target = _stage_target(source)
            staged.append((source, target))
            source = target
        flag = "--bind" if writable else "--ro-bind"
        out.extend([flag + ("-try" if optional else ""), source, dest])

    if layout.root is not None and layout.splice:
        targets = [b.dest for b in layout.binds] + list(layout.files)

        def splice(host: str, inside: str) -> None:
            for name in sorted(os.listdir(host)):
                source, dest = os.path.join(host, name), inside.rstrip("/") + "/" + name
                if os.path.islink(source):
                    out.extend(["--symlink", os.readlink(source), dest])
                elif os.path.isdir(source) and any(_inside(t, dest) and t != dest for t in targets):
                    mode = os.stat(source).st_mode & 0o7777 | 0o555  # the way to a bind: enterable by its user
                    out.extend(["--perms", format(mode, "04o"), "--dir", dest])
                    splice(source, dest)
                else:
                    bind(source, dest)

        splice(layout.root, "/")
    elif layout.root is not None:
        bind(layout.root, "/")
    else:
        bind("/usr", "/usr")
        for name in SYSTEM_LINKS:
            path = "/" + name
            if os.path.islink(path):
                out.extend(["--symlink", os.readlink(path), path])
            elif os.path.isdir(path):
                bind(path, path)
        for name in layout.etc:
            bind("/etc/" + name, "/etc/" + name, optional=True)
        if layout.etc_made:
            for dest, text in {**ETC_MADE, "/etc/hostname": layout.hostname + "\n"}.items():
                bind(made_file(text), dest)
    out.extend(["--proc", "/proc", "--dev", "/dev", "--size", str(layout.shm_bytes), "--tmpfs", "/dev/shm"])
    if layout.tmp_bytes is not None:
        out.extend(["--size", str(layout.tmp_bytes), "--tmpfs", "/tmp"])
    dirs = [b for b in layout.binds if not os.path.isfile(b.source)]
    files = [b for b in layout.binds if os.path.isfile(b.source)]
    for b in dirs:
        bind(b.source, b.dest, writable=b.writable, optional=b.optional)
    covers: list[str] = []
    for hidden in layout.hide:
        real = os.path.realpath(hidden)
        for b in dirs:
            src = os.path.realpath(b.source)
            if _inside(real, src) and real != src:
                covers.append(b.dest.rstrip("/") + real[len(src):])
                out.extend(["--perms", "0755", "--tmpfs", covers[-1]])
    for b in files:  # a file named on its own may lie in a covered folder: it is shown there alone
        bind(b.source, b.dest, writable=b.writable, optional=b.optional)
    for dest, text in layout.files.items():
        bind(made_file(text), dest)
    for cover in covers:
        out.extend(["--remount-ro", cover])
    if layout.root is None or layout.splice:
        out.extend(["--remount-ro", "/"])  # the tmpfs root itself: no new top-level folders
    out.extend(["--chdir", layout.chdir, "--", *argv])
    return BwrapCommand(out, staged)
