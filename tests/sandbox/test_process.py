"""Sandboxed execution: HumanEval for real, and hostile programs contained."""

from __future__ import annotations

import functools
import gzip
import json
import os
import pathlib
import stat
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from pytest_jeval.sandbox import (
    ExecResult,
    build_humaneval_program,
    check_humaneval,
    execution_reason,
    isolation,
    run_many,
    run_python,
    score_execution,
)
from pytest_jeval.sandbox import plans as _isolation

LINUX = sys.platform.startswith("linux")
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


HUMANEVAL = pathlib.Path(__file__).resolve().parents[1] / "data" / "humaneval" / "HumanEval.jsonl.gz"


def processes_in(directory: str) -> list[int]:
    """Live processes whose working directory is ``directory`` (Linux /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue  # gone, a zombie, or not ours to see
            if cwd.startswith(directory):
                pids.append(int(entry))
    return pids


def assert_no_survivors(directory: str) -> None:
    """No process is left in ``directory`` (waiting at most 30 s: the ones to kill sleep 600 s)."""
    deadline = time.monotonic() + 30.0
    while processes_in(directory) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(directory) == []


# --- basics -----------------------------------------------------------------


def test_ok_stdout_stdin_and_isolation_record() -> None:
    started = time.monotonic()
    result = run_python("import sys\nprint(sys.stdin.read().upper(), end='')", stdin="hello", timeout=30)
    elapsed = time.monotonic() - started
    assert result.status == "ok" and result.returncode == 0
    assert result.stdout == "HELLO" and result.stderr == ""
    assert {"subprocess", "session", "rlimits", "env-scrub", "tmpdir"} <= set(result.isolation)
    assert result.isolation == isolation()
    assert 0 < result.duration <= elapsed  # the run's own seconds, measured inside the call


@pytest.mark.skipif(not (LINUX and ROOT), reason="uid drop applies when started as root on Linux")
def test_root_drops_privileges_and_cannot_read_root_files(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    secret.chmod(0o600)
    private_tmp = tmp_path / "private"
    private_tmp.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))  # a $TMPDIR "nobody" cannot enter
    result = run_python(f"import os\nprint(os.getuid())\nprint(open({str(secret)!r}).read())", timeout=30)
    assert "uid-drop" in result.isolation
    assert result.stdout.splitlines()[0] != "0"
    assert result.status == "error" and "top secret" not in result.stdout
    # not readable as another uid, and not even visible inside the bubblewrap sandbox
    assert ("FileNotFoundError" if "bwrap" in result.isolation else "PermissionError") in result.stderr


def test_exception_and_exit_status() -> None:
    error = run_python("raise ValueError('boom')", timeout=30)
    assert error.status == "error" and error.returncode == 1
    assert error.stderr.rstrip().endswith("ValueError: boom")
    assert run_python("import sys; sys.exit(3)", timeout=30).returncode == 3


def test_temporary_directory_is_private_and_deleted() -> None:
    base = _isolation.base_dir(_isolation.current_plan())
    before = set(os.listdir(base))
    code = "import os\nprint(os.getcwd())\nprint(os.environ['HOME'])\nopen('scratch.txt', 'w').write('x')"
    result = run_python(code, timeout=30)
    cwd, home = result.stdout.split()
    assert result.status == "ok" and cwd == home
    if "bwrap" in result.isolation:
        assert cwd == _isolation.SANDBOX_HOME
    else:
        assert os.path.dirname(cwd) == base and os.path.basename(cwd).startswith("run-")
    # deleted afterwards: a run directory that appeared meanwhile may be another test's live run (xdist),
    # which soon ends; this run's own would stay
    appeared = {n for n in os.listdir(base) if n.startswith("run-")} - before
    deadline = time.monotonic() + 60
    while appeared and time.monotonic() < deadline:
        time.sleep(0.05)
        appeared &= set(os.listdir(base))
    assert not appeared
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o711


def test_secret_environment_is_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_TEST_SECRET_KEY", "sk-do-not-leak-123")
    monkeypatch.setenv("JEVAL_TEST_API_TOKEN", "tok-do-not-leak-456")
    code = "import os, json\nprint(json.dumps(dict(os.environ)))"
    result = run_python(code, timeout=30)
    env = json.loads(result.stdout)
    assert "sk-do-not-leak-123" not in result.stdout and "tok-do-not-leak-456" not in result.stdout
    assert "JEVAL_TEST_SECRET_KEY" not in env
    assert set(env) <= {"PATH", "LANG", "HOME", "TMPDIR", "PWD", "LC_CTYPE"}


def test_output_is_truncated() -> None:
    result = run_python("print('x' * 100_000)\nprint('END')", timeout=30, max_output=1000)
    assert result.status == "ok"
    assert len(result.stdout) < 1200 and "bytes truncated" in result.stdout
    assert result.stdout.rstrip().endswith("END")  # the tail is kept


@pytest.mark.skipif(not LINUX, reason="network namespaces are Linux-only")
def test_no_network_when_netns_applied() -> None:
    if "netns" not in isolation():
        pytest.skip("no network namespace on this machine")
    # Only lists interfaces: no traffic is sent anywhere.
    result = run_python("import socket\nprint(sorted(n for _, n in socket.if_nameindex()))", timeout=30)
    assert result.stdout.strip() == "['lo']"


# --- hostile programs ---------------------------------------------------------


def test_infinite_loop_times_out_and_grandchildren_die() -> None:
    code = textwrap.dedent("""
        import os, subprocess
        print(os.getcwd(), flush=True)
        subprocess.Popen(["sleep", "600"])
        while True:
            pass
    """)
    start = time.monotonic()
    result = run_python(code, timeout=2)
    assert result.status == "timeout"
    # killed at the 2 s bound, and the call returns without waiting for the grandchild's 600 s sleep
    assert 1.9 < result.duration < 30 and time.monotonic() - start < 30
    if LINUX:
        assert_no_survivors(result.stdout.split()[0])


def test_sleeping_program_is_killed_at_the_wall_clock_timeout() -> None:
    # Uses no CPU, so only the wall-clock timeout can end it.
    result = run_python("import time\nprint('start', flush=True)\ntime.sleep(600)", timeout=1)
    assert result.status == "timeout" and result.stdout == "start\n"
    assert 0.9 < result.duration < 30  # the 1 s bound, not the 600 s sleep


def test_fork_of_1000_processes_is_contained() -> None:
    code = textwrap.dedent("""
        import os, time
        print(os.getcwd(), flush=True)
        n = 0
        try:
            for _ in range(1000):
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
                n += 1
        finally:
            print("forked", n, flush=True)
    """)
    result = run_python(code, timeout=3, max_processes=32)
    lines = result.stdout.splitlines()
    forked = int(lines[-1].split()[1])
    if "uid-drop" in result.isolation or not ROOT:
        assert result.status == "error"
        assert "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr
        assert forked < 32
    assert result.duration < 30  # the 3 s bound: the forked sleepers (600 s) do not hold the run
    if LINUX:
        assert_no_survivors(lines[0])


@pytest.mark.skipif(not LINUX, reason="RLIMIT_AS is only enforced on Linux")
def test_8gb_allocation_is_reported_as_memory() -> None:
    result = run_python("x = bytearray(8 * 1024**3)\nprint('allocated')", timeout=30, memory_mb=512)
    assert result.status == "memory"
    assert "allocated" not in result.stdout


def test_cpu_limit_and_signals_are_classified() -> None:
    xcpu = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)", timeout=30)
    assert xcpu.status == "timeout" and xcpu.returncode == -24
    killed = run_python("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", timeout=30)
    assert killed.status == "killed" and killed.returncode == -9


def test_basic_isolation_fallback_still_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    strongest = isolation()
    monkeypatch.setenv("JEVAL_SANDBOX_ISOLATION", "basic")
    _isolation.reset_plan()
    try:
        assert [t for t in isolation() if not t.startswith("cgroup-")] == list(_isolation.BASE_TAGS)
        assert run_python("print(6 * 7)", timeout=30).stdout == "42\n"
        assert run_python("while True: pass", timeout=1).status == "timeout"
    finally:
        monkeypatch.delenv("JEVAL_SANDBOX_ISOLATION")
        _isolation.reset_plan()
    assert isolation() == strongest


# --- HumanEval -----------------------------------------------------------------


@pytest.fixture(scope="module")
def humaneval() -> list[dict]:
    with gzip.open(HUMANEVAL, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_program_calls_check() -> None:
    program = build_humaneval_program("def f(x):\n", "    return x\n", "def check(candidate):\n    pass\n", "f")
    assert program.endswith("\ncheck(f)\n")
    with pytest.raises(ValueError):
        build_humaneval_program("", "", "", "f); import os; os.system('x'")


def test_check_is_really_called() -> None:
    failing_test = "def check(candidate):\n    assert candidate(2) == 5\n"
    result = check_humaneval("def f(x):\n", "    return x\n", failing_test, "f", timeout=30)
    assert result.status == "error" and execution_reason(result) == "wrong answer"
    passing = check_humaneval("def f(x):\n", "    return x + 3\n", failing_test, "f", timeout=30)
    assert passing.status == "ok"


def test_early_exit_is_not_a_pass() -> None:
    test = "def check(candidate):\n    assert candidate(2) == 5\n"
    result = check_humaneval("def f(x):\n", "    return x\nimport sys\nsys.exit(0)\n", test, "f", timeout=30)
    assert result.status == "error" and result.verdict is not None and result.verdict["passed"] is False
    assert result.verdict["detail"] == "SystemExit: 0"
    quitter = check_humaneval("def f(x):\n", "    return x\nimport os\nos._exit(0)\n", test, "f", timeout=30)
    assert quitter.status == "error" and "exited with status 0" in quitter.verdict["detail"]  # type: ignore[index]
    assert score_execution(result).correct is False


def _every_eighth(humaneval: list[dict]) -> list[dict]:
    """21 of the 164 problems. All 164 run through check_humaneval in tests/acceptance/test_benchmarks_code.py
    (canonical solutions, through the plugin) and tests/benchmarks/test_humaneval.py (``return None``)."""
    assert len(humaneval) == 164
    return humaneval[::8]


def test_humaneval_canonical_solutions_pass(humaneval: list[dict]) -> None:
    problems = _every_eighth(humaneval)
    jobs = [functools.partial(check_humaneval, p["prompt"], p["canonical_solution"], p["test"], p["entry_point"],
                              timeout=30) for p in problems]
    results = run_many(jobs, max_workers=8)  # start-up is latency more than CPU: overlap it
    failed = [(p["task_id"], r.status, r.stderr[-300:]) for p, r in zip(problems, results) if r.status != "ok"]
    assert failed == []
    assert all(r.verdict == {"passed": True, "reason": "passed", "detail": ""} for r in results)


def test_humaneval_return_none_mostly_fails(humaneval: list[dict]) -> None:
    jobs = [functools.partial(check_humaneval, p["prompt"], "    return None\n", p["test"], p["entry_point"],
                              timeout=5) for p in _every_eighth(humaneval)]
    results = run_many(jobs, max_workers=8)
    assert sum(r.status == "ok" for r in results) <= 1  # 5 of 164 at most (the benchmark's test): 1 of these 21
    assert {execution_reason(r) for r in results} <= {"wrong answer", "exception", "passed"}


# --- run_many and scoring ---------------------------------------------------------


def test_run_many_keeps_order_and_bounds_concurrency() -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def job(i: int) -> ExecResult:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return ExecResult("ok", 0, str(i), "", 0.0, [])

    results = run_many([functools.partial(job, i) for i in range(12)], max_workers=3)
    assert [r.stdout for r in results] == [str(i) for i in range(12)]
    assert peak[0] <= 3
    sources = run_many([f"print({i})" for i in range(3)], max_workers=2, timeout=30)
    assert [r.stdout for r in sources] == ["0\n", "1\n", "2\n"]
    with pytest.raises(ValueError):
        run_many([], max_workers=0)


@pytest.mark.parametrize(
    ("status", "stderr", "correct", "reason"),
    [
        ("ok", "", True, "passed"),
        ("error", "Traceback...\nAssertionError\n", False, "wrong answer"),
        ("error", "Traceback...\nNameError: x\n", False, "exception"),
        ("timeout", "", False, "timeout"),
        ("memory", "MemoryError\n", False, "memory"),
        ("killed", "", False, "killed"),
    ],
)
def test_score_execution(status: str, stderr: str, correct: bool, reason: str) -> None:
    score = score_execution(ExecResult(status, 0, "", stderr, 0.1, ["subprocess"]))  # type: ignore[arg-type]
    assert score.correct is correct
    assert score.metadata["status"] == status and score.metadata["reason"] == reason
    assert score.metadata["stderr_tail"] == stderr
