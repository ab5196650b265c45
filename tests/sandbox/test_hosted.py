"""How an external agent's program starts inside a task's environment (:mod:`pytest_jeval.sandbox.shell.hosted`),
and the spliced root of a terminal_lite agent sandbox (:mod:`pytest_jeval.sandbox.bwrap`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_jeval
from pytest_jeval.sandbox import bwrap as bwrap_mod
from pytest_jeval.sandbox.bwrap import Bind, Layout
from pytest_jeval.sandbox.shell.hosted import HOST_ROOT, HostedError, host_loader, hosted_plan

RELAY = ["/usr/bin/python3", "-I", "-S", "-c", "relay", "8642", "/jeval/agent/proxy.sock", "--"]
PACKAGE = Path(pytest_jeval.__file__).resolve().parent


def _script(path: Path, first: str) -> Path:
    path.write_text(first + "\nprint('hi')\n")
    path.chmod(0o755)
    return path


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs the system's python3")
def test_a_script_runs_through_its_interpreter_under_the_hosts_loader(tmp_path: Path) -> None:
    script = _script(tmp_path / "agent.py", "#!/usr/bin/env python3")
    plan = hosted_plan([str(script), "--prompt-file", "/jeval/agent/home/prompt.md"], readable=[str(script)],
                       search_path="/usr/bin:/bin", relay=RELAY)
    loader = HOST_ROOT + host_loader()
    assert plan.argv[0] == loader and plan.argv[1] == "--library-path"
    relay_end = plan.argv.index("--")
    assert plan.argv[3] == HOST_ROOT + os.path.realpath("/usr/bin/python3")  # the relay, a system program
    agent = plan.argv[relay_end + 1:]
    assert agent[0] == loader and agent[3] == HOST_ROOT + os.path.realpath(shutil.which("python3", path="/usr/bin")
                                                                            or "/usr/bin/python3")
    assert agent[4:] == [str(script), "--prompt-file", "/jeval/agent/home/prompt.md"]
    assert ("/usr", HOST_ROOT + "/usr") in plan.binds and (str(script), str(script)) in plan.binds
    assert all(HOST_ROOT in d for d in plan.argv[2].split(":"))  # only the host's libraries: no lib dir of its own


def test_node_starts_directly_and_keeps_its_own_path(tmp_path: Path) -> None:
    prefix = tmp_path / "npm" / "bin"
    prefix.mkdir(parents=True)
    node = prefix / "node"
    shutil.copy("/bin/true", node)  # an ELF program named node
    plan = hosted_plan([str(node), "app.mjs"], readable=[str(tmp_path / "npm")], search_path="",
                       relay=RELAY, adapter_path=f"{prefix}:/usr/bin")
    agent = plan.argv[plan.argv.index("--") + 1:]
    assert agent == [str(node), "app.mjs"]  # node re-executes /proc/self/exe: never the loader
    assert plan.path_dirs == [str(prefix)]  # its own folder first on PATH inside; /usr/bin is the task's


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="needs the system's python3")
def test_a_virtualenv_of_the_systems_python_starts_with_the_hosts_python_under_its_own_name(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    script = _script(tmp_path / "agent", f"#!{venv}/bin/python")
    plan = hosted_plan([str(script), "--x"], readable=[str(venv), str(script)], search_path="/usr/bin:/bin",
                       relay=RELAY)
    agent = plan.argv[plan.argv.index("--") + 1:]
    real = os.path.realpath(venv / "bin" / "python")
    assert agent[3] == HOST_ROOT + os.path.realpath("/usr/bin/env") and agent[4] == f"PYTHONHOME={HOST_ROOT}/usr"
    at = agent.index("--argv0")
    assert agent[at + 1:at + 4] == [str(venv / "bin" / "python"), HOST_ROOT + real, "-c"]
    assert "os.environ.pop('PYTHONHOME'" in agent[at + 4] and agent[at + 5:] == [str(script), "--x"]
    with pytest.raises(HostedError, match="runs a script or -m module"):
        hosted_plan([str(venv / "bin" / "python"), "-X", "dev"], readable=[str(venv)], search_path="", relay=RELAY)


def test_a_folder_holding_the_harness_package_is_never_shown() -> None:
    with pytest.raises(HostedError, match="holds the harness's package"):
        hosted_plan([sys.executable, "-c", "pass"], readable=[str(PACKAGE.parent)], search_path="", relay=RELAY,
                    hidden=str(PACKAGE))


def test_a_spliced_root_binds_each_entry_and_makes_the_way_to_a_bind(tmp_path: Path) -> None:
    root = tmp_path / "rootfs"
    for name in ("usr", "etc", "root/.cache"):
        (root / name).mkdir(parents=True)
    (root / "root").chmod(0o700)
    (root / "bin").symlink_to("usr/bin")
    layout = Layout(binds=[Bind(str(tmp_path), "/root/.pyenv/x"), Bind(str(tmp_path), "/jeval/host/usr")],
                    root=str(root), splice=True, tmp_bytes=None)
    argv = bwrap_mod.command("bwrap", layout, ["true"]).argv
    pairs = list(zip(argv, argv[1:], argv[2:], strict=False))
    assert ("--ro-bind", str(root), "/") not in pairs  # the root file system is never the mount point of a bind
    assert ("--ro-bind", str(root / "usr"), "/usr") in pairs and ("--symlink", "usr/bin", "/bin") in pairs
    assert ("--perms", "0755", "--dir") in pairs and "/root" in argv  # /root made (enterable), its entries bound
    assert ("--ro-bind", str(root / "root" / ".cache"), "/root/.cache") in pairs
    assert argv[argv.index("--chdir") - 2:argv.index("--chdir")] == ["--remount-ro", "/"]
