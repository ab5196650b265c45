"""Running untrusted Python in a separate, limited, killable process."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pathlib
import re
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Literal

from pytest_jeval.sandbox.files import make_run_dir, remove_tree, write_new_file
from pytest_jeval.sandbox.limits import MIB, Limits, sandbox_python, scrubbed_env
from pytest_jeval.sandbox.plans import IsolationPlan, base_dir, current_plan, quota_tags, run_identity, spawn_options
from pytest_jeval.sandbox.quota import RunCgroup, run_cgroup

Status = Literal["ok", "error", "timeout", "memory", "killed"]

SCRIPT_NAME = "main.py"
_MEMORY_MARKERS = re.compile(
    r"^MemoryError\b|Cannot allocate memory|out of memory|std::bad_alloc|Fatal Python error:.*memory",
    re.MULTILINE | re.IGNORECASE,
)


class SandboxError(RuntimeError):
    """The sandbox itself failed (could not start the child); says nothing about the code."""


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """The outcome of one sandboxed run."""

    status: Status
    """ok | error (non-zero exit) | timeout (wall clock or CPU) | memory | killed (other signal)."""
    returncode: int
    """Exit status; negative for "killed by signal -returncode"."""
    stdout: str
    """Captured standard output (head and tail kept when longer than the cap)."""
    stderr: str
    """Captured standard error (head and tail kept when longer than the cap)."""
    duration: float
    """Wall-clock seconds from start to exit or kill."""
    isolation: list[str] = dataclasses.field(default_factory=list)
    """Isolation actually applied (see ``pytest_jeval.sandbox.plans``)."""
    verdict: dict[str, Any] | None = None
    """For :func:`run_harness`: what the trusted harness reported (``None``: it reported nothing)."""

    @property
    def ok(self) -> bool:
        """True when the program exited with status 0 in time."""
        return self.status == "ok"


def run_python(
    code: str,
    *,
    timeout: float = 10.0,
    memory_mb: int = 1024,
    stdin: str | None = None,
    max_processes: int = 64,
    file_size_mb: int = 64,
    max_output: int = 65_536,
    site_packages: bool = False,
) -> ExecResult:
    """Run untrusted Python ``code`` in a sandboxed subprocess and report how it ended.

    The code runs as ``main.py`` in a fresh temporary directory (deleted afterwards)
    with ``sys.executable -I -B -u`` (plus ``-S``: no site-packages, unless
    ``site_packages`` is true), a scrubbed environment, rlimits, and the strongest
    isolation this machine allows (see ``ExecResult.isolation``). After ``timeout``
    seconds of wall-clock time the whole process group is killed. ``stdout`` and
    ``stderr`` keep at most ``max_output`` bytes each (head and tail).
    Raises ``SandboxError`` only when the child cannot be started at all.
    """
    limits = Limits.for_run(timeout, memory_mb, max_processes, file_size_mb)
    plan = current_plan()
    with run_identity(plan) as owner, run_cgroup(memory_mb * MIB, max_processes) as cgroup:
        home = make_run_dir(base_dir(plan), owner)
        try:
            write_new_file(home, SCRIPT_NAME, code.encode("utf-8", "surrogatepass"), owner)
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, StdinFile(stdin) as inp:
                flags = ["-I", "-B", "-u"] if site_packages else ["-I", "-S", "-B", "-u"]
                returncode, timed_out, duration = _execute(
                    plan, limits, [*flags, SCRIPT_NAME], home, owner, inp, out, err, timeout, cgroup=cgroup)
                stdout, stderr = read_capped(out, max_output), read_capped(err, max_output)
        finally:
            remove_tree(home)
        oom = cgroup is not None and cgroup.oom_kills() > 0
    from pytest_jeval.core.redact import redact  # keys the program found never reach stderr_tail or a record
    stderr = redact(stderr)
    status = _classify(returncode, timed_out, stderr, oom)
    return ExecResult(status, returncode, stdout, stderr, duration, [*plan.tags, *quota_tags(cgroup)])


@functools.cache
def _trusted_source(name: str) -> str:
    """``_values`` followed by the module ``name``: a self-contained program for ``python -c``."""
    here = pathlib.Path(__file__).resolve().parent
    values = (here / "values.py").read_text(encoding="utf-8")
    values = "\n".join(line for line in values.split("\n") if not line.startswith("from __future__"))
    return values + "\n\n" + (here / name).read_text(encoding="utf-8")


_VERDICT_STATUS: dict[str, Status] = {"memory": "memory", "timeout": "timeout", "killed": "killed"}
MAX_VERDICT_BYTES = 64 * 1024 * 1024


def run_harness(
    job: dict[str, Any],
    *,
    timeout: float = 10.0,
    memory_mb: int = 1024,
    max_processes: int = 64,
    file_size_mb: int = 64,
    max_output: int = 65_536,
) -> ExecResult:
    """Check a solution with the trusted harness (``_harness``): the verdict comes on a channel
    the solution cannot write.

    ``job`` is the harness job without ``callee`` (``mode`` plus the mode's fields, see
    ``_harness``). The job and the verdict travel in unlinked files of the runner,
    passed as inherited descriptors to the harness only. ``status`` is ``ok`` iff the
    harness reported ``passed``; with no verdict (the harness was killed, e.g. at the
    wall-clock timeout) it is never ``ok``. The verdict is in ``ExecResult.verdict``.
    """
    limits = Limits.for_run(timeout, memory_mb, max_processes, file_size_mb)
    plan = current_plan()
    payload = json.dumps({**job, "callee": _trusted_source("_callee.py")}).encode("utf-8", "surrogatepass")
    with run_identity(plan) as owner, run_cgroup(memory_mb * MIB, max_processes) as cgroup:
        home = make_run_dir(base_dir(plan), owner)
        try:
            with tempfile.TemporaryFile() as job_file, tempfile.TemporaryFile() as verdict_file, \
                    tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                job_file.write(payload)
                job_file.flush()
                job_file.seek(0)
                fds = (job_file.fileno(), verdict_file.fileno())
                args = ["-I", "-S", "-B", "-u", "-c", _trusted_source("_harness.py"), *map(str, fds)]
                returncode, timed_out, duration = _execute(
                    plan, limits, args, home, owner, subprocess.DEVNULL, out, err, timeout, pass_fds=fds,
                    cgroup=cgroup)
                stdout, stderr = read_capped(out, max_output), read_capped(err, max_output)
                verdict = _read_verdict(verdict_file)
        finally:
            remove_tree(home)
        oom = cgroup is not None and cgroup.oom_kills() > 0
    if verdict is not None:
        status: Status = "ok" if verdict["passed"] else _VERDICT_STATUS.get(str(verdict.get("reason")), "error")
    else:
        status = _classify(returncode, timed_out, stderr, oom)
        if status == "ok":
            status = "error"
            stderr += "jeval: the harness exited without a verdict\n"
    return ExecResult(status, returncode, stdout, stderr, duration, [*plan.tags, *quota_tags(cgroup)], verdict)


def _read_verdict(fh: IO[bytes]) -> dict[str, Any] | None:
    """The harness's JSON verdict, or None when it wrote none (or something malformed)."""
    size = os.fstat(fh.fileno()).st_size
    if not 0 < size <= MAX_VERDICT_BYTES:
        return None
    fh.seek(0)
    try:
        verdict = json.loads(fh.read().decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("passed"), bool):
        return None
    return verdict


