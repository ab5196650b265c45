"""Environments built from Dockerfiles without Docker, and the image sandboxes that run them.

The build uses the real builder (mmdebstrap base, RUN steps under bubblewrap with the package
registries); it is cached by content outside the repository, so only the first run builds.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from pytest_jeval.sandbox.shell.dockerfile import DockerfileError
from pytest_jeval.sandbox.shell.environments import (
    BuiltEnvironment,
    EnvironmentRefused,
    build_environment,
    plan_environment,
)
from pytest_jeval.sandbox.shell.image_sandbox import DOCKER_CAPS, LOCK_NAME, ImageSandbox, _episode_base
from pytest_jeval.sandbox.shell.images import ENV_UID_BASE
from tests.support.terminalbench import eventually, host_overlay_mounts, processes_with, require_image_sandboxes

DOCKERFILE = """\
FROM python:3.11-slim-bookworm
ARG WHO=world
ENV GREETING="hello $WHO" PATH="/opt/tools:$PATH"
RUN useradd -m -u 1234 builder && mkdir -p /opt/tools
COPY --chown=builder:builder app/ /home/builder/app/
COPY . /ctx/
ADD bundle.tar.gz /opt/bundle/
COPY <<EOF /opt/tools/hi
#!/bin/sh
echo "$GREETING from $(id -un)"
EOF
RUN chmod +x /opt/tools/hi
WORKDIR /home/builder/app
USER builder
RUN hi > hi.txt && id -u > uid.txt && touch /tmp/made-by-builder
"""


def _context(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Dockerfile").write_text(DOCKERFILE)
    (folder / "app").mkdir()
    (folder / "app" / "main.py").write_text("print('main')\n")
    (folder / "secret.txt").write_text("left out by .dockerignore\n")
    (folder / ".dockerignore").write_text("secret.txt\n")
    data = b"inside the archive\n"
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, tarfile.open(fileobj=packed, mode="w") as tar:
        info = tarfile.TarInfo("bundle/readme.txt")
        info.size, info.mtime = len(data), 0
        tar.addfile(info, io.BytesIO(data))
    (folder / "bundle.tar.gz").write_bytes(buffer.getvalue())  # the same bytes every time: the cache key holds
    return folder


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnvironment:
    require_image_sandboxes()
    context = _context(tmp_path_factory.mktemp("ctx") / "environment")
    return build_environment(plan_environment(context / "Dockerfile"), log=False)


@pytest.fixture
def box(env: BuiltEnvironment) -> ImageSandbox:
    sandbox = ImageSandbox(env.lowers, env=dict(env.env), workdir=env.workdir, uid=env.uid, gid=env.gid)
    yield sandbox
    sandbox.stop()


def test_the_dockerfile_is_carried_out(env: BuiltEnvironment, box: ImageSandbox) -> None:
    assert env.workdir == "/home/builder/app" and env.user == "builder" and (env.uid, env.gid) == (1234, 1234)
    assert dict(env.env)["GREETING"] == "hello world" and dict(env.env)["PATH"].startswith("/opt/tools:")
    out = box.exec("pwd; id -un; cat hi.txt uid.txt; stat -c '%U %a' main.py; cat /opt/bundle/bundle/readme.txt; "
                   "ls -A /ctx; ls -ld /tmp/made-by-builder | cut -c1-10", timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:5] == ["/home/builder/app", "builder", "hello world from builder", "1234", "builder 644"]
    assert lines[5] == "inside the archive"
    assert "secret.txt" not in lines[6:] and ".dockerignore" in lines[6:] and "Dockerfile" in lines[6:]
    # the layer holds only the changes: the base is shared
    assert env.layer_bytes < env.base_bytes / 20


def test_the_cache_is_by_content(env: BuiltEnvironment, tmp_path: Path) -> None:
    again = _context(tmp_path / "environment")
    assert plan_environment(again / "Dockerfile").key == env.plan.key  # another folder, the same content
    assert build_environment(plan_environment(again / "Dockerfile"), log=False).cached
    (again / "app" / "main.py").write_text("print('changed')\n")
    assert plan_environment(again / "Dockerfile").key != env.plan.key
    (again / "app" / "main.py").write_text("print('main')\n")
    (again / "secret.txt").write_text("ignored files do not count\n")
    assert plan_environment(again / "Dockerfile").key == env.plan.key


@pytest.mark.parametrize(("dockerfile", "error", "message"), [
    ("FROM alpine:3.20\n", EnvironmentRefused, "Dockerfile:1: FROM alpine:3.20: 'alpine' images are not supported"),
    ("FROM debian:12 AS a\nFROM debian:12\n", EnvironmentRefused, "Dockerfile:2: FROM again: multi-stage builds"),
    ("FROM debian:12\nADD https://example.com/x.tgz /x\n", EnvironmentRefused, "Dockerfile:2: ADD of a URL"),
    ("FROM debian:12\nCOPY --from=builder /a /b\n", EnvironmentRefused, "--from=builder is not supported"),
    ("FROM debian:12\nRUN --mount=type=secret,id=k cat /run/secrets/k\n", EnvironmentRefused,
     "--mount=type=secret,id=k is not supported"),
    ("RUN echo hi\n", DockerfileError, "Dockerfile:1: RUN before FROM"),
    ("FROM debian:12\nRUN echo a \\\n\n", None, None),
])
def test_what_cannot_be_built_is_refused_before_building(tmp_path: Path, dockerfile: str, error: type | None,
                                                         message: str | None) -> None:
    (tmp_path / "Dockerfile").write_text(dockerfile)
    if error is None:
        assert plan_environment(tmp_path / "Dockerfile").base.release == "bookworm"
        return
    with pytest.raises(error) as caught:
        plan_environment(tmp_path / "Dockerfile")
    assert message in str(caught.value)


def test_the_whole_file_system_is_the_sandboxs_own_and_lasts(box: ImageSandbox, env: BuiltEnvironment) -> None:
    denied = box.exec("echo 1 > /etc/agent-file", timeout=60)  # the image's USER (builder) is not root
    assert denied.returncode != 0 and "Permission denied" in denied.stderr
    root = ImageSandbox(env.lowers, env=dict(env.env), workdir="/")
    try:
        done = root.exec("id -u; echo planted > /etc/agent-file; rm /usr/bin/yes; grep CapEff /proc/self/status",
                         timeout=60)
        assert done.returncode == 0, done.stderr
        uid, cap = done.stdout.split("\n")[0], done.stdout.split()[-1]
        assert uid == "0"
        assert int(cap, 16) == _mask(DOCKER_CAPS)
        later = root.exec("cat /etc/agent-file; test -e /usr/bin/yes || echo removed", timeout=60)
        assert later.stdout.split() == ["planted", "removed"]
        # the image itself is untouched: another sandbox over the same layers sees none of it
        other = ImageSandbox(env.lowers, env=dict(env.env), workdir="/")
        try:
            fresh = other.exec("test -e /etc/agent-file || echo absent; test -e /usr/bin/yes && echo present",
                               timeout=60)
            assert fresh.stdout.split() == ["absent", "present"]
        finally:
            other.stop()
        assert (env.base_root / "usr" / "bin" / "yes").exists()
    finally:
        root.stop()


def _mask(names: tuple[str, ...]) -> int:
    numbers = {"CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_FOWNER": 3, "CAP_FSETID": 4, "CAP_KILL": 5,
               "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_RAW": 13,
               "CAP_SYS_CHROOT": 18, "CAP_MKNOD": 27, "CAP_AUDIT_WRITE": 29, "CAP_SETFCAP": 31}
    return sum(1 << numbers[n] for n in names)


def test_no_network_no_host_files_and_nothing_outlives_a_command(box: ImageSandbox, tmp_path: Path) -> None:
    marker = tmp_path / "host-only.txt"
    marker.write_text("host\n")
    out = box.exec(f"python3 -c 'import socket; print(sorted(n for _, n in socket.if_nameindex()))'; "
                   f"test -e {marker} || echo no-host-file; (sleep 4242 &) ; echo started", timeout=60)
    assert out.stdout.split("\n")[:3] == ["['lo']", "no-host-file", "started"]
    late = box.exec("cat /proc/[0-9]*/comm", timeout=60)
    assert "sleep" not in late.stdout.split()  # the background sleep died with the command that started it
    slow = box.exec("sleep 4343.25", timeout=1)
    assert slow.timed_out
    assert eventually(lambda: not processes_with(b"4343.25"))  # killed with its namespace
    after = box.exec("echo still-usable", timeout=60)  # the sandbox goes on after a killed command
    assert after.stdout.strip() == "still-usable"
    assert host_overlay_mounts() == []


def test_copy_in_and_out(box: ImageSandbox, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "private.txt").write_text("root only\n")
    os.chmod(folder / "private.txt", 0o600)
    box.copy_in(folder, "/opt/data")  # owned by root, as docker cp makes them; the image's USER is builder
    seen = box.exec("cat /opt/data/a.txt; stat -c %U /opt/data/a.txt; cat /opt/data/private.txt", timeout=60)
    assert seen.stdout.split() == ["alpha", "root"] and "Permission denied" in seen.stderr
    box.exec("echo from-inside > /tmp/out.txt", timeout=60)
    box.copy_out("/tmp/out.txt", tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text() == "from-inside\n"
    with pytest.raises(ValueError, match="cannot be read"):
        box.copy_out("/no/such/file", tmp_path / "missing.txt")


def test_stop_deletes_everything_and_a_dead_owners_folder_is_swept(env: BuiltEnvironment) -> None:
    box = ImageSandbox(env.lowers, env=dict(env.env))
    root = box.root
    assert root is not None and root.stat().st_uid == ENV_UID_BASE
    box.exec("head -c 100000 /dev/zero > /root/big", timeout=60)
    assert box.upper_bytes() >= 100000
    box.stop()
    box.stop()
    assert not root.exists()
    # a folder whose owner died (its lock is free and old) goes when the next process makes a sandbox
    stale = Path(_episode_base(None)) / "tb-stale-test"
    stale.mkdir(exist_ok=True)
    (stale / LOCK_NAME).write_text("")
    old = time.time() - 3600
    os.utime(stale / LOCK_NAME, (old, old))
    from pytest_jeval.sandbox.shell import image_sandbox

    image_sandbox._swept.clear()
    ImageSandbox(env.lowers, env=dict(env.env)).stop()
    assert not stale.exists()
