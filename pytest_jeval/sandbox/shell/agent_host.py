"""Task sandboxes as the place an external agent CLI runs (:class:`~pytest_jeval.sandbox.confined.AgentHost`).

:func:`agent_host` gives the host of a running task sandbox:

* an :class:`~.image_sandbox.ImageSandbox` (a Terminal-Bench task's environment built from its
  Dockerfile): the agent runs as the image's ``USER`` in the sandbox's kept namespaces, over its
  overlay (what it writes stays for the verifier, as the ``bash`` tool's writes do), with the
  same identity and capabilities as the ``bash`` tool (Docker's defaults, inside a user
  namespace whose uids are unprivileged host uids), its own PID, IPC, UTS and network namespaces
  (only a loopback: the relay to the proxy's socket), and the sandbox's cgroup. The mount points
  its binds needed are removed from the task's file system afterwards.
* a :class:`~.providers.BubblewrapSandbox` (``terminal_lite``): the agent runs as the ``bash``
  tool's commands do (uid 65534 in its own user namespace, no capability, no further user
  namespace), over the task's root file system read-only with ``/app`` and ``/tmp`` read-write,
  assembled on an empty root so its binds need no mount point in the root file system.

Either way the agent sees what :mod:`.hosted` lists (the host's ``/usr`` at ``/jeval/host/usr``,
its own installation at its host path, read-only; its home and the proxy's socket) and nothing
else of the host: not the harness's package, the suite, the datasets, other episodes, nor the
task's ``tests/`` and ``solution/`` (never in the sandbox during the agent phase).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.bwrap import Bind, Layout
from pytest_jeval.sandbox.confined import PACKAGE_DIR, RELAY_PORT, Confinement
from pytest_jeval.sandbox.limits import MIB, make_preexec, world_accessible
from pytest_jeval.sandbox.quota import run_cgroup
from pytest_jeval.sandbox.shell.hosted import AGENT_HOME, AGENT_SOCKET, HostedPlan, hosted_plan, relay_command
from pytest_jeval.sandbox.shell.image_sandbox import NSRUN, ImageSandbox, Mount, _payload, _preexec, _spec_file
from pytest_jeval.sandbox.shell.images import ENV_UID_BASE
from pytest_jeval.sandbox.shell.providers import SANDBOX_PATH, TASK_DIR, BubblewrapSandbox
from pytest_jeval.sandbox.workdir import chown_tree

__all__ = ["BubblewrapAgentHost", "ImageAgentHost", "agent_host"]

TAGS = ("task-environment", "userns", "pidns", "netns", "mountns", "ipcns", "utsns", "proxy-only-network")


def _plan(argv: Sequence[str], readable: Sequence[str], env: Mapping[str, str]) -> HostedPlan:
    return hosted_plan(argv, readable=readable, search_path=os.environ.get("PATH", ""),
                       relay=relay_command(RELAY_PORT, AGENT_SOCKET), adapter_path=env.get("PATH", ""),
                       hidden=os.path.realpath(PACKAGE_DIR))


def _covers(binds: Sequence[tuple[str, str]]) -> list[str]:
    """Where the harness's package shows through a bound folder (the host's ``/usr`` of an installed harness)."""
    hidden = os.path.realpath(PACKAGE_DIR)
    out = []
    for source, dest in binds:
        real = os.path.realpath(source)
        if hidden.startswith(real.rstrip("/") + "/"):
            out.append(dest.rstrip("/") + hidden[len(real):])
    return out


class ImageAgentHost:
    """An external agent in a Terminal-Bench task's image sandbox (see the module docstring)."""

    home = AGENT_HOME

    def __init__(self, box: ImageSandbox) -> None:
        self.box = box
        self.workdir = box.workdir

    def _root_exec(self, script: str, args: Sequence[str]) -> str:
        box = self.box
        spec = dataclasses.replace(box._spec(("/bin/sh", "-c", script, "sh", *args)), uid=0, gid=0)
        return box._enter(spec, timeout=120).stdout

    @contextlib.contextmanager
    def launch(self, argv: Sequence[str], *, home: str, socket_path: str, readable: Sequence[str],
               env: Mapping[str, str]) -> Iterator[Confinement]:
        """The launch of ``argv`` (its relay first) in the sandbox, held for the ``with`` block."""
        box = self.box
        plan = _plan(argv, readable, env)
        inside_env = {**env, "PATH": ":".join([*plan.path_dirs, box.env.get("PATH", SANDBOX_PATH)])}
        chown_tree(home, ENV_UID_BASE + box.uid, ENV_UID_BASE + box.gid)
        mounts = [Mount(Path(home), AGENT_HOME, writable=True), Mount(Path(socket_path), AGENT_SOCKET, writable=True)]
        stage: list[tuple[str, str]] = []
        for source, dest in plan.binds:
            if not world_accessible(source):  # below /root: bound by host root first, at a public folder
                target = bwrap_mod._stage_target(source)
                stage.append((source, target))
                source = target
            mounts.append(Mount(Path(source), dest))
        spec_file = None
        with box._lock:
            if box.root is None:
                raise RuntimeError("the sandbox was stopped")
            box._stage = tuple(stage)
            prefixes = sorted({"/".join(m.target.split("/")[:i]) for m in mounts
                               for i in range(2, m.target.count("/") + 2)})
            made = self._root_exec('for p; do [ -e "$p" ] || [ -L "$p" ] || echo "$p"; done', prefixes).split()
            try:
                spec = dataclasses.replace(box._spec(plan.argv, env=inside_env, mounts=mounts, network=False),
                                           covers=tuple(_covers(plan.binds)))
                assert box._keeper is not None  # made by the exec above, with the staged binds
                spec_file = _spec_file({**_payload(spec), "pidfd": box._keeper.pidfd})
                fds = box.cgroup.attach_fds() if box.cgroup is not None else []
                popen: dict[str, Any] = {"pass_fds": (box._keeper.pidfd,),
                                         "preexec_fn": _preexec(10**7, box.file_size_mb * 2**20, fds)}
                tags = [*TAGS, "task-identity", *(("cgroup-memory", "cgroup-pids") if box.cgroup else ())]
                yield Confinement([sys.executable, "-I", "-S", str(NSRUN), "enter", spec_file], popen, box.cgroup,
                                  tags, None, env=inside_env, cwd="/")
            finally:
                if spec_file is not None:
                    os.unlink(spec_file)
                if box.cgroup is not None:
                    box.cgroup.kill_all()
                    box.cgroup.close()
                box._stage = ()
                if made and box.root is not None:  # the mount points the binds needed: gone from the task's files
                    self._root_exec('for p; do if [ -d "$p" ] && [ ! -L "$p" ]; then rmdir -- "$p" 2>/dev/null; '
                                    'elif [ -f "$p" ] && [ ! -s "$p" ]; then rm -f -- "$p"; fi; done',
                                    sorted(made, key=lambda p: -p.count("/")))


