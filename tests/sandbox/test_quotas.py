"""Quotas for a run and an episode as a whole, each tested with the attack that went past the per-process limits.

* one ``python`` tool call forked three children of 600 MiB each (``RLIMIT_AS`` is per process);
* one call wrote 480 MiB into its workspace on the host's file system (64 MiB per file, no total);
* 200,000 files in a terminal task's ``/app`` made every later command walk them (6-8 s each);
* a fork bomb reached 271 processes against a 256 limit;
* a run killed with SIGKILL left its workspace and its cgroup behind.

The memory and process quotas need cgroups (root, cgroup v1 here) and the disk quotas a mounted
file system (root): where the machine has neither, the test says so and is skipped.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.agents.tool import ToolContext
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.workspace import make_workspace, remove_workspace
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox import isolation
from pytest_jeval.sandbox.quota import cgroup_support, quota_fs_support
from pytest_jeval.sandbox.shell.providers import BubblewrapProvider
from pytest_jeval.sandbox.workdir import WORKSPACE_DISK_BYTES
from tests.support.terminal import ensure_rootfs

MIB = 1024 * 1024
needs_cgroups = pytest.mark.skipif(not cgroup_support()[0], reason=f"no cgroups: {cgroup_support()[1]}")
needs_quota_fs = pytest.mark.skipif(not quota_fs_support(), reason="size-limited workspaces need root")


@pytest.fixture
def ws() -> Iterator[Path]:
    if "netns" not in isolation():
        pytest.skip("no network namespace on this machine: the python and bash tools refuse to run")
    path = make_workspace()
    yield path
    remove_workspace(path)


def python_tool(workspace: Path, code: str, timeout: float = 60.0) -> str:
    """The ``python`` tool as a model's call runs it."""
    fn = TOOLS.get("python").fn
    assert fn is not None
    return str(fn(code=code, ctx=ToolContext(sample=Sample(id="s", input="q"), workspace=workspace, timeout=timeout)))


@pytest.mark.slow
@needs_cgroups
def test_three_children_of_600_mib_do_not_fit_in_one_call(ws: Path) -> None:
    code = textwrap.dedent("""
        import os, time
        r, w = os.pipe()
        pids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                os.close(r)
                block = bytearray(600 * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(w, b"1")
                time.sleep(4)  # hold it while the others allocate
                os._exit(0)
            pids.append(pid)
        os.close(w)
        statuses = [os.waitpid(pid, 0)[1] for pid in pids]
        held = len(os.read(r, 10))
        print("held", held, "killed", sum(1 for s in statuses if os.WIFSIGNALED(s)))
        """)
    out = python_tool(ws, code)
    # 1 GiB for the whole call: one 600 MiB child at a time, the kernel kills the others (or the whole program)
    found = re.search(r"held (\d+) killed (\d+)", out)
    if found:
        assert int(found.group(2)) >= 2, out
    else:
        assert "(killed by signal 9) (out of memory)" in out, out


@needs_quota_fs
def test_one_call_cannot_fill_the_disk(ws: Path) -> None:
    code = textwrap.dedent("""
        written = 0
        try:
            for i in range(12):
                with open(f"blob{i}", "wb") as fh:
                    fh.write(b"x" * (60 * 1024 * 1024))
                written += 60
        except OSError as exc:
            print("refused:", exc.strerror)
        print("written", written)
        """)
    out = python_tool(ws, code)
    assert "refused: No space left on device" in out, out
    written = int(out.split("written ")[1].split()[0])
    assert written * MIB <= WORKSPACE_DISK_BYTES
    assert os.statvfs(ws).f_blocks * os.statvfs(ws).f_frsize <= WORKSPACE_DISK_BYTES  # its own file system


@pytest.fixture
def box() -> Iterator[object]:
    ensure_rootfs()
    sandbox = BubblewrapProvider().start(None)
    yield sandbox
    sandbox.stop()


@needs_quota_fs
def test_files_in_app_are_bounded_and_later_commands_do_not_walk_them(box: object) -> None:
    make = box.exec(  # type: ignore[attr-defined]
        "python3 -c 'import os\nn = 0\ntry:\n    while n < 200000:\n        open(f\"f{n}\", \"w\").close()\n"
        "        n += 1\nexcept OSError as e:\n    print(e.strerror)\nprint(n)'", timeout=300)
    lines = make.stdout.split("\n")
    assert lines[0] == "No space left on device" and int(lines[1]) < 200_000, make
    probe = Path(box.root) / "app" / "f1"  # type: ignore[attr-defined]
    before = os.lstat(probe)
    later = box.exec("ls | wc -l", timeout=60)  # type: ignore[attr-defined]
    after = os.lstat(probe)
    assert int(later.stdout) == int(lines[1])
    assert (after.st_ctime_ns, after.st_uid) == (before.st_ctime_ns, before.st_uid)  # nothing chowned between execs


@needs_cgroups
def test_a_fork_bomb_stops_at_the_process_limit(box: object) -> None:
    bomb = box.exec(  # type: ignore[attr-defined]
        "python3 -c 'import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
        "            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
        "    print(n, e.strerror)'", timeout=120)
    forked = int(bomb.stdout.split()[0])
    assert "Resource temporarily unavailable" in bomb.stdout and forked < 256, bomb


@needs_quota_fs
def test_a_killed_runs_workspace_and_cgroup_are_removed_by_the_next_run(tmp_path: Path) -> None:
    leave = textwrap.dedent("""
        import os, sys, time
        from pytest_jeval.sandbox.quota import run_cgroup
        from pytest_jeval.sandbox.workdir import make_workspace_dir
        path = make_workspace_dir()
        open(os.path.join(path, "left.txt"), "w").write("x")
        with run_cgroup(64 * 1024 * 1024, 8) as group:
            print(path, *(group.dirs.values() if group else ()), flush=True)
            time.sleep(600)
        """)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with subprocess.Popen([sys.executable, "-c", leave], stdout=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        left = proc.stdout.readline().split()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    workspace, *cgroups = left
    assert os.path.ismount(workspace) and all(os.path.isdir(c) for c in cgroups)  # left behind
    nxt = subprocess.run([sys.executable, "-c", "from pytest_jeval.sandbox.workdir import make_workspace_dir, "
                          "remove_workspace_dir\nremove_workspace_dir(make_workspace_dir())"], env=env, check=True)
    assert nxt.returncode == 0
    assert not os.path.exists(workspace) and not any(os.path.exists(c) for c in cgroups)
