"""The sandboxed ``python`` and ``bash`` tools: status and output, timeouts, no network, no secrets, and the
isolation plans they refuse or accept."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.workspace import make_workspace, remove_workspace
from pytest_jeval.core import redact
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox import isolation
from pytest_jeval.sandbox import plans as _isolation

LINUX = sys.platform.startswith("linux")


# --- python and bash in the sandbox ----------------------------------------------------------------


@pytest.fixture
def ws() -> Iterator[Path]:
    if not LINUX or "netns" not in isolation():
        pytest.skip("no network namespace on this machine: the python and bash tools refuse to run")
    path = make_workspace()
    yield path
    remove_workspace(path)


def run(name: str, workspace: Path, timeout: float = 20.0, **args: object) -> str:
    fn = TOOLS.get(name).fn
    assert fn is not None
    return str(fn(**args, ctx=ToolContext(sample=Sample(id="s1", input="q"), workspace=workspace, timeout=timeout)))


def read(workspace: Path, path: str) -> str:
    return run("file_read", workspace, path=path)


def test_python_reports_status_and_output(ws: Path) -> None:
    out = run("python", ws, code="import sys\nprint('hi')\nprint('oops', file=sys.stderr)\nsys.exit(3)")
    assert out == "exit status: 3\nstdout:\nhi\n\nstderr:\noops\n"
    out = run("python", ws, code="1 / 0")
    assert out.startswith("exit status: 1\nstdout: (empty)\nstderr:\nTraceback")
    assert "ZeroDivisionError" in out


def test_python_writes_files_that_file_read_sees_and_later_runs_change(ws: Path) -> None:
    run("file_write", ws, path="in.txt", content="from the file tool\n")
    out = run("python", ws, code=(
        "import os\n"
        "print(open('in.txt').read().strip())\n"
        "os.makedirs('sub', exist_ok=True)\n"
        "open('sub/out.txt', 'w').write('written by python\\n')\n"))
    assert out == "exit status: 0\nstdout:\nfrom the file tool\n\nstderr: (empty)"
    assert read(ws, "sub/out.txt") == "written by python\n"
    # a second run (another uid where each run has its own) changes what the first wrote
    run("python", ws, code="open('sub/out.txt', 'a').write('and again\\n')")
    assert read(ws, "sub/out.txt") == "written by python\nand again\n"
    owners = {path.stat().st_uid for path in (ws, ws / "sub", ws / "sub" / "out.txt", ws / "in.txt")}
    assert len(owners) == 1  # one owner: the episode's sandbox uid (as root), else the runner
    assert run("file_write", ws, path="sub/out.txt", content="replaced") == "wrote 8 bytes to sub/out.txt"


def test_python_tool_times_out(ws: Path) -> None:
    with pytest.raises(ToolError, match=r"^timed out after 2s\nstdout:\nstarted") as info:
        run("python", ws, timeout=2, code="import time\nprint('started')\ntime.sleep(30)")
    assert "finished" not in str(info.value)
    with pytest.raises(ToolError, match=r"^timed out after 1s"):
        run("python", ws, timeout=1, code="while True: pass")
    assert run("python", ws, code="print('still usable')").startswith("exit status: 0\nstdout:\nstill usable")


def test_bash_tool_times_out(ws: Path) -> None:
    with pytest.raises(ToolError, match=r"^timed out after 0\.5s"):
        run("bash", ws, timeout=0.5, command="sleep 30; echo finished")


@pytest.fixture
def server() -> Iterator[socket.socket]:
    """A TCP server on 127.0.0.1 that a sandboxed program must not reach."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def assert_never_connected(server: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        server.accept()


def test_python_has_no_network(ws: Path, server: socket.socket) -> None:
    port = server.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port), timeout=5):  # the server is reachable from here
        pass
    server.accept()[0].close()
    out = run("python", ws, code=(
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    print('CONNECTED')\n"
        "except OSError as exc:\n"
        "    print('refused:', type(exc).__name__)\n"))
    assert "CONNECTED" not in out and "refused:" in out, out
    assert_never_connected(server)


def test_bash_runs_commands_without_network(ws: Path, server: socket.socket) -> None:
    out = run("bash", ws, command="echo hello; echo err >&2; printf data > made.txt; exit 4")
    assert out == "exit status: 4\nstdout:\nhello\n\nstderr:\nerr\n"
    assert read(ws, "made.txt") == "data"
    port = server.getsockname()[1]
    out = run("bash", ws, command=f"(echo x > /dev/tcp/127.0.0.1/{port}) && echo CONNECTED || echo refused")
    assert "CONNECTED" not in out and "refused" in out, out
    assert_never_connected(server)


def test_sandboxed_tools_get_no_secrets(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-" + "k3y" * 8
    monkeypatch.setenv("OPENAI_API_KEY", key)
    registered = redact.register(key)
    try:
        out = run("python", ws, code="import os\nprint(sorted(os.environ))")
        assert "OPENAI_API_KEY" not in out and key not in out
        out = run("bash", ws, command=f"echo {key}; echo {key} >&2")  # a key that reaches the program anyway
        assert key not in out and out.count(redact.MARKER) == 2
    finally:
        redact.unregister(registered)


def test_a_sandbox_that_cannot_start_is_a_harness_error(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="the sandbox cannot run"):
        run("python", tmp_path / "no-such-workspace", code="print(1)")


@pytest.mark.parametrize("plan", ["basic", "uid-drop"])
def test_plans_without_a_network_namespace_refuse_to_run(
        ws: Path, monkeypatch: pytest.MonkeyPatch, plan: str) -> None:
    if plan == "uid-drop" and os.geteuid() != 0:
        pytest.skip("uid-drop needs root")
    monkeypatch.setenv("JEVAL_SANDBOX_ISOLATION", plan)
    _isolation.reset_plan()
    try:
        with pytest.raises(HarnessError, match="no network namespace"):
            run("python", ws, code="print(1)")
        with pytest.raises(HarnessError, match="no network namespace"):
            run("bash", ws, command="echo 1")
    finally:
        monkeypatch.delenv("JEVAL_SANDBOX_ISOLATION")
        _isolation.reset_plan()


@pytest.mark.skipif(not LINUX or os.geteuid() != 0, reason="the uid-dropping plans need root")
@pytest.mark.parametrize("plan", ["namespaces+uid-drop", "netns+uid-drop"])
def test_weaker_plans_with_a_network_namespace_work_in_the_workspace(
        ws: Path, monkeypatch: pytest.MonkeyPatch, server: socket.socket, plan: str) -> None:
    monkeypatch.setenv("JEVAL_SANDBOX_ISOLATION", plan)
    _isolation.reset_plan()
    try:
        if _isolation.current_plan().name != plan:
            pytest.skip(f"{plan} does not work on this machine")
        run("file_write", ws, path="in.txt", content="x\n")
        port = server.getsockname()[1]
        out = run("bash", ws, command=(
            f"cat in.txt; echo y >> in.txt; id -u; (echo x > /dev/tcp/127.0.0.1/{port}) 2>/dev/null || echo refused"))
        assert out.startswith("exit status: 0\nstdout:\nx\n") and "refused" in out, out
        assert out.split("stdout:")[1].split("\n")[2] != str(os.geteuid())  # not the runner's uid
        assert read(ws, "in.txt") == "x\ny\n" and (ws / "in.txt").stat().st_uid == ws.stat().st_uid
        assert_never_connected(server)
    finally:
        monkeypatch.delenv("JEVAL_SANDBOX_ISOLATION")
        _isolation.reset_plan()
