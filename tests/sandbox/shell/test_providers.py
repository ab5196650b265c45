"""The bubblewrap provider: no network, writable only in /app and /tmp, state kept across execs,
hanging commands and daemons killed, and clear refusals when bwrap, the rootfs or docker are missing."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.sandbox.shell import rootfs as rootfs_mod
from pytest_jeval.sandbox.shell.providers import (
    BubblewrapProvider,
    ProviderUnavailable,
    Sandbox,
    get_provider,
    stop_all,
)
from tests.support.terminal import ensure_rootfs


@pytest.fixture(scope="module", autouse=True)
def _rootfs() -> None:
    ensure_rootfs()


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Sandbox]:
    env = tmp_path / "env"
    (env / "sub").mkdir(parents=True)
    (env / "data.txt").write_text("hello\n")
    (env / "sub" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (env / "sub" / "run.sh").chmod(0o755)
    sandbox = BubblewrapProvider().start(env)
    yield sandbox
    sandbox.stop()


def test_files_are_copied_in_and_state_persists_across_execs(box: Sandbox) -> None:
    first = box.exec("pwd; cat data.txt; ./sub/run.sh; echo kept > /app/new.txt; echo t > /tmp/t; cd /tmp", timeout=60)
    assert (first.returncode, first.stdout.split()) == (0, ["/app", "hello", "ran"])
    second = box.exec("pwd; cat new.txt /tmp/t; echo $HOME; id -u", timeout=60)
    assert second.stdout.split() == ["/app", "kept", "t", "/tmp", "65534"]


def test_exit_status_and_streams_are_reported(box: Sandbox) -> None:
    out = box.exec("echo out; echo err >&2; exit 3", timeout=60)
    assert (out.returncode, out.stdout, out.stderr, out.timed_out) == (3, "out\n", "err\n", False)


def test_the_sandbox_has_no_network(box: Sandbox) -> None:
    probe = ("import socket\nprint(sorted(n for _, n in socket.if_nameindex()))\n"
             "s = socket.socket()\ns.settimeout(3)\n"
             "try:\n    s.connect(('1.1.1.1', 80))\n    print('connected')\n"
             "except OSError as e:\n    print('refused', e.errno)\n")
    out = box.exec("python3 -", timeout=60, stdin=probe)
    assert out.stdout.splitlines()[0] == "['lo']", out
    assert out.stdout.splitlines()[1].startswith("refused"), out


def test_only_app_and_tmp_are_writable_and_the_host_is_not_visible(box: Sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "host-marker"
    marker.write_text("secret")
    script = ";".join(f"(touch {p} 2>/dev/null && echo W:{p} || echo R:{p})"
                      for p in ("/app/a", "/tmp/b", "/etc/x", "/usr/x", "/x", "/root/x", "/var/x", "/var/tmp/x", "/tests/x",
                                "/dev/shm/y"))
    out = box.exec(script + f"; test -e {marker} && echo SEEN || echo hidden", timeout=60)
    assert out.stdout.split() == ["W:/app/a", "W:/tmp/b", "R:/etc/x", "R:/usr/x", "R:/x", "R:/root/x", "R:/var/x",
                                  "R:/var/tmp/x", "R:/tests/x", "W:/dev/shm/y", "hidden"]
    assert not os.path.exists("/etc/x") and not os.path.exists("/x")


def _processes_named(word: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if word.encode() in cmdline:
                pids.append(int(entry))
    return pids


def test_a_hanging_command_and_its_daemons_are_killed(box: Sandbox) -> None:
    start = time.monotonic()
    out = box.exec("echo started; (setsid nohup sleep 7391 >/dev/null 2>&1 &); sleep 7392", timeout=1.5)
    assert out.timed_out and out.stdout == "started\n"
    assert time.monotonic() - start < 60  # killed at the 1.5 s bound, not after the two-hour sleeps
    assert _gone("sleep 739")  # the command and its daemon
    # a daemon started by a command that returns in time dies with it too
    quick = box.exec("(setsid nohup sleep 7393 >/dev/null 2>&1 &); echo back", timeout=60)
    assert quick.stdout == "back\n" and not quick.timed_out
    assert _gone("sleep 7393")
    assert box.exec("echo still usable", timeout=60).stdout == "still usable\n"


def _gone(word: str) -> bool:
    """Whether the processes named ``word`` are gone within 30 s (they would sleep for two hours)."""
    deadline = time.monotonic() + 30
    while _processes_named(word) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _processes_named(word) == []


def test_copy_in_and_out_stay_inside_the_writable_parts(box: Sandbox, tmp_path: Path) -> None:
    box.exec("printf result > /app/out.txt; ln -s /etc/passwd /app/link", timeout=60)
    box.copy_out("/app/out.txt", tmp_path / "got.txt")
    assert (tmp_path / "got.txt").read_text() == "result"
    with pytest.raises(OSError):
        box.copy_out("/app/link", tmp_path / "link.txt")
    for bad in ("/etc/passwd", "/app/../etc/passwd", "relative.txt"):
        with pytest.raises(ValueError, match="is not below"):
            box.copy_out(bad, tmp_path / "x")
    (tmp_path / "linked").symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="link or special file"):
        box.copy_in(tmp_path / "linked", "/app/linked")


def test_stop_deletes_the_files_and_stop_all_ends_the_rest(tmp_path: Path) -> None:
    one, two = BubblewrapProvider().start(None), BubblewrapProvider().start(None)
    roots = [one.root, two.root]  # type: ignore[attr-defined]
    one.stop()
    one.stop()
    assert not os.path.exists(roots[0]) and os.path.exists(roots[1])
    stop_all()
    assert not os.path.exists(roots[1])
    with pytest.raises(RuntimeError, match="stopped"):
        two.exec("true", timeout=5)


def test_a_missing_rootfs_names_the_command_that_builds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_ROOTFS_DIR", str(tmp_path / "empty"))
    with pytest.raises(ProviderUnavailable, match=r"Build it once with `make rootfs`"):
        BubblewrapProvider().check()
    half = rootfs_mod.rootfs_path()
    (half / "bin").mkdir(parents=True)
    assert any("unfinished build" in p for p in rootfs_mod.check_rootfs())


def test_missing_bwrap_and_unsupported_docker_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ProviderUnavailable, match="apt-get install -y bubblewrap"):
        BubblewrapProvider().check()
    monkeypatch.delenv("JEVAL_TERMINAL_DOCKER", raising=False)
    with pytest.raises(ProviderUnavailable, match="untested"):
        get_provider("docker").check()
    with pytest.raises(ValueError, match="unknown sandbox provider 'podman'; the registered sandbox providers are: "):
        get_provider("podman")


def test_building_without_mmdebstrap_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_ROOTFS_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(rootfs_mod.RootfsError, match="apt-get install -y mmdebstrap"):
        rootfs_mod.build_rootfs(log=False)
    assert list(tmp_path.iterdir()) == []


def test_the_environment_is_scrubbed_and_only_the_commands_processes_are_visible(
        box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-terminal-test-SECRET-0001")
    out = box.exec("env | cut -d= -f1 | sort | tr '\\n' ' '; echo; ls /proc | grep -c '^[0-9]'", timeout=60)
    names, count = out.stdout.splitlines()
    assert names.split() == ["HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "USER", "_"]
    assert int(count) <= 6  # bwrap's init, bash and the pipeline: a PID namespace of its own
