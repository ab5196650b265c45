"""Choosing, once per process, the strongest isolation that works on this machine.

Candidates are tried from strongest to weakest by actually running a tiny Python
program through them (a probe); the first that works is cached and used for
every run. What each tag means:

``subprocess``  separate interpreter (``python -I -B``), never in-process.
``session``     own session/process group, killed as a whole (``os.killpg``).
``rlimits``     CPU, address space, processes, file size, open files, no core dumps.
``env-scrub``   only PATH, LANG, HOME and TMPDIR are passed.
``tmpdir``      fresh private working directory, deleted afterwards.
``uid-drop``    runs as an unprivileged user (``nobody``) - only when started as root.
``userns``      unprivileged user namespace (non-root Linux), needed for the namespaces below.
``netns``       own network namespace: only a down loopback, no network at all.
``pidns``       own PID namespace: sees only its own processes; all die with it.
``ipcns`` ``utsns`` ``mountns``  own System V IPC, hostname and mount table (private /proc).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from ._limits import Limits, make_preexec, sandbox_base_dir, sandbox_python, scrubbed_env

BASE_TAGS = ("subprocess", "session", "rlimits", "env-scrub", "tmpdir")
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


def candidate_plans() -> list[IsolationPlan]:
    """Isolation plans for this platform and user, strongest first."""
    plans: list[IsolationPlan] = []
    if sys.platform.startswith("linux"):
        unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
        if os.geteuid() == 0:
            uid, gid = _nobody()
            drop = (setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--no-new-privs", "--") if setpriv else None
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


def probe(plan: IsolationPlan, timeout: float = 20.0) -> bool:
    """True when ``plan`` starts Python on this machine and delivers what it promises."""
    home = tempfile.mkdtemp(prefix="jeval-probe-", dir=sandbox_base_dir(plan.run_as is not None))
    try:
        if plan.run_as:
            os.chown(home, *plan.run_as)
        kwargs: dict = {}
        if plan.popen_user and plan.run_as:
            kwargs = {"user": plan.run_as[0], "group": plan.run_as[1], "extra_groups": []}
        limits = Limits.for_run(timeout, 1024, 64, 16)
        proc = subprocess.run(
            [*plan.prefix, sandbox_python(), "-I", "-S", "-B", "-c", _PROBE], cwd=home, env=scrubbed_env(home),
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
            start_new_session=True, preexec_fn=make_preexec(limits), **kwargs)
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    finally:
        shutil.rmtree(home, ignore_errors=True)
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
