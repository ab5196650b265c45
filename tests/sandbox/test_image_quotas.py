"""A Terminal-Bench task sandbox bounds memory and processes for all its commands together (a cgroup).

The image sandbox gave each command per-process rlimits only, so three children of 150 MiB each fitted
under a 256 MiB task (``memory_mb``), and a fork bomb was bounded only by the per-uid process limit that
every sandbox shares. With a cgroup per sandbox (root, cgroup v1 here) both are bounded as a whole; where
the machine has no cgroups the test says so and is skipped.
"""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator

import pytest

from pytest_jeval.sandbox.quota import cgroup_support
from pytest_jeval.sandbox.shell.environments import BuiltEnvironment, build_environment, plan_environment
from pytest_jeval.sandbox.shell.image_sandbox import ImageSandbox
from tests.support.terminalbench import require_image_sandboxes

pytestmark = pytest.mark.skipif(not cgroup_support()[0], reason=f"no cgroups: {cgroup_support()[1]}")

HOG = textwrap.dedent("""
    import os, time
    r, w = os.pipe()
    pids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            block = bytearray(150 * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(w, b"1")
            time.sleep(3)  # hold it while the others allocate
            os._exit(0)
        pids.append(pid)
    os.close(w)
    statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    print("held", len(os.read(r, 10)), "killed", sum(1 for s in statuses if os.WIFSIGNALED(s)))
    """)
BOMB = textwrap.dedent("""
    import os, time
    refused = 0
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError:  # EAGAIN at the limit; no retries with back-off, as bash does
            refused += 1
            continue
        if pid == 0:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            time.sleep(30)
            os._exit(0)
    print(refused, sum(1 for p in os.listdir("/proc") if p.isdigit()))
    """)
"""A fork bomb: 200 children that sleep; prints the forks refused and the processes it can see."""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnvironment:
    require_image_sandboxes()
    context = tmp_path_factory.mktemp("ctx") / "environment"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM python:3.11-slim-bookworm\nWORKDIR /app\n")
    return build_environment(plan_environment(context / "Dockerfile"), log=False)


@contextlib.contextmanager
def _box(env: BuiltEnvironment, **limits: int) -> Iterator[ImageSandbox]:
    box = ImageSandbox(env.lowers, env=dict(env.env), workdir=env.workdir, **limits)  # type: ignore[arg-type]
    try:
        yield box
    finally:
        box.stop()


@pytest.mark.slow
def test_three_children_of_150_mib_do_not_fit_in_a_256_mib_task(env: BuiltEnvironment) -> None:
    with _box(env, memory_mb=256, max_processes=64) as box:
        assert box.cgroup is not None
        out = box.exec(f"python3 -c '{HOG}'", timeout=120)
        _held, killed = map(int, out.stdout.split()[1::2]) if out.stdout.startswith("held") else (0, 3)
        assert killed >= 1 or out.returncode != 0, (out.stdout, out.stderr)  # not all three fitted together
        assert box.cgroup.oom_kills() >= 1
        assert box.exec("echo still-usable", timeout=60).stdout.strip() == "still-usable"
    with _box(env) as box:  # without the limit the same program holds all three (the guard is what stops it)
        assert box.cgroup is None
        out = box.exec(f"python3 -c '{HOG}'", timeout=120)
        assert out.stdout.split() == ["held", "3", "killed", "0"], (out.stdout, out.stderr)


def test_a_fork_bomb_stops_at_the_task_s_process_limit(env: BuiltEnvironment) -> None:
    with _box(env, memory_mb=1024, max_processes=64) as box:
        out = box.exec(f"python3 -c '{BOMB}'", timeout=120)
        assert len(out.stdout.split()) == 2, (out.returncode, out.stdout, out.stderr)
        refused, seen = map(int, out.stdout.split())
        assert box.cgroup is not None and box.cgroup.forks_refused() >= 1 and refused >= 1, out
        assert seen <= 64, out.stdout  # the processes the command could see at the end