def run_many(
    jobs: Iterable[str | Callable[[], ExecResult]],
    max_workers: int | None = None,
    **run_kwargs: Any,
) -> list[ExecResult]:
    """Run many sandboxed jobs in parallel, at most ``max_workers`` at a time.

    A job is either Python source (run with ``run_python(code, **run_kwargs)``) or a
    zero-argument callable returning an ``ExecResult`` (e.g. a ``functools.partial``
    of ``check_humaneval``). Results come back in job order.
    """
    workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise ValueError("max_workers must be at least 1")

    def call(job: str | Callable[[], ExecResult]) -> ExecResult:
        return run_python(job, **run_kwargs) if isinstance(job, str) else job()

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="jeval-sandbox") as pool:
        return list(pool.map(call, jobs))


def _execute(
    plan: IsolationPlan, limits: Limits, args: list[str], home: str, owner: tuple[int, int] | None,
    inp: IO[bytes] | int, out: IO[bytes], err: IO[bytes], timeout: float, pass_fds: tuple[int, ...] = (),
    cgroup: RunCgroup | None = None,
) -> tuple[int, bool, float]:
    argv, cwd, inner_home = plan.command(sandbox_python(plan.drops_privileges), args, home)
    env = scrubbed_env(inner_home, "/tmp" if plan.bwrap else None)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=inp, stdout=out, stderr=err, close_fds=True, pass_fds=pass_fds,
            start_new_session=True, **spawn_options(plan, owner, limits, cgroup=cgroup))
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"could not start the sandboxed interpreter: {exc}") from exc
    finally:
        if cgroup is not None:
            cgroup.close()
    try:
        exited = wait_unreaped(proc, timeout)
    finally:
        # Kill the whole group (grandchildren too) before reaping, while the
        # group id cannot have been reused yet; then whatever else is in the run's cgroup.
        kill_group(proc.pid)
        returncode = proc.wait()
        if cgroup is not None:
            cgroup.kill_all()
    duration = time.monotonic() - start
    if plan.shell_init and returncode > 128:
        returncode = -(returncode - 128)
    return returncode, not exited, duration


def wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to ``timeout`` s for ``proc`` to exit without reaping it; True if it exited."""
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                return bool(select.select([fd], [], [], timeout)[0])
            finally:
                os.close(fd)
    if hasattr(os, "waitid") and hasattr(os, "WNOWAIT"):
        deadline, delay = time.monotonic() + timeout, 0.001
        while True:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.05)
    try:  # pragma: no cover - platforms without waitid
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:  # pragma: no cover
        return False


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _classify(returncode: int, timed_out: bool, stderr: str, oom_killed: bool = False) -> Status:
    if timed_out:
        return "timeout"
    if returncode == 0:
        return "ok"
    if returncode == -getattr(signal, "SIGXCPU", 24):
        return "timeout"  # the CPU-time rlimit
    if oom_killed or _MEMORY_MARKERS.search(stderr[-4096:]):
        return "memory"
    return "killed" if returncode < 0 else "error"


class StdinFile:
    """Context manager: stdin content in an unlinked temporary file (or /dev/null)."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.file: IO[bytes] | None = None

    def __enter__(self) -> IO[bytes] | int:
        if self.text is None:
            return subprocess.DEVNULL
        self.file = tempfile.TemporaryFile()
        self.file.write(self.text.encode("utf-8"))
        self.file.seek(0)
        return self.file

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()


def read_capped(fh: IO[bytes], cap: int) -> str:
    """The file's text, or its first and last ``cap // 2`` bytes around a marker."""
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    if size <= cap:
        return fh.read().decode("utf-8", "replace")
    half = max(cap // 2, 1)
    head = fh.read(half)
    fh.seek(size - half)
    tail = fh.read(half)
    return (head.decode("utf-8", "replace") + f"\n...[{size - 2 * half} bytes truncated]...\n"
            + tail.decode("utf-8", "replace"))
