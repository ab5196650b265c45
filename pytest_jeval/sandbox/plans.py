"""Choosing, once per process, the strongest isolation that works on this machine.

Candidates are tried from strongest to weakest by actually running a tiny Python
program through them (a probe); the first that works is cached and used for
every run. What each tag means:

``bwrap``       bubblewrap (:mod:`.bwrap`): new user, PID, network, IPC, UTS and mount namespaces,
                no capability; only ``/usr`` (and ``/bin``, ``/lib*``, a few ``/etc`` files, the
                interpreter's prefix) read-only, a private ``/proc``, ``/dev``, ``/tmp`` and
                ``/dev/shm``; the run directory is the only host directory mounted (at
                ``/sandbox``); no further user namespaces.
``uid-per-run`` (root) each run holds its own otherwise unused uid (see ``_uids``).
``pdeathsig``   the launcher gets SIGKILL when the runner dies (however it ends).
``subprocess``  separate interpreter (``python -I -B``), never in-process.
``session``     own session/process group, killed as a whole (``os.killpg``).
``rlimits``     CPU, address space, processes, file size, open files, no core dumps.
``cgroup-memory`` ``cgroup-pids``  the run's processes together (:mod:`.quota`), where cgroups are usable.
``env-scrub``   only PATH, LANG, HOME and TMPDIR are passed.
``tmpdir``      fresh private working directory, deleted afterwards.
``uid-drop``    runs as an unprivileged user (``nobody``) - only when started as root.
``userns``      unprivileged user namespace (non-root Linux), needed for the namespaces below.
``netns``       own network namespace: only a down loopback, no network at all.
``pidns``       own PID namespace: sees only its own processes; all die with it.
``ipcns`` ``utsns`` ``mountns``  own System V IPC, hostname and mount table (private /proc).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.bwrap import SANDBOX_UID, TMPFS_BYTES, Bind, Layout
from pytest_jeval.sandbox.files import make_run_dir, private_base_dir, remove_tree
from pytest_jeval.sandbox.limits import Limits, make_preexec, sandbox_base_dir, sandbox_python, scrubbed_env
from pytest_jeval.sandbox.quota import RunCgroup
from pytest_jeval.sandbox.uids import run_uid

__all__ = ["BASE_TAGS", "BWRAP_TAGS", "SANDBOX_HOME", "SANDBOX_UID", "TMPFS_BYTES", "IsolationPlan", "base_dir",
           "bwrap_command", "candidate_plans", "current_plan", "popen_identity", "probe", "quota_tags",
           "reset_plan", "run_identity", "sandbox_layout", "spawn_options"]

BASE_TAGS = ("subprocess", "session", "rlimits", "env-scrub", "tmpdir",
             *(("pdeathsig",) if sys.platform.startswith("linux") else ()))
BWRAP_TAGS = ("bwrap", "userns", "netns", "pidns", "ipcns", "utsns", "mountns", "ro-system", "private-tmp")
#: Where the run directory appears inside a bubblewrap sandbox (its cwd and HOME).
SANDBOX_HOME = "/sandbox"
NAMESPACE_FLAGS = ("--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount", "--mount-proc")
NAMESPACE_TAGS = ("netns", "pidns", "ipcns", "utsns", "mountns")
# With --pid the first process in the namespace is its init: the kernel does not
# deliver default-action signals to it (not even SIGXCPU) and nothing reaps its
# orphans. A shell as init waits for the real program and passes on its status
# (128 + signal number when it was killed by a signal).
SHELL_INIT = ("/bin/sh", "-c", '"$@"; exit $?', "sh")


def _nobody() -> tuple[int, int]:
    try:
        import pwd

        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except (ImportError, KeyError):  # pragma: no cover - unusual systems
        return 65534, 65534


@dataclasses.dataclass(frozen=True)
class IsolationPlan:
    """How to start a sandboxed child: a command prefix and an optional uid drop."""

    name: str
    prefix: tuple[str, ...] = ()
    """Put before the ``python`` command line (unshare, shell init, setpriv)."""
    run_as: tuple[int, int] | None = None
    """(uid, gid) the program runs as; its temporary directory is chowned to it."""
    popen_user: bool = False
    """Drop to ``run_as`` with Popen's ``user``/``group`` instead of ``setpriv``."""
    shell_init: bool = False
    """Exit statuses above 128 mean "killed by signal status-128"."""
    tags: tuple[str, ...] = BASE_TAGS
    expect_uid: int | None = None
    expect_no_network: bool = False
    bwrap: str | None = None
    """Path of ``bwrap`` for the bubblewrap plans (the command line is built per run)."""
    uid_per_run: bool = False
    """Each run takes a fresh uid from ``_uids`` (root only) and runs ``bwrap`` as it."""

    @property
    def drops_privileges(self) -> bool:
        """True when the sandboxed program runs as a uid other than the runner's."""
        return self.run_as is not None or self.uid_per_run

    def command(self, python: str, args: list[str], run_dir: str) -> tuple[list[str], str, str]:
        """``(argv, cwd, home)`` of one run: ``home`` is the run directory as the program sees it."""
        if self.bwrap is None:
            return [*self.prefix, python, *args], run_dir, run_dir
        real = os.path.realpath(python)  # the link (a venv's bin/python) is not mounted
        return bwrap_mod.command(self.bwrap, sandbox_layout(real, run_dir), [real, *args]).argv, run_dir, SANDBOX_HOME


