"""execnet socket servers on 127.0.0.1, each in its own mount namespace: remote xdist workers on one machine.

:func:`socket_workers` starts ``count`` copies of execnet's own socket server
(``execnet/script/socketserver.py`` of the installed execnet, run by ``python``, by
default this interpreter: the project "installed on the workers") and yields one
:class:`SocketWorker` per server, whose :attr:`SocketWorker.tx` is the
``socket=127.0.0.1:PORT`` spec for pytest-xdist's ``--tx``::

    with socket_workers(3, root=tmp_path / "workers", shared=[suite_dir]) as workers:
        args = ["-d", *(a for w in workers for a in ("--tx", w.tx))]

Each server runs under bubblewrap (``bwrap``), in new mount and PID namespaces
but the host's network (so 127.0.0.1 is the host's loopback, where the test's
endpoint listens):

* ``/tmp`` is a private tmpfs: the worker sees none of the controller's ``/tmp``;
* ``HOME`` is a private folder (``root/workerN/home``, bound at the user's home
  directory from the password database, so every worker sees the same paths; a
  Python installed under it, such as pyenv's, is bound back read-only), holding ``HF_HOME`` and
  ``HF_DATASETS_CACHE``: no worker shares a datasets cache with the controller;
* the ``shared`` folders (the suite and its data files) are bound back at the
  same path: the "shared path" deployment. The alternative, data installed on
  each worker host at the path the suite names, needs no binding.

The servers' environment is :func:`~pytest_jeval.core.redact.environment_without_keys`:
no API key reaches a worker through its environment.

How execnet's socket server behaves (execnet 2.1.2): it binds, prints
``Entering Accept loop ('127.0.0.1', PORT)`` and, for each connection in turn,
``exec``\\ s the bootstrap the client sends *in its own process* (no fork). The
gateway, and so the xdist worker, is the server process itself: killing it
(:meth:`SocketWorker.kill_gateway`) ends the server too, and a restarted xdist
worker would find nothing listening (use ``--max-worker-restart=0``).

On exit every process in every namespace is killed (``bwrap --unshare-pid``: the
namespace's processes end with its first one; ``--die-with-parent``: the namespace
ends if this process dies) and waited for.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_jeval.core.redact import environment_without_keys

__all__ = ["SocketWorker", "SocketWorkerError", "bwrap_missing_reason", "socket_server_script", "socket_workers"]

_LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


class SocketWorkerError(RuntimeError):
    """A socket server could not be started (bwrap missing, or the server did not listen in time)."""


def socket_server_script() -> Path:
    """``execnet/script/socketserver.py`` of the installed execnet."""
    import execnet.script.socketserver as server

    return Path(server.__file__)


def bwrap_missing_reason() -> str | None:
    """Why private mount namespaces cannot be made here (no ``bwrap`` on PATH, or not root), or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install -y bubblewrap (or make bubblewrap)"
    if os.geteuid() != 0:
        return "bwrap needs root here (this machine's kernel or policy may refuse unprivileged user namespaces)"
    return None


