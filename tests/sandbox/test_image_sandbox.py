"""Image sandboxes: a checker exec (``exec(..., checker=True)``) gets nothing the agent prepared (a fresh
``HOME`` and ``/tmp``, the harness's environment over the image's ``ENV``, the image's ``PATH``), and a task's
``memory_mb`` bounds all the sandbox's processes together where cgroups are usable."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pytest_jeval.sandbox.quota import cgroup_support
from pytest_jeval.sandbox.shell.image_sandbox import ImageSandbox
from tests.support.terminalbench import HARBOR, built


def _box(memory_mb: int | None = None) -> ImageSandbox:
    env = built(HARBOR / "fix-median")  # python:3.11-slim-bookworm with an ENV, a WORKDIR and pip installs
    return ImageSandbox(env.lowers, env=dict(env.env), workdir=env.workdir, uid=env.uid, gid=env.gid,
                        memory_mb=memory_mb)


@pytest.fixture
def box() -> Iterator[ImageSandbox]:
    sandbox = _box()
    yield sandbox
    sandbox.stop()


def test_a_checker_exec_sees_a_fresh_home_and_tmp_and_the_harness_environment(box: ImageSandbox) -> None:
    image_path = box.env["PATH"]
    planted = box.exec("echo planted > /tmp/planted; mkdir -p /root/.config; echo x > /root/.config/planted; "
                       "echo 'export EVIL=1' >> /root/.bashrc; echo -n $HOME", timeout=60)
    assert planted.returncode == 0, planted.stderr
    check = box.exec('ls -A /tmp "$HOME"; echo "home=$HOME evil=${EVIL-unset} path=$PATH '
                     'hooks=$(git config core.hooksPath 2>/dev/null || echo none)"; touch /tmp/mine "$HOME/mine"',
                     timeout=60, checker=True)
    assert check.returncode == 0, check.stderr
    lines = check.stdout.splitlines()
    assert "planted" not in check.stdout and ".bashrc" not in check.stdout  # both folders are fresh and empty
    assert lines[-1].startswith("home=/root evil=unset path=" + image_path + " ")
    # the second checker run gets fresh folders again; the agent's files are still in its own layer
    again = box.exec("ls -A /tmp /root", timeout=60, checker=True)
    assert "mine" not in again.stdout and "planted" not in again.stdout
    assert box.exec("cat /tmp/planted /root/.config/planted", timeout=60).stdout.split() == ["planted", "x"]


ALLOCATE = "python3 -c 'import sys; b = bytearray(int(sys.argv[1]) * 2**20); b[::4096] = b\"x\" * len(b[::4096]); print(\"ok\")' "


def test_memory_mb_bounds_the_sandboxs_processes_where_cgroups_are_usable() -> None:
    usable, why = cgroup_support()
    sandbox = _box(memory_mb=96)
    try:
        if not usable:
            assert sandbox.memory_limited == f"not enforced: {why or 'cgroups are not usable here'}"
            return
        assert sandbox.memory_limited == "cgroup"
        small = sandbox.exec(ALLOCATE + "16", timeout=120)
        assert small.returncode == 0 and small.stdout.strip() == "ok", small.stderr
        large = sandbox.exec(ALLOCATE + "400", timeout=120)
        assert large.returncode != 0 and "ok" not in large.stdout
        assert sandbox.oom_kills() >= 1
        cgroup = sandbox.cgroup
        assert cgroup is not None and all(os.path.isdir(d) for d in cgroup.dirs.values())
    finally:
        sandbox.stop()
    assert not any(os.path.exists(d) for d in cgroup.dirs.values())  # removed with the sandbox
