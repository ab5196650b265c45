"""Running commands in a built image without Docker: an overlay of its layers, a user namespace, bubblewrap.

Every command is a fresh process tree: :mod:`.nsrun` (run as root) enters a user
namespace whose uids ``0..65535`` are the host's ``ENV_UID_BASE..+65535``, mounts the
overlay (the image's layers read-only, this sandbox's own writable layer on top) and
starts ``bwrap`` over it, which adds ``/proc``, ``/dev``, the binds and new PID, IPC, UTS
and network namespaces. So, as in a container:

| | |
|---|---|
| the whole file system | writable; changes go to the sandbox's own layer and last until :meth:`ImageSandbox.stop` |
| identity | the image's ``USER`` (root by default), with Docker's default capabilities, all only inside the namespace |
| network | none (a loopback that is down) unless the sandbox allows it (builds, ``allow_internet``) |
| processes | none outlives its command: the PID namespace ends with it |
| mounts | only inside the namespaces: nothing is ever mounted on the host, whatever kills the harness |

:class:`ImageSandbox` is one task environment (an episode); :func:`run_in_image` runs one
command (the environment builder uses it for ``RUN`` steps).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import json
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from pytest_jeval.sandbox.files import remove_tree
from pytest_jeval.sandbox.process import StdinFile, kill_group, read_capped, wait_unreaped
from pytest_jeval.sandbox.quota import RunCgroup, run_cgroup
from pytest_jeval.sandbox.shell.images import ENV_UID_BASE, ENV_UID_COUNT
from pytest_jeval.sandbox.shell.providers import MAX_OUTPUT, ExecOutcome, ProviderUnavailable, Sandbox

__all__ = ["DOCKER_CAPS", "ImageSandbox", "Mount", "RunSpec", "check_image_sandboxes", "copy_plain", "run_in_image"]

NSRUN = Path(__file__).with_name("nsrun.py")
DOCKER_CAPS = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
               "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
               "CAP_KILL", "CAP_AUDIT_WRITE")
"""The capabilities Docker gives a container's root by default (here they hold only inside the namespace)."""
_BAD_PATH_CHARS = (",", ":", "=", "\n")


@dataclasses.dataclass(frozen=True)
class Mount:
    """A host folder shown inside the sandbox."""

    source: Path
    target: str
    writable: bool = False


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One command in an image: its overlay, identity, environment and binds."""

    lowers: tuple[Path, ...]
    """The image's layers, top first."""
    upper: Path
    work: Path
    merged: Path
    argv: tuple[str, ...]
    cwd: str = "/"
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    uid: int = 0
    gid: int = 0
    network: bool = False
    mounts: tuple[Mount, ...] = ()
    hostname: str = "jeval-task"
    cpus: tuple[int, ...] | None = None
    covers: tuple[str, ...] = ()
    """Paths inside covered by an empty read-only tmpfs after the binds (the harness's package in a bound folder)."""


def _check_path(path: Path) -> str:
    text = str(path)
    if any(ch in text for ch in _BAD_PATH_CHARS):
        raise ValueError(f"{text!r}: overlay paths may not contain , : = or a newline")
    return text


SETPRIV = "usr/bin/setpriv"
"""util-linux's ``setpriv`` (in every Debian base): how a command runs as the image's non-root ``USER``."""


def _setpriv(spec: RunSpec) -> bool:
    """True when the image has ``setpriv``: then a non-root ``USER`` is entered inside the sandbox (root-owned
    files stay root's, as in a container); without it bwrap makes a user namespace of that one uid."""
    return spec.uid != 0 and any((layer / SETPRIV).is_file() for layer in (spec.upper, *spec.lowers))


