"""Retries against a local server with injected faults, and the dead-endpoint / bad-key preflight.

The ``openai`` client does the retrying (exponential backoff with jitter, honouring
``Retry-After``); these tests check that the plugin configures it from ``[run]``,
counts the attempts in the record, turns exhausted retries into an ERROR item whose
``error`` says why, and stops a run against an unusable endpoint before any sample.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Loaded once here: pytester's in-process runs drop the modules they import, so without
# this every run would import openai and scipy.stats again (seconds on a busy machine).
import openai
import openai.resources.chat  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

from pytest_jeval.testing.openai_server import FakeOpenAIServer, Fault, FaultInjector, last_user_message
from tests.support.gsm import SECRET, GsmScript, chat_requests, gsm_rows


class Flaky:
    """A GSM8K responder whose rows fail their first attempts with scripted faults.

    ``faults[i]`` lists the faults of row ``i``'s attempts 1, 2, ...; later attempts
    get the script's normal answer. ``always[i]`` is a fault for every attempt.
    """

    def __init__(self, script: GsmScript, faults: dict[int, list[Fault]] | None = None,
                 always: dict[int, Fault] | None = None) -> None:
        self.script = script
        self.faults = faults or {}
        self.always = always or {}

    def row(self, body: dict[str, Any]) -> int:
        text = last_user_message(body)
        return next(i for i, r in enumerate(self.script.rows) if r["question"] in text)

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        i = self.row(body)
        if i in self.always:
            return self.always[i]
        planned = self.faults.get(i, [])
        if attempt <= len(planned):
            return planned[attempt - 1]
        return self.script.reply(i)


SUITE = """
[run]
output_dir = "out"
cache = false
{run}

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key_env = "{key_env}"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
"""


class Project:
    def __init__(self, pytester: pytest.Pytester, rows: list[dict[str, Any]]) -> None:
        self.pytester = pytester
        self.rows = rows
        (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def suite(self, base_url: str, run: str = "", name: str = "suite.toml", key_env: str = "JEVAL_TEST_KEY") -> Path:
        path = self.pytester.path / name
        path.write_text(SUITE.format(base_url=base_url, run=run, key_env=key_env))
        return path

    def records(self, out: str = "out") -> dict[str, dict[str, Any]]:
        path = self.pytester.path / out / "gsm8k_test-model.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def summary(self, out: str = "out") -> dict[str, Any]:
        return json.loads((self.pytester.path / out / "gsm8k_test-model.jsonl.summary.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    yield Project(pytester, gsm_rows(test_data, 4))


def requests_for(server: FakeOpenAIServer, row: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in chat_requests(server) if row["question"] in last_user_message(r["body"] or {})]


# --------------------------------------------------------------------------- one run, many faults
#
# One pytest run (a subprocess) over ten GSM8K rows, each with its own fault script;
# the tests below check one row each. [run] max_retries = 1, request_timeout = 1.5.

#: A hang outlasts request_timeout (1.5 s), then the server drops the connection. Were the
#: timeout not applied, the drop would end the attempt and the record would say "hang".
HANG = 4.0
FIRST_ATTEMPTS: dict[int, list[Fault]] = {
    0: [Fault("429", retry_after=1.0)],  # Retry-After longer than the client's own first backoff
    1: [Fault("500")],
    2: [Fault("hang", hang_seconds=HANG)],  # hangs past request_timeout
    3: [Fault("drop")],
    4: [Fault("503", retry_after=0.05)],
}
EVERY_ATTEMPT: dict[int, Fault] = {
    5: Fault("500"),
    6: Fault("429", retry_after=0.05),
    7: Fault("drop"),
    8: Fault("hang", hang_seconds=HANG),
}
CLEAN_ROW = 9
MAX_RETRIES = 1  # not the openai client's default (2): shows the setting is passed on


@dataclasses.dataclass
class FaultRun:
    rows: list[dict[str, Any]]
    server: FakeOpenAIServer
    result: subprocess.CompletedProcess[str]
    records: dict[str, dict[str, Any]]
    executor: str

    def seen(self, row: int) -> list[dict[str, Any]]:
        return requests_for(self.server, self.rows[row])

    def outcome(self, record_id: str) -> str:
        for line in self.result.stdout.splitlines():
            if f"/{record_id}]" in line and line.split(" ", 1)[0] in ("PASSED", "FAILED", "ERROR"):
                return line.split(" ", 1)[0]
        raise AssertionError(f"no outcome line for {record_id}:\n{self.result.stdout[-3000:]}")


@pytest.fixture(scope="module", params=["thread", "process"])
def fault_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              test_data: Path) -> Iterator[FaultRun]:
    """The run, with the HTTP client on a thread of pytest and in the helper call process."""
    root = tmp_path_factory.mktemp("faults")
    rows = gsm_rows(test_data, 10)
    (root / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    responder = Flaky(GsmScript(rows), faults=FIRST_ATTEMPTS, always=EVERY_ATTEMPT)
    with FakeOpenAIServer(responder, api_key=SECRET) as server:
        suite = root / "suite.toml"
        suite.write_text(SUITE.format(base_url=server.base_url, key_env="JEVAL_TEST_KEY",
                                      run=f"max_retries = {MAX_RETRIES}\nrequest_timeout = 1.5\n"
                                          f"call_executor = \"{request.param}\""))
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "-rA", "-p", "no:cacheprovider",
             "-p", "no:randomly"],
            cwd=root, capture_output=True, text=True, timeout=120,
            env={**os.environ, "JEVAL_TEST_KEY": SECRET},
        )
        path = root / "out" / "gsm8k_test-model.jsonl"
        records = {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())} if path.exists() else {}
        yield FaultRun(rows, server, result, records, request.param)


@pytest.mark.slow
def test_fault_run_counts(fault_run: FaultRun) -> None:
    assert fault_run.result.returncode == 1, fault_run.result.stdout[-3000:]  # the error items fail the run
    assert "6 passed, 4 errors" in fault_run.result.stdout, fault_run.result.stdout[-3000:]
    assert len(fault_run.records) == 10
    assert "calls: 10 sent, 0 from cache, " in fault_run.result.stdout  # retries are not separate calls
    helper = "HTTP client in 1 call process" in fault_run.result.stdout
    assert helper == (fault_run.executor == "process")


@pytest.mark.parametrize("row", sorted(FIRST_ATTEMPTS), ids=lambda r: "+".join(f.kind for f in FIRST_ATTEMPTS[r]))
def test_fault_then_success(fault_run: FaultRun, row: int) -> None:
    faults = FIRST_ATTEMPTS[row]
    record = fault_run.records[f"gsm8k-{row}"]
    assert fault_run.outcome(f"gsm8k-{row}") == "PASSED"
    assert record["is_correct"] is True and record["error"] is None
    assert record["attempts"] == len(faults) + 1
    seen = fault_run.seen(row)
    assert [r["attempt"] for r in seen] == list(range(1, len(faults) + 2))
    assert [r["outcome"] for r in seen] == [
        "cancelled" if f.kind == "hang" else f.kind for f in faults] + ["answer"]


def test_retry_after_is_honoured(fault_run: FaultRun) -> None:
    first, second = fault_run.seen(0)
    # Retry-After: 1.0 beats the client's own first backoff (0.375-0.5 s); sleeps never end early
    assert second["arrived_at"] - first["completed_at"] >= 0.9


def test_clean_row_is_sent_once(fault_run: FaultRun) -> None:
    assert fault_run.records[f"gsm8k-{CLEAN_ROW}"]["attempts"] == 1
    assert len(fault_run.seen(CLEAN_ROW)) == 1


EXHAUSTED = {
    5: "HTTP 500 from http://127.0.0.1:*/v1: * (after 1 retries)",
    6: "HTTP 429 from http://127.0.0.1:*/v1: * (after 1 retries)",
    7: "connection error to http://127.0.0.1:*/v1* (after 1 retries)",
    8: "timed out after 1.5s at http://127.0.0.1:*/v1 (after 1 retries)",
}


@pytest.mark.parametrize("row", sorted(EXHAUSTED), ids=lambda r: EVERY_ATTEMPT[r].kind)
def test_every_attempt_fails_becomes_an_error_item(fault_run: FaultRun, row: int) -> None:
    record = fault_run.records[f"gsm8k-{row}"]
    assert fault_run.outcome(f"gsm8k-{row}") == "ERROR"
    assert record["is_correct"] is None and record["score"] is None
    assert fnmatch.fnmatch(record["error"], EXHAUSTED[row]), record["error"]
    seen = fault_run.seen(row)
    assert len(seen) == MAX_RETRIES + 1
    fault = EVERY_ATTEMPT[row]
    assert [r["outcome"] for r in seen] == ["cancelled" if fault.kind == "hang" else fault.kind] * (MAX_RETRIES + 1)


# --------------------------------------------------------------------------- fault injection at scale

def _run_collect(project: Project, server: FakeOpenAIServer, out: str,
                 executor: str = "thread") -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    suite = project.suite(server.base_url, run="max_retries = 3\nrequest_timeout = 10\nmax_concurrency = 16\n"
                                               f'call_executor = "{executor}"')
    result = project.pytester.runpytest("--jeval-config", str(suite), "--jeval-output", out, "-q")
    lines = (project.pytester.path / out / "gsm8k_test-model.jsonl").read_text().splitlines()
    ids = [json.loads(line)["record_id"] for line in lines]
    assert len(ids) == len(set(ids)), "duplicated records"
    return result, project.records(out)


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_ten_percent_faults_lose_nothing(pytester: pytest.Pytester, test_data: Path,
                                         monkeypatch: pytest.MonkeyPatch, executor: str) -> None:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    n = 64
    project = Project(pytester, gsm_rows(test_data, n))
    script = GsmScript(project.rows, wrong=set(range(3, n, 7)), garbage={5, 40})
    with FakeOpenAIServer(script, api_key=SECRET, latency=0.02) as clean:
        clean_result, clean_records = _run_collect(project, clean, "clean")
    injector = FaultInjector(script, rate=0.1, kinds=("429", "500"), seed=3, retry_after=0.05)
    with FakeOpenAIServer(injector, api_key=SECRET, latency=0.02) as faulty:
        result, records = _run_collect(project, faulty, "faulty", executor)
        outcomes = Counter(r["outcome"] for r in chat_requests(faulty))
    assert outcomes["429"] + outcomes["500"] >= 3, outcomes  # faults really happened
    assert outcomes["answer"] == n
    assert sum(r["attempts"] for r in records.values()) == n + outcomes["429"] + outcomes["500"]
    assert set(records) == set(clean_records) == {f"gsm8k-{i}" for i in range(n)}
    assert all(r["error"] is None for r in records.values())
    assert {k: r["is_correct"] for k, r in records.items()} == {k: r["is_correct"] for k, r in clean_records.items()}
    assert project.summary("faulty")["accuracy"] == project.summary("clean")["accuracy"]
    assert project.summary("faulty")["errors"] == 0
    assert result.parseoutcomes() == clean_result.parseoutcomes()
    assert ("HTTP client in 1 call process" in result.stdout.str()) == (executor == "process")


# --------------------------------------------------------------------------- unusable endpoints

def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _assert_stopped_before_any_sample(project: Project, result: pytest.RunResult, reason: str) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + "\n" + result.stderr.str()
    # one message, naming the model and the reason
    assert out.count("endpoint unusable") == 1, out
    lines = [ln for ln in out.splitlines() if "test-model" in ln]
    assert len(lines) == 1 and "model 'test-model'" in lines[0] and fnmatch.fnmatch(lines[0], f"*{reason}*"), out
    # no item ran, no record was written
    assert not [ln for ln in out.splitlines() if ln.startswith(("PASSED", "FAILED", "ERROR suite"))], out
    assert not re.search(r"\d+ (passed|failed|errors?)\b", out), out
    records = project.pytester.path / "out" / "gsm8k_test-model.jsonl"
    assert not records.exists() or not records.read_text()
    return out


def test_dead_endpoint_stops_the_run_with_one_message(project: Project) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    # without the preflight each of the 4 samples would be retried 5 times, backing off 0.5+1+2+4+8 s
    suite = project.suite(url, run="max_retries = 5\nrequest_timeout = 60")
    result = project.pytester.runpytest("--jeval-config", str(suite), "-rA")
    _assert_stopped_before_any_sample(project, result, f"connection error to {url}")


def test_rejected_key_stops_the_run_without_showing_it(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "sk-WRONG-key-0815-do-not-print"
    monkeypatch.setenv("JEVAL_WRONG_KEY", wrong)
    with FakeOpenAIServer(GsmScript(project.rows), api_key=SECRET) as server:
        suite = project.suite(server.base_url, key_env="JEVAL_WRONG_KEY", run="max_retries = 3")
        result = project.pytester.runpytest("--jeval-config", str(suite), "-rA", "-vv", "--tb=long", "-l")
        assert server.request_count == 0  # no chat request was sent
        assert len(server.requests) == 1  # only the preflight's GET /v1/models
    out = _assert_stopped_before_any_sample(project, result, "rejected the API key (HTTP 401)")
    assert wrong not in out and SECRET not in out