@dataclass
class SocketWorker:
    """One execnet socket server in its own namespaces."""

    index: int
    home: Path
    """The private HOME folder on the host (bound at the real HOME's path inside)."""
    log: Path
    """The server's stdout and stderr."""
    process: subprocess.Popen[bytes]
    """The ``bwrap`` process (its namespace's processes end with it)."""
    port: int = 0
    """The port it listens on (0 until it listens)."""

    @property
    def tx(self) -> str:
        """The ``--tx`` spec for pytest-xdist: ``socket=127.0.0.1:PORT``."""
        return f"socket=127.0.0.1:{self.port}"

    def gateway_pid(self) -> int | None:
        """Host PID of the server (= execnet gateway = xdist worker) process, or None once it is gone."""
        for pid in _descendants(self.process.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(arg.endswith(b"socketserver.py") for arg in cmdline):
                return pid
        return None

    def kill_gateway(self) -> int:
        """SIGKILL the gateway process (a worker host that dies); returns its PID."""
        pid = self.gateway_pid()
        if pid is None:
            raise SocketWorkerError(f"socket worker {self.index} has no server process left")
        os.kill(pid, signal.SIGKILL)
        return pid

    def output(self) -> str:
        """What the server printed so far."""
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _descendants(pid: int) -> list[int]:
    """PIDs below ``pid``, parents before children."""
    order, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            order.append(child)
            todo.append(child)
    return order


def _bwrap_command(python: str, home: Path, shared: Sequence[Path], inner_home: str) -> list[str]:
    command = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/tmp", "--bind", str(home), inner_home]
    # The installation stays visible, read-only, where the private /tmp and HOME would hide it: a
    # Python under HOME (pyenv), a virtualenv and this project's checkout under /tmp (a fresh clone).
    for prefix in [*_interpreter_prefixes(python), str(_project_root())]:
        if any(Path(prefix).is_relative_to(hidden) for hidden in (inner_home, "/tmp")):
            command += ["--ro-bind", prefix, prefix]
    for path in shared:  # after the tmpfs: a shared folder under /tmp is bound back into it
        command += ["--bind", str(path), str(path)]
    command += ["--unshare-pid", "--proc", "/proc", "--die-with-parent", "--chdir", inner_home,
                "--", python, "-u", str(socket_server_script()), "127.0.0.1:0"]
    return command


def _project_root() -> Path:
    """The folder that holds the ``pytest_jeval`` package the workers import (an editable install's checkout)."""
    import pytest_jeval

    return Path(pytest_jeval.__file__).resolve().parents[1]


def _interpreter_prefixes(python: str) -> list[str]:
    """``sys.prefix`` and ``sys.base_prefix`` of ``python`` (the venv and the installation it points to)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return sorted({sys.prefix, sys.base_prefix})
    done = subprocess.run([python, "-c", "import sys; print(sys.prefix); print(sys.base_prefix)"],
                          capture_output=True, text=True, check=True, timeout=60)
    return sorted(set(done.stdout.split()))


def _worker_environment(inner_home: str) -> dict[str, str]:
    env = environment_without_keys()
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
                 "TMPDIR", "HF_DATASETS_CACHE", "HF_HOME", "XDG_CACHE_HOME", "PYTHONPATH"):
        env.pop(name, None)
    hf_home = f"{inner_home}/.cache/huggingface"
    env.update(HOME=inner_home, HF_HOME=hf_home, HF_DATASETS_CACHE=f"{hf_home}/datasets",
               XDG_CACHE_HOME=f"{inner_home}/.cache", PYTHONDONTWRITEBYTECODE="1")
    return env


def _stop(workers: Sequence[SocketWorker]) -> None:
    """Kill each namespace (its first process, then anything left below it) and wait."""
    for worker in workers:
        proc = worker.process
        below = _descendants(proc.pid)
        for pid in [proc.pid, *reversed(below)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() and _state(pid) not in ("Z", None) for pid in below):
            if time.monotonic() > deadline:
                raise SocketWorkerError(f"socket worker {worker.index}: processes {below} outlived its namespace")
            time.sleep(0.02)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@contextlib.contextmanager
def socket_workers(count: int, root: Path, shared: Sequence[Path] = (), *, python: str | None = None,
                   host_env: Mapping[str, str] | None = None,
                   start_timeout: float = 30.0) -> Iterator[list[SocketWorker]]:
    """Start ``count`` execnet socket servers on free 127.0.0.1 ports; yield them once each listens.

    ``root`` receives each worker's private HOME and log (``root/workerN/``); ``shared``
    folders are bound into every namespace at the same path; ``python`` runs the
    servers (default: this interpreter); ``host_env`` holds variables the worker host
    sets for itself (e.g. the API key variable a suite's ``api_key_env`` names), added
    after the keys were stripped from this process's environment. Raises :class:`SocketWorkerError` when bwrap
    is missing or a server does not listen within ``start_timeout`` seconds (its
    output is in the message). Every process is killed on exit.
    """
    missing = bwrap_missing_reason()
    if missing is not None:
        raise SocketWorkerError(missing)
    inner_home = pwd.getpwuid(os.getuid()).pw_dir  # not $HOME, which a test (pytester) may have pointed elsewhere
    env = {**_worker_environment(inner_home), **(host_env or {})}
    workers: list[SocketWorker] = []
    try:
        for index in range(count):
            folder = root / f"worker{index}"
            home = folder / "home"
            home.mkdir(parents=True, exist_ok=True)
            log = folder / "server.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(_bwrap_command(python or sys.executable, home, [Path(p) for p in shared],
                                                       inner_home),
                                        stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
            workers.append(SocketWorker(index, home, log, proc))
        deadline = time.monotonic() + start_timeout
        for worker in workers:
            while not worker.port:
                found = _LISTENING.search(worker.output())
                if found:
                    worker.port = int(found.group(1))
                elif worker.process.poll() is not None or time.monotonic() > deadline:
                    raise SocketWorkerError(
                        f"socket worker {worker.index} did not listen (exit status {worker.process.poll()}): "
                        f"{worker.output()[-2000:]}")
                else:
                    time.sleep(0.02)
        yield workers
    finally:
        _stop(workers)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_jeval.testing.socket_workers N --root DIR [--shared DIR ...] -- PYTEST ARGS``.

    Starts N socket workers, runs ``python -m pytest PYTEST ARGS -d --tx socket=...`` (once per
    ``--repeat``) in the current folder, prints each run's wall time and exit status, and stops the
    workers. ``--host-env NAME`` passes this process's variable NAME to the workers (a key the
    worker hosts would set themselves). Returns the last run's exit status.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pytest_jeval.testing.socket_workers")
    parser.add_argument("count", type=int)
    parser.add_argument("--root", type=Path, required=True, help="folder for the workers' homes and logs")
    parser.add_argument("--shared", type=Path, action="append", default=[], help="folder bound into every worker")
    parser.add_argument("--host-env", action="append", default=[], metavar="NAME")
    parser.add_argument("--repeat", type=int, default=1)
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, pytest_args = parser.parse_args(argv[:cut]), argv[cut + 1:]
    host_env = {name: os.environ[name] for name in args.host_env if name in os.environ}
    status = 0
    with socket_workers(args.count, args.root.resolve(), [p.resolve() for p in args.shared], host_env=host_env) as ws:
        tx = [part for w in ws for part in ("--tx", w.tx)]
        for run in range(args.repeat):
            started = time.monotonic()
            status = subprocess.run([sys.executable, "-m", "pytest", *pytest_args, "-d", *tx], check=False,
                                    stdout=subprocess.DEVNULL).returncode
            print(f"run {run + 1}: {args.count} socket workers, {time.monotonic() - started:.2f} s, "
                  f"exit status {status}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