def bwrap_argv(spec: RunSpec, bwrap: str) -> list[str]:
    """The ``bwrap`` command line that runs inside the namespace over the mounted overlay."""
    argv = [bwrap, "--bind", str(spec.merged), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", spec.hostname,
            "--die-with-parent", "--new-session", "--clearenv"]
    if not spec.network:
        argv.append("--unshare-net")
    elif os.path.exists("/etc/resolv.conf"):
        argv += ["--ro-bind", os.path.realpath("/etc/resolv.conf"), "/etc/resolv.conf"]
    drop = _setpriv(spec)
    if spec.uid == 0 or drop:
        argv += ["--cap-drop", "ALL"]
        for cap in DOCKER_CAPS:
            argv += ["--cap-add", cap]
    for mount in spec.mounts:
        argv += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
    for cover in spec.covers:
        argv += ["--perms", "0755", "--tmpfs", cover, "--remount-ro", cover]
    for key, value in spec.env.items():
        argv += ["--setenv", key, value]
    user = [f"/{SETPRIV}", f"--reuid={spec.uid}", f"--regid={spec.gid}", "--init-groups", "--"] if drop else []
    return [*argv, "--chdir", spec.cwd, "--", *user, *spec.argv]


def _preexec(cpu_seconds: int, file_bytes: int, cgroup_fds: Sequence[int] = ()) -> Callable[[], None]:
    """Fork-safe: joins the sandbox's cgroups (``cgroup.procs`` descriptors), the parent-death signal and a few
    rlimits (no address-space limit: see the docs)."""
    import ctypes
    import resource
    import signal

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent, getppid, exit_now, setrlimit = os.getpid(), os.getppid, os._exit, resource.setrlimit
    pairs = [(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1)), (resource.RLIMIT_FSIZE, (file_bytes, file_bytes)),
             (resource.RLIMIT_NPROC, (4096, 4096)), (resource.RLIMIT_CORE, (0, 0))]
    sigkill = int(signal.SIGKILL)
    fds, write, getpid = list(cgroup_fds), os.write, os.getpid

    def preexec() -> None:
        for fd in fds:  # before anything else runs: every process of the command is counted
            try:
                write(fd, str(getpid()).encode())
            except OSError:
                exit_now(125)
        prctl(1, sigkill, 0, 0, 0)
        if getppid() != parent:
            exit_now(125)
        for res, values in pairs:
            try:
                setrlimit(res, values)
            except (ValueError, OSError):
                pass

    return preexec


