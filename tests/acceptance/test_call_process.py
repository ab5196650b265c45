"""``[run] call_executor``: the HTTP client in a helper process, chosen by hand or by ``auto``.

The helper process must be invisible in the results: the same records as calls on a
thread, the same bounds on what is in flight, under xdist too; and when it dies, the
run goes on without losing or repeating a sample.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

# Loaded once here: pytester's in-process runs drop the modules they import.
import openai
import openai.resources.chat  # noqa: F401
import pytest
import scipy.stats  # noqa: F401
from pydantic import SecretStr

from pytest_jeval.calls.callproc import ProcessCallScheduler
from pytest_jeval.calls.scheduler import SchedulerStats
from pytest_jeval.core.chat import ChatRequest, Endpoint
from pytest_jeval.session.runtime import AUTO_PROCESS_MIN_CALLS, AUTO_PROCESS_MIN_CONCURRENCY, Runtime
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.gsm import SECRET, GsmScript, chat_requests, gsm_rows
from tests.support.holds import HoldUntilConcurrent
from tests.support.paths import TEST_DATA

SUITE = """
[run]
output_dir = "{out}"
cache = false
max_retries = 2
request_timeout = 30
max_concurrency = {concurrency}
{run}

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key_env = "JEVAL_TEST_KEY"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
"""

#: Fields that may differ between two live runs of the same samples.
VOLATILE = {"latency_seconds", "throughput_tok_per_sec", "call_windows", "ttft", "timestamp"}

#: Written by the project's conftest at session end: which scheduler ran the calls, and where.
REPORT_EXECUTOR = """
import json, os
from pytest_jeval.session.keys import runtime_key

def pytest_sessionfinish(session):
    runtime = session.config.stash.get(runtime_key, None)
    scheduler = runtime._scheduler if runtime is not None else None
    if scheduler is None or hasattr(session.config, "workerinput"):
        return
    (session.config.rootpath / "executor.json").write_text(json.dumps(
        {"scheduler": type(scheduler).__name__, "child": getattr(scheduler, "pid", None), "me": os.getpid()}))
"""


class Project:
    def __init__(self, pytester: pytest.Pytester, rows: list[dict[str, Any]]) -> None:
        self.pytester = pytester
        self.rows = rows
        (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def suite(self, server: FakeOpenAIServer, out: str, executor: str, concurrency: int = 8, run: str = "") -> Path:
        path = self.pytester.path / f"suite-{out}.toml"
        path.write_text(SUITE.format(out=out, base_url=server.base_url, concurrency=concurrency,
                                     run=f'call_executor = "{executor}"\n{run}'))
        return path

    def records(self, out: str) -> dict[str, dict[str, Any]]:
        lines = (self.pytester.path / out / "gsm8k_test-model.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert len(records) == len({r["record_id"] for r in records}), "a sample was recorded twice"
        return {r["record_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in records}


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    return Project(pytester, gsm_rows(test_data, 30))


def test_process_executor_records_match_the_thread_ones(project: Project) -> None:
    script = GsmScript(project.rows, wrong={4, 11}, garbage={7})
    project.pytester.makeconftest(REPORT_EXECUTOR)
    with FakeOpenAIServer(script, api_key=SECRET, latency=0.05) as server:
        thread = project.pytester.runpytest("--jeval-config", str(project.suite(server, "thread", "thread")))
        thread.assert_outcomes(passed=27, failed=3)
        assert json.loads((project.pytester.path / "executor.json").read_text())["scheduler"] == "CallScheduler"
        server.reset_stats()
        server.responder = HoldUntilConcurrent(script, 8)  # the first 8 overlap, however slow the machine
        process = project.pytester.runpytest("--jeval-config", str(project.suite(server, "process", "process")))
        process.assert_outcomes(passed=27, failed=3)
        assert server.request_count == 30  # one request per sample, none repeated
        assert server.max_in_flight == 8  # the bound holds in the helper process too
    where = json.loads((project.pytester.path / "executor.json").read_text())
    assert where["scheduler"] == "ProcessCallScheduler" and where["child"] not in (None, where["me"])
    process.stdout.fnmatch_lines(["calls: 30 sent, 0 from cache, 0 retries, peak 8 in flight*, "
                                  "HTTP client in 1 call process"])
    assert "call process" not in thread.stdout.str()
    assert project.records("process") == project.records("thread")


@pytest.mark.slow
def test_xdist_workers_each_run_a_call_process(project: Project) -> None:
    """With -n W, up to W x max_concurrency requests are in flight: each worker has its own helper."""
    # 40 rows: xdist's first chunk gives each worker 5 items, enough to keep its helper's 4 requests in flight
    project = Project(project.pytester, gsm_rows(TEST_DATA, 40))
    script = GsmScript(project.rows, wrong={2}, garbage={20})
    with FakeOpenAIServer(script, api_key=SECRET, latency=0.05) as server:
        serial = project.pytester.runpytest("--jeval-config", str(project.suite(server, "serial", "thread", 4)))
        serial.assert_outcomes(passed=38, failed=2)
        server.reset_stats()
        # the first requests wait until 5 are in flight: more than one process's 4, so both workers' helpers
        # are sending at once, however unevenly the workers start
        server.responder = HoldUntilConcurrent(script, 5)
        result = project.pytester.runpytest(
            "--jeval-config", str(project.suite(server, "xdist", "process", 4)), "-n", "2")
        result.assert_outcomes(passed=38, failed=2)
        assert server.request_count == 40
        assert 4 < server.max_in_flight <= 8  # each worker's helper keeps its own 4 in flight
    # the summary's peak is the busiest worker's
    result.stdout.fnmatch_lines(["calls: 40 sent, 0 from cache, 0 retries, peak 4 in flight, *, "
                                 "HTTP client in 2 call processes"])
    assert project.records("xdist") == project.records("serial")


KILL_CHILD = """
import os, signal
from pytest_jeval.session.keys import runtime_key