def sandbox_layout(python: str, run_dir: str) -> Layout:
    """What a generated-code sandbox holds: the system directories, the interpreter's prefix (read-only)
    and the run directory (read-write, at :data:`SANDBOX_HOME`, its working directory)."""
    binds = []
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    if prefix not in ("/", "/usr") and not prefix.startswith("/usr/"):
        binds.append(Bind(prefix, prefix))
    binds.append(Bind(run_dir, SANDBOX_HOME, writable=True))
    return Layout(binds=binds, chdir=SANDBOX_HOME, hostname="jeval-sandbox", etc=("ld.so.cache", "localtime"),
                  etc_made=False)


def bwrap_command(bwrap: str, python: str, run_dir: str) -> list[str]:
    """The ``bwrap`` options of one run (everything before the program): see :func:`sandbox_layout`."""
    argv = bwrap_mod.command(bwrap, sandbox_layout(python, run_dir), ["PROGRAM"]).argv
    return argv[:-2]  # without "--" and the placeholder


def spawn_options(plan: IsolationPlan, owner: tuple[int, int] | None, limits: Limits | None, *,
                  cgroup: RunCgroup | None = None, staged: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """``Popen`` keyword arguments that confine one run's launcher: its cgroup, staged binds, the uid
    drop (``owner``, for plans that drop privileges in the launcher) and ``limits``."""
    identity = owner if (plan.popen_user or plan.uid_per_run) else None
    fds = cgroup.attach_fds() if cgroup is not None else []
    return {"preexec_fn": make_preexec(limits, identity=identity, cgroup_fds=fds, staged=staged)}


def quota_tags(cgroup: RunCgroup | None) -> tuple[str, ...]:
    """The isolation tags a run's cgroup adds."""
    return ("cgroup-memory", "cgroup-pids") if cgroup is not None else ()


def candidate_plans() -> list[IsolationPlan]:
    """Isolation plans for this platform and user, strongest first."""
    plans: list[IsolationPlan] = []
    if sys.platform.startswith("linux"):
        unshare, setpriv, bwrap = shutil.which("unshare"), shutil.which("setpriv"), shutil.which("bwrap")
        if bwrap and os.geteuid() == 0:
            plans.append(IsolationPlan(
                "bubblewrap+uid-per-run", popen_user=True, shell_init=True, bwrap=bwrap, uid_per_run=True,
                tags=(*BASE_TAGS, "uid-drop", "uid-per-run", *BWRAP_TAGS),
                expect_uid=SANDBOX_UID, expect_no_network=True))
        elif bwrap:
            plans.append(IsolationPlan(
                "bubblewrap", shell_init=True, bwrap=bwrap, tags=(*BASE_TAGS, *BWRAP_TAGS),
                expect_uid=SANDBOX_UID, expect_no_network=True))
        if os.geteuid() == 0:
            uid, gid = _nobody()
            drop = ((setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--no-new-privs", "--")
                    if setpriv else None)
            if unshare and drop and os.path.exists(SHELL_INIT[0]):
                plans.append(IsolationPlan(
                    "namespaces+uid-drop", (unshare, *NAMESPACE_FLAGS, "--", *SHELL_INIT, *drop), (uid, gid),
                    shell_init=True, tags=(*BASE_TAGS, "uid-drop", *NAMESPACE_TAGS),
                    expect_uid=uid, expect_no_network=True))
            if unshare and drop:
                plans.append(IsolationPlan(
                    "netns+uid-drop", (unshare, "--net", "--", *drop), (uid, gid),
                    tags=(*BASE_TAGS, "uid-drop", "netns"), expect_uid=uid, expect_no_network=True))
            plans.append(IsolationPlan(
                "uid-drop", (), (uid, gid), popen_user=True, tags=(*BASE_TAGS, "uid-drop"), expect_uid=uid))
        elif unshare and os.path.exists(SHELL_INIT[0]):
            plans.append(IsolationPlan(
                "userns+namespaces", (unshare, "--user", "--map-root-user", *NAMESPACE_FLAGS, "--", *SHELL_INIT),
                shell_init=True, tags=(*BASE_TAGS, "userns", *NAMESPACE_TAGS), expect_no_network=True))
    plans.append(IsolationPlan("basic"))
    return plans


_PROBE = "import os, socket; print(os.getuid(), ','.join(sorted(n for _, n in socket.if_nameindex())))"


def base_dir(plan: IsolationPlan) -> str:
    """The 0711 directory the plan's run directories are made in."""
    return private_base_dir(sandbox_base_dir(plan.drops_privileges))


@contextlib.contextmanager
def run_identity(plan: IsolationPlan) -> Iterator[tuple[int, int] | None]:
    """The ``(uid, gid)`` one run's program and files belong to (``None``: the runner's)."""
    if plan.uid_per_run:
        with run_uid(base_dir(plan)) as uid:
            yield uid, uid
    else:
        yield plan.run_as


def popen_identity(plan: IsolationPlan, owner: tuple[int, int] | None) -> dict[str, Any]:
    """Popen's ``user``/``group`` arguments for a run (empty when the plan drops no privileges there)."""
    if plan.popen_user and owner is not None:
        return {"user": owner[0], "group": owner[1], "extra_groups": []}
    return {}


def probe(plan: IsolationPlan, timeout: float = 20.0) -> bool:
    """True when ``plan`` starts Python on this machine and delivers what it promises."""
    try:
        with run_identity(plan) as owner:
            home = make_run_dir(base_dir(plan), owner)
            try:
                argv, cwd, inner_home = plan.command(
                    sandbox_python(plan.drops_privileges), ["-I", "-S", "-B", "-c", _PROBE], home)
                limits = Limits.for_run(timeout, 1024, 64, 16)
                proc = subprocess.run(
                    argv, cwd=cwd, env=scrubbed_env(inner_home, "/tmp" if plan.bwrap else None),
                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                    start_new_session=True, **spawn_options(plan, owner, limits))
            finally:
                remove_tree(home)
    except (OSError, subprocess.SubprocessError, ValueError, RuntimeError):
        return False
    if proc.returncode != 0:
        return False
    parts = proc.stdout.strip().split(" ", 1)
    if plan.expect_uid is not None and parts[0] != str(plan.expect_uid):
        return False
    if plan.expect_no_network and len(parts) == 2 and set(parts[1].split(",")) - {"lo", ""}:
        return False
    return True


_lock = threading.Lock()
_chosen: IsolationPlan | None = None


def current_plan() -> IsolationPlan:
    """The strongest working plan (probed on first use, then cached for the process)."""
    global _chosen
    with _lock:
        if _chosen is None:
            forced = os.environ.get("JEVAL_SANDBOX_ISOLATION")
            for plan in candidate_plans():
                if forced and plan.name != forced:
                    continue
                if plan.name == "basic" or probe(plan):
                    _chosen = plan
                    break
            else:
                _chosen = IsolationPlan("basic")
        return _chosen


def reset_plan() -> None:
    """Forget the cached plan (the next run probes again)."""
    global _chosen
    with _lock:
        _chosen = None