def _payload(spec: RunSpec) -> dict[str, object]:
    """The launcher's spec (:mod:`.nsrun`) of ``spec``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ProviderUnavailable("image sandboxes need bubblewrap: apt-get install -y bubblewrap")
    return {"uid_base": ENV_UID_BASE, "uid_count": ENV_UID_COUNT, "lower": [_check_path(p) for p in spec.lowers],
            "upper": _check_path(spec.upper), "work": _check_path(spec.work), "merged": str(spec.merged),
            "uid": 0 if _setpriv(spec) else spec.uid, "gid": 0 if _setpriv(spec) else spec.gid,
            "cpus": list(spec.cpus) if spec.cpus else None,
            "mount_points": [m.target for m in spec.mounts if m.source.is_dir()],
            "argv": bwrap_argv(spec, bwrap)}


def _spec_file(payload: dict[str, object]) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="nsrun-", delete=False) as fh:
        json.dump(payload, fh)
        return fh.name


def _launch(mode: str, payload: dict[str, object], *, timeout: float, stdin: str | None, stdout: IO[bytes] | None,
            pass_fds: tuple[int, ...] = (), file_size_mb: int = 10240, cgroup_fds: Sequence[int] = ()) -> ExecOutcome:
    """Run the launcher in ``mode`` once; its process group is killed at ``timeout``."""
    spec_file = _spec_file(payload)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, StdinFile(stdin) as inp:
            start = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-I", "-S", str(NSRUN), mode, spec_file], cwd="/",
                                    env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}, stdin=inp,
                                    stdout=stdout if stdout is not None else out, stderr=err, close_fds=True,
                                    pass_fds=pass_fds, start_new_session=True,
                                    preexec_fn=_preexec(max(1, int(timeout)) + 1, file_size_mb * 2**20,
                                                        cgroup_fds))
            try:
                exited = wait_unreaped(proc, timeout)
            finally:
                kill_group(proc.pid)
                returncode = int(proc.wait())
            seconds = time.monotonic() - start
            text_out = "" if stdout is not None else read_capped(out, MAX_OUTPUT)
            text_err = read_capped(err, MAX_OUTPUT)
    finally:
        os.unlink(spec_file)
    from pytest_jeval.core.redact import redact

    return ExecOutcome(returncode, redact(text_out), redact(text_err), not exited, seconds)


def run_in_image(spec: RunSpec, *, timeout: float, stdin: str | None = None, stdout: IO[bytes] | None = None,
                 file_size_mb: int = 10240) -> ExecOutcome:
    """Run ``spec`` once in namespaces of its own (the builder's steps); its whole process tree is killed at
    ``timeout``. With ``stdout`` the command's output goes to that file uncapped (``stdout`` is then empty)."""
    return _launch("run", _payload(spec), timeout=timeout, stdin=stdin, stdout=stdout, file_size_mb=file_size_mb)


class _Keeper:
    """The kept namespaces of one sandbox (``nsrun.py keep``): the overlay is mounted once, for its whole life."""

    def __init__(self, spec: RunSpec, stage: Sequence[tuple[str, str]] = ()) -> None:
        self.stage = tuple(stage)
        payload = {**_payload(spec), "argv": [], "stage": [list(pair) for pair in self.stage]}
        self._spec_file = _spec_file(payload)
        self._err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", str(NSRUN), "keep", self._spec_file], cwd="/",
                                     env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, close_fds=True,
                                     start_new_session=True, preexec_fn=_preexec(10**9, 1))
        self.pidfd = -1
        assert self.proc.stdout is not None
        ready = select.select([self.proc.stdout], [], [], 120)[0]
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("ready "):
            self.close()
            self._err.seek(0)
            raise RuntimeError("the sandbox's namespaces could not be made: "
                               + (self._err.read().decode(errors="replace").strip()[-500:] or "no answer"))
        self.pidfd = os.pidfd_open(int(line.split()[1]))

    def alive(self) -> bool:
        """True while the kept namespaces exist."""
        return self.proc.poll() is None

    def close(self) -> None:
        """Let the namespaces go (the overlay is unmounted with them) and wait for it."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            kill_group(self.proc.pid)
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        self._err.close()
        if os.path.exists(self._spec_file):
            os.unlink(self._spec_file)


# ------------------------------------------------------------------------------------------ availability

_probe_lock = threading.Lock()
_probed: str | None = None


def check_image_sandboxes() -> None:
    """Raise :class:`ProviderUnavailable` with the reason when image sandboxes cannot run here (checked once)."""
    global _probed
    with _probe_lock:
        if _probed is None:
            _probed = _probe()
        if _probed:
            raise ProviderUnavailable(_probed)


def _probe() -> str:
    if not sys.platform.startswith("linux"):
        return "image sandboxes need Linux (user namespaces, overlayfs)"
    if os.geteuid() != 0:
        return ("image sandboxes need root here: container uids are mapped onto host uids "
                f"{ENV_UID_BASE}..{ENV_UID_BASE + ENV_UID_COUNT - 1}, which only root may do "
                "(run as root, or use sandbox = \"docker\" with a container engine)")
    if shutil.which("bwrap") is None:
        return "image sandboxes need bubblewrap: apt-get install -y bubblewrap (or make bubblewrap)"
    root = Path(tempfile.mkdtemp(prefix="jeval-probe-"))
    try:
        os.chmod(root, 0o711)
        parts = {name: root / name for name in ("lower", "upper", "work", "merged")}
        for path in parts.values():
            path.mkdir()
            os.chown(path, ENV_UID_BASE, ENV_UID_BASE)
        for name in ("usr", "proc", "dev", "tmp"):
            (parts["lower"] / name).mkdir()
        spec = RunSpec((parts["lower"],), parts["upper"], parts["work"], parts["merged"],
                       ("/probe-missing",), env={"PATH": "/usr/bin"})
        outcome = run_in_image(spec, timeout=30)
        # bwrap reports the missing program itself: the namespaces, the overlay and bwrap all worked
        if "probe-missing" not in outcome.stderr:
            return ("image sandboxes cannot start here (a user namespace with an overlay root and bubblewrap "
                    f"inside): {outcome.stderr.strip()[-500:] or f'exit status {outcome.returncode}'}")
        return ""
    except OSError as exc:
        return f"image sandboxes cannot start here: {exc}"
    finally:
        remove_tree(str(root))


# ------------------------------------------------------------------------------------------ the sandbox

_live: set[ImageSandbox] = set()
_live_lock = threading.Lock()


def _stop_all() -> None:
    with _live_lock:
        boxes = list(_live)
    for box in boxes:
        box.stop()


atexit.register(_stop_all)


class ImageSandbox(Sandbox):
    """One task environment over a built image: its own writable layer, every command a fresh namespace.

    ``lowers`` are the image's layers (top first); ``env``, ``workdir``, ``uid``/``gid`` are the image's
    ``ENV``, ``WORKDIR`` and ``USER``. Commands run with ``bash -c`` (the agent's shell).
    """

    def __init__(self, lowers: Sequence[Path], *, env: Mapping[str, str], workdir: str = "/", uid: int = 0,
                 gid: int = 0, network: bool = False, cpus: tuple[int, ...] | None = None,
                 parent: str | None = None, file_size_mb: int = 10240, memory_mb: int | None = None,
                 max_processes: int | None = None) -> None:
        self.lowers = tuple(lowers)
        self.file_size_mb = file_size_mb
        self.env, self.workdir, self.uid, self.gid = dict(env), workdir, uid, gid
        self.network, self.cpus = network, cpus
        self._lock = threading.Lock()
        self._keeper: _Keeper | None = None
        self._stage: tuple[tuple[str, str], ...] = ()
        self._checks = 0
        base = _episode_base(parent)
        _remove_stale(base)
        root = Path(tempfile.mkdtemp(prefix="tb-", dir=base))
        self._held = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._held, fcntl.LOCK_EX)  # held while the sandbox lives; released however this process ends
        os.chown(root, ENV_UID_BASE, ENV_UID_BASE)
        os.chmod(root, 0o711)  # the image's USER (another namespace uid) passes through to merged/
        self.root: Path | None = root
        for name in ("upper", "work", "merged", "io"):
            (root / name).mkdir(mode=0o755)
            os.chown(root / name, ENV_UID_BASE, ENV_UID_BASE)
        self._cgroup_stack = contextlib.ExitStack()
        self.cgroup: RunCgroup | None = None
        """The cgroup every command of the sandbox runs in (memory and processes of all of them together), or
        None where cgroups are not usable (:func:`pytest_jeval.sandbox.quota.cgroup_support`)."""
        if memory_mb is not None or max_processes is not None:
            try:
                self.cgroup = self._cgroup_stack.enter_context(
                    run_cgroup(memory_mb * 2**20 if memory_mb is not None else None, max_processes))
            except BaseException:
                self._cgroup_stack.close()
                remove_tree(str(root))
                os.close(self._held)
                raise
        with _live_lock:
            _live.add(self)

    @property
    def memory_limited(self) -> str | None:
        """How a ``memory_mb`` limit is applied: ``"cgroup"`` (for all the sandbox's processes together), or
        why it is not; None when the sandbox has no cgroup and none was asked for."""
        if self.cgroup is not None:
            return "cgroup"
        from pytest_jeval.sandbox.quota import cgroup_support

        usable, why = cgroup_support()
        return None if usable else f"not enforced: {why or 'cgroups are not usable here'}"

    def oom_kills(self) -> int:
        """How many of the sandbox's processes the kernel's OOM killer ended (its memory limit)."""
        return self.cgroup.oom_kills() if self.cgroup is not None else 0

    def _spec(self, argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
              mounts: Sequence[Mount] = (), network: bool | None = None) -> RunSpec:
        if self.root is None:
            raise RuntimeError("the sandbox was stopped")
        return RunSpec(self.lowers, self.root / "upper", self.root / "work", self.root / "merged", tuple(argv),
                       cwd or self.workdir, dict(self.env if env is None else env), self.uid, self.gid,
                       self.network if network is None else network, tuple(mounts), cpus=self.cpus)

    def _enter(self, spec: RunSpec, *, timeout: float, stdin: str | None = None,
               stdout: IO[bytes] | None = None) -> ExecOutcome:
        """Run ``spec`` in the sandbox's kept namespaces (made now when there are none, or they died)."""
        if self._keeper is None or not self._keeper.alive() or self._keeper.stage != self._stage:
            if self._keeper is not None:
                self._keeper.close()
            self._keeper = _Keeper(spec, self._stage)
        payload = {**_payload(spec), "pidfd": self._keeper.pidfd}
        fds = self.cgroup.attach_fds() if self.cgroup is not None else []
        try:
            return _launch("enter", payload, timeout=timeout, stdin=stdin, stdout=stdout,
                           pass_fds=(self._keeper.pidfd,), file_size_mb=self.file_size_mb, cgroup_fds=fds)
        finally:
            if self.cgroup is not None:
                self.cgroup.kill_all()  # nothing of a command outlives it
                self.cgroup.close()

    def exec(self, command: str, *, timeout: float, stdin: str | None = None, checker: bool = False) -> ExecOutcome:
        """``bash -c command`` in the image's ``WORKDIR`` as its ``USER``; everything it started dies at the end.

        ``checker=True`` (the :class:`~pytest_jeval.sandbox.shell.providers.Sandbox` protocol's checker run): a
        fresh, empty ``HOME`` (``/root``) and ``/tmp`` bound over the agent's, and the image's ``ENV`` with the
        harness's checker environment over it
        (:func:`~pytest_jeval.sandbox.shell.providers.checker_environment`: git guards, no variable the agent
        set), ``PATH`` kept from the image (its tools live there). Nothing the agent exported reaches any exec:
        no exec's environment carries over. ``/tests`` and ``/logs`` are what the caller copied in. The
        Terminal-Bench verifier does not come this way: it runs through :meth:`run`, with fresh ``/tests`` and
        ``/logs/verifier`` binds and the verifier kit (``benchmarks/_terminal/verify.py``)."""
        env: dict[str, str] | None = None
        mounts: list[Mount] = []
        if checker:
            from pytest_jeval.sandbox.shell.providers import CHECKER_HOME, checker_environment

            env = {**self.env, **checker_environment()}
            env["PATH"] = self.env.get("PATH", env["PATH"])
            self._checks += 1
            fresh = self.io_dir(f"checker-{self._checks}")
            home, tmp = fresh / "home", fresh / "tmp"
            home.mkdir(mode=0o700)
            tmp.mkdir()
            os.chmod(tmp, 0o1777)
            os.chown(home, ENV_UID_BASE + self.uid, ENV_UID_BASE + self.gid)
            os.chown(tmp, ENV_UID_BASE, ENV_UID_BASE)
            mounts = [Mount(home, CHECKER_HOME, writable=True), Mount(tmp, "/tmp", writable=True)]
        with self._lock:
            return self._enter(self._spec(("/bin/bash", "-c", command), env=env, mounts=mounts), timeout=timeout,
                               stdin=stdin)

    def run(self, argv: Sequence[str], *, timeout: float, cwd: str | None = None, env: Mapping[str, str] | None = None,
            mounts: Sequence[Mount] = (), uid: int | None = None, stdin: str | None = None) -> ExecOutcome:
        """Any command line with its own environment, working directory, binds and identity (the verifier's)."""
        with self._lock:
            spec = self._spec(argv, cwd=cwd, env=env, mounts=mounts)
            if uid is not None:
                spec = dataclasses.replace(spec, uid=uid, gid=uid)
            return self._enter(spec, timeout=timeout, stdin=stdin)

    def io_dir(self, name: str) -> Path:
        """A fresh host folder ``io/<name>`` (owned by container root) to bind into a later command."""
        if self.root is None:
            raise RuntimeError("the sandbox was stopped")
        path = self.root / "io" / name
        if os.path.lexists(path):
            remove_tree(str(path))
        path.mkdir(mode=0o755)
        os.chown(path, ENV_UID_BASE, ENV_UID_BASE)
        return path

    def copy_in(self, source: Path, dest: str) -> None:
        """Copy a host file or folder to ``dest`` (anywhere), owned by container root."""
        staging = self.io_dir("in")
        target = staging / "item"
        copy_plain(Path(source), target)
        outcome = self.run(("/bin/sh", "-c", 'mkdir -p "$(dirname "$1")" && cp -a --no-preserve=ownership '
                            '/jeval/in/item "$1"', "sh", dest), timeout=120, mounts=[Mount(staging, "/jeval/in")],
                           uid=0)
        if outcome.returncode != 0:
            raise RuntimeError(f"copying {source} to {dest} failed: {outcome.stderr.strip()[-500:]}")

    def copy_out(self, source: str, dest: Path) -> None:
        """Copy the file ``source`` (as the sandbox sees it) to the host path ``dest``."""
        with open(dest, "wb") as out, self._lock:
            outcome = self._enter(self._spec(("/bin/cat", "--", source)), timeout=120, stdout=out)
        if outcome.returncode != 0:
            raise ValueError(f"{source} cannot be read in the sandbox: {outcome.stderr.strip()[-300:]}")

    def upper_bytes(self) -> int:
        """Bytes this sandbox has written so far (its own layer)."""
        from pytest_jeval.sandbox.shell.images import tree_bytes

        return tree_bytes(self.root / "upper") if self.root is not None else 0

    def stop(self) -> None:
        """Let its namespaces go and delete the sandbox's layer and files (no process of it runs between
        commands)."""
        with self._lock:
            root, self.root = self.root, None
            keeper, self._keeper = self._keeper, None
            with _live_lock:
                _live.discard(self)
        if keeper is not None:
            keeper.close()
        self._cgroup_stack.close()  # the cgroup is removed (whatever is left in it is killed)
        self.cgroup = None
        if root is not None:
            remove_tree(str(root))
            os.close(self._held)


LOCK_NAME = ".jeval-owner.lock"
"""In each sandbox folder: locked by the process that owns it (so a later process can tell a leftover)."""
_swept: set[str] = set()


def _remove_stale(base: str) -> None:
    """Delete the sandbox folders of processes that died without stopping them (once per base per process)."""
    if base in _swept:
        return
    _swept.add(base)
    for entry in Path(base).glob("tb-*"):
        try:
            if time.time() - os.lstat(entry / LOCK_NAME).st_mtime < 60:
                continue  # young: its owner may not have locked it yet
            fd = os.open(entry / LOCK_NAME, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # being made right now, or not ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # its owner is alive
        try:
            remove_tree(str(entry))
        finally:
            os.close(fd)


def _episode_base(parent: str | None) -> str:
    """``<tmp>/jeval-images-<euid>``: 0711, so the namespace uids can reach their own 0700 folders."""
    base = Path(parent or tempfile.gettempdir()) / f"jeval-images-{os.geteuid()}"
    base.mkdir(mode=0o711, exist_ok=True)
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise RuntimeError(f"{base} must be a directory owned by uid {os.geteuid()}")
    os.chmod(base, 0o711)
    return str(base)


def copy_plain(source: Path, target: Path, owner: int = ENV_UID_BASE) -> None:
    """Copy files and folders, owned by ``owner`` (container root), modes kept without set-id bits; links and
    special files are refused."""
    info = os.lstat(source)
    if stat.S_ISDIR(info.st_mode):
        target.mkdir(mode=0o755)
        for child in sorted(os.listdir(source)):
            copy_plain(source / child, target / child, owner)
    elif stat.S_ISREG(info.st_mode):
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, stat.S_IMODE(info.st_mode) & 0o777 | 0o400)
    else:
        raise ValueError(f"{source} is a link or special file")
    os.lchown(target, owner, owner)