class KillChild:
    # a plugin, not conftest hooks: the items live under the benchmark module's path,
    # and conftest hooks only see items below the conftest's directory
    def __init__(self, config):
        self.config = config
        self.finished = 0

    def pytest_runtest_logreport(self, report):
        if report.when != "call":
            return
        self.finished += 1
        if self.finished == {after}:
            scheduler = self.config.stash[runtime_key].scheduler
            os.kill(scheduler.pid, signal.SIGKILL)
            scheduler._proc.wait()


def pytest_configure(config):
    config.pluginmanager.register(KillChild(config))
"""


@pytest.mark.slow
def test_a_killed_call_process_loses_nothing(project: Project) -> None:
    project.pytester.makeconftest(KILL_CHILD.format(after=5))
    script = GsmScript(project.rows, wrong={25})
    with FakeOpenAIServer(script, api_key=SECRET, latency=0.3) as server:
        result = project.pytester.runpytest("--jeval-config", str(project.suite(server, "out", "process", 4)))
        requests = chat_requests(server)
    result.assert_outcomes(passed=29, failed=1)
    result.stdout.fnmatch_lines([
        "jeval: the call process exited 1 time(s) mid-run; its unanswered calls were sent again*",
        "  exit status -9*",
    ])
    records = project.records("out")
    assert set(records) == {f"gsm8k-{i}" for i in range(30)}
    assert all(r["error"] is None for r in records.values())
    assert [k for k, r in records.items() if not r["is_correct"]] == ["gsm8k-25"]
    # only the calls in flight when it died (at most max_concurrency) can have been sent twice
    assert 30 <= len(requests) <= 30 + 4


@pytest.mark.parametrize(
    ("executor", "calls", "concurrency", "expected"),
    [
        ("auto", AUTO_PROCESS_MIN_CALLS - 1, 64, "thread"),
        ("auto", AUTO_PROCESS_MIN_CALLS, 64, "process"),
        ("auto", 100_000, AUTO_PROCESS_MIN_CONCURRENCY - 1, "thread"),
        ("auto", None, 64, "thread"),  # nothing counted yet
        ("thread", 100_000, 64, "thread"),
        ("process", 1, 1, "process"),
    ],
)
def test_executor_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executor: str, calls: int | None,
                         concurrency: int, expected: str) -> None:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    (tmp_path / "gsm.jsonl").write_text("")
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(out="out", base_url="http://127.0.0.1:9/v1", concurrency=concurrency,
                                  run=f'call_executor = "{executor}"'))
    runtime = Runtime(EvalPlan.from_file(suite, invocation_dir=tmp_path), use_cache=False)
    runtime.expected_calls = calls
    assert runtime.executor == expected


@pytest.mark.slow
def test_auto_counts_this_process_share_of_the_calls(project: Project) -> None:
    """``auto`` decides from the collected items that will call the model, split over xdist workers."""
    project.pytester.makeconftest(REPORT_EXECUTOR)
    rows = project.rows * 7  # 210 samples: at least AUTO_PROCESS_MIN_CALLS in one process, not in each of 2
    (project.pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = GsmScript(project.rows)
    with FakeOpenAIServer(script, api_key=SECRET) as server:
        one = project.pytester.runpytest("--jeval-config", str(project.suite(server, "one", "auto", 16)), "-q")
        one.assert_outcomes(passed=210)
        assert json.loads((project.pytester.path / "executor.json").read_text())["scheduler"] == "ProcessCallScheduler"
        two = project.pytester.runpytest("--jeval-config", str(project.suite(server, "two", "auto", 16)), "-q",
                                         "-n", "2")
        two.assert_outcomes(passed=210)
        # 210 samples start a helper at session start; -k leaves 111 items, so it is stopped again
        some = project.pytester.runpytest("--jeval-config", str(project.suite(server, "some", "auto", 16)), "-q",
                                          "-k", "gsm8k-1")
        some.assert_outcomes(passed=111)
        assert json.loads((project.pytester.path / "executor.json").read_text())["scheduler"] == "CallScheduler"
    one.stdout.fnmatch_lines(["calls: 210 sent, *, HTTP client in 1 call process"])
    assert "call process" not in two.stdout.str()
    assert "call process" not in some.stdout.str()


# --------------------------------------------------------------------------- the scheduler itself

def _requests(server: FakeOpenAIServer, n: int) -> list[tuple[Endpoint, ChatRequest]]:
    endpoint = Endpoint(server.base_url, SecretStr(SECRET), max_concurrency=4, max_retries=0)
    return [(endpoint, ChatRequest(model="test-model", messages=({"role": "user", "content": f"q{i}"},)))
            for i in range(n)]


def _through_helper(n: int) -> tuple[list[str], SchedulerStats, int]:
    """Send ``n`` calls through a fresh ProcessCallScheduler: reply texts, its stats, requests the server saw."""
    with FakeOpenAIServer(lambda body, attempt: "ok", api_key=SECRET) as server:
        scheduler = ProcessCallScheduler()
        try:
            replies = [f.result(timeout=30).text for f in scheduler.submit_many(_requests(server, n))]
            return replies, scheduler.stats, server.request_count
        finally:
            scheduler.close()


def test_a_helper_that_dies_at_start_leaves_the_calls_to_a_thread(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a sitecustomize on PYTHONPATH runs first in the helper's interpreter, and kills it
    (tmp_path / "sitecustomize.py").write_text(
        "import os, sys\nsys.stderr.write('broken helper env')\nsys.stderr.flush()\nos._exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    replies, stats, sent = _through_helper(6)
    assert replies == ["ok"] * 6 and sent == 6
    assert stats.call_process_exits == 1 and stats.completed == 6 and stats.submitted == 6
    assert stats.call_process_errors == ("exit status 3: broken helper env",)


def test_a_helper_that_cannot_be_started_leaves_the_calls_to_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")
    replies, stats, sent = _through_helper(3)
    assert replies == ["ok"] * 3 and sent == 3
    assert stats.call_processes == 0 and stats.call_process_errors[0].startswith("could not start: ")


def test_close_cancels_what_is_pending_and_reaps_the_helper() -> None:
    with FakeOpenAIServer(lambda body, attempt: "ok", api_key=SECRET, latency=5.0) as server:
        scheduler = ProcessCallScheduler()
        futures = scheduler.submit_many(_requests(server, 3))
        pid = scheduler.pid
        scheduler.close()
    assert all(f.cancelled() for f in futures)
    assert pid is not None and not Path(f"/proc/{pid}").exists()  # exited and reaped


def test_an_idle_helper_exits_when_its_parent_goes_away() -> None:
    """End of file on the socket, as when the pytest process dies, ends the helper even with no call in flight."""
    scheduler = ProcessCallScheduler()
    scheduler.start()
    assert scheduler._proc is not None and scheduler._conn is not None
    try:
        # what the kernel does to the socket when its owner dies: the helper reads end of file
        with socket.socket(fileno=os.dup(scheduler._conn.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
        assert scheduler._proc.wait(timeout=30) == 0
    finally:
        scheduler.close()