class BubblewrapAgentHost:
    """An external agent in a ``terminal_lite`` bubblewrap sandbox (see the module docstring)."""

    home = AGENT_HOME
    workdir = TASK_DIR

    def __init__(self, box: BubblewrapSandbox) -> None:
        self.box = box

    @contextlib.contextmanager
    def launch(self, argv: Sequence[str], *, home: str, socket_path: str, readable: Sequence[str],
               env: Mapping[str, str]) -> Iterator[Confinement]:
        """The launch of ``argv`` (its relay first) over the task's root file system, held for the ``with`` block."""
        box = self.box
        if box.root is None:
            raise RuntimeError("the sandbox was stopped")
        plan = _plan(argv, readable, env)
        inside_env = {**env, "PATH": ":".join([*plan.path_dirs, SANDBOX_PATH])}
        if box.owner is not None:
            chown_tree(home, *box.owner)
        binds = [Bind(str(box.root / "app"), TASK_DIR, writable=True),
                 Bind(str(box.root / "tmp"), "/tmp", writable=True),
                 Bind(home, AGENT_HOME, writable=True), Bind(socket_path, AGENT_SOCKET),
                 *(Bind(source, dest) for source, dest in plan.binds)]
        layout = Layout(binds=binds, root=str(box.rootfs), splice=True, tmp_bytes=None, chdir=TASK_DIR,
                        hostname="jeval-task", hide=[PACKAGE_DIR])
        command = bwrap_mod.command(box.bwrap, layout, plan.argv, stage=box.owner is not None and os.geteuid() == 0)
        with run_cgroup(box.memory_mb * MIB, box.max_processes) as cgroup:
            fds = cgroup.attach_fds() if cgroup is not None else []
            popen = {"preexec_fn": make_preexec(None, identity=box.owner, cgroup_fds=fds, staged=command.staged)}
            tags = [*TAGS, "no-caps", "built-fs", *(("cgroup-memory", "cgroup-pids") if cgroup else ())]
            yield Confinement(command.argv, popen, cgroup, tags, box.owner, env=inside_env, cwd="/")


def agent_host(sandbox: Any) -> ImageAgentHost | BubblewrapAgentHost | None:
    """The host of an external agent in ``sandbox``, or None when it cannot host one (a container engine's)."""
    if isinstance(sandbox, ImageSandbox):
        return ImageAgentHost(sandbox)
    if isinstance(sandbox, BubblewrapSandbox):
        return BubblewrapAgentHost(sandbox)
    return None
