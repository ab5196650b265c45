"""Retries against a local server with injected faults, and the dead-endpoint / bad-key preflight.

The ``openai`` client does the retrying (exponential backoff with jitter, honouring
``Retry-After``); these tests check that the plugin configures it from ``[run]``,
counts the attempts in the record, turns exhausted retries into an ERROR item whose
``error`` says why, and stops a run against an unusable endpoint before any sample.
"""

from __future__ import annotations

import json
import socket
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest
import scipy.stats  # noqa: F401  (loaded once here: pytester's in-process runs drop modules they import)

from conftest import SECRET, GsmScript, chat_requests, gsm_rows, outcome_ids
from pytest_jeval.testing.openai_server import FakeOpenAIServer, Fault, FaultInjector, last_user_message


class Flaky:
    """A GSM8K responder whose rows fail their first attempts with scripted faults.

    ``faults[i]`` lists the faults of row ``i``'s attempts 1, 2, ...; later attempts
    get the script's normal answer. ``always[i]`` is a fault for every attempt.
    """

    def __init__(self, script: GsmScript, faults: Optional[dict[int, list[Fault]]] = None,
                 always: Optional[dict[int, Fault]] = None) -> None:
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


class Project:
    def __init__(self, pytester: pytest.Pytester, rows: list[dict[str, Any]]) -> None:
        self.pytester = pytester
        self.rows = rows
        (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def suite(self, base_url: str, run: str = "", name: str = "suite.toml", key_env: str = "JEVAL_TEST_KEY") -> Path:
        path = self.pytester.path / name
        path.write_text(textwrap.dedent(f"""
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
            """))
        return path

    def records(self, out: str = "out") -> dict[str, dict[str, Any]]:
        path = self.pytester.path / out / "gsm8k_test-model.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def summary(self, out: str = "out") -> dict[str, Any]:
        return json.loads((self.pytester.path / out / "gsm8k_test-model.jsonl.summary.json").read_text())


@pytest.fixture
def project(pytester: pytest.Pytester, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    yield Project(pytester, gsm_rows(shared_data, 4))


def requests_for(server: FakeOpenAIServer, row: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in chat_requests(server) if row["question"] in last_user_message(r["body"] or {})]


# --------------------------------------------------------------------------- one fault, then success

FIRST_ATTEMPT_FAULTS = {
    "429-retry-after": Fault("429", retry_after=1.0),
    "500": Fault("500"),
    "hang-past-timeout": Fault("hang", hang_seconds=30.0),
    "dropped-connection": Fault("drop"),
}


@pytest.mark.parametrize("fault", list(FIRST_ATTEMPT_FAULTS.values()), ids=list(FIRST_ATTEMPT_FAULTS))
def test_fault_then_success(project: Project, fault: Fault) -> None:
    script = GsmScript(project.rows)
    with FakeOpenAIServer(Flaky(script, faults={0: [fault]}), api_key=SECRET) as server:
        suite = project.suite(server.base_url, run="max_retries = 2\nrequest_timeout = 1.5")
        result = project.pytester.runpytest("--jeval-config", str(suite), "-rA")
        result.assert_outcomes(passed=4)
        records = project.records()
        assert records["gsm8k-0"]["attempts"] == 2 and records["gsm8k-0"]["error"] is None
        assert records["gsm8k-0"]["is_correct"] is True
        assert all(records[f"gsm8k-{i}"]["attempts"] == 1 for i in (1, 2, 3))
        seen = requests_for(server, project.rows[0])
        assert len(seen) == 2
        assert [r["attempt"] for r in seen] == [1, 2]
        assert seen[1]["outcome"] == "answer"
        assert server.request_count == 5
        if fault.kind == "429":
            # Retry-After (1 s) is honoured: longer than the client's own first backoff (<= 0.5 s)
            assert seen[1]["arrived_at"] - seen[0]["completed_at"] >= 0.9
        result.stdout.fnmatch_lines(["calls: 4 sent, 0 from cache, 1 retries, *"])


# --------------------------------------------------------------------------- retries exhausted

EXHAUSTING = {
    "500": (Fault("500"), "HTTP 500 from http://127.0.0.1:*/v1: * (after 2 retries)"),
    "429": (Fault("429", retry_after=0.05), "HTTP 429 from http://127.0.0.1:*/v1: * (after 2 retries)"),
    "hang": (Fault("hang", hang_seconds=30.0), "timed out after 0.5s at http://127.0.0.1:*/v1 (after 2 retries)"),
    "drop": (Fault("drop"), "connection error to http://127.0.0.1:*/v1* (after 2 retries)"),
}


@pytest.mark.parametrize("fault,pattern", list(EXHAUSTING.values()), ids=list(EXHAUSTING))
def test_every_attempt_fails_becomes_an_error_item(project: Project, fault: Fault, pattern: str) -> None:
    import fnmatch

    script = GsmScript(project.rows)
    with FakeOpenAIServer(Flaky(script, always={1: fault}), api_key=SECRET) as server:
        suite = project.suite(server.base_url, run="max_retries = 2\nrequest_timeout = 0.5")
        result = project.pytester.runpytest("--jeval-config", str(suite), "-rA")
        result.assert_outcomes(passed=3, errors=1)
        assert outcome_ids(result, "error") == {"gsm8k-1"}
        err = project.records()["gsm8k-1"]
        assert err["is_correct"] is None and err["score"] is None
        assert fnmatch.fnmatch(err["error"], pattern), err["error"]
        assert len(requests_for(server, project.rows[1])) == 3  # the first attempt and 2 retries
        summary = project.summary()
        assert (summary["total_samples"], summary["errors"], summary["accuracy"]) == (4, 1, 1.0)


# --------------------------------------------------------------------------- fault injection at scale

def _run_collect(project: Project, server: FakeOpenAIServer, out: str) -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    suite = project.suite(server.base_url, run="max_retries = 3\nrequest_timeout = 10\nmax_concurrency = 16")
    result = project.pytester.runpytest("--jeval-config", str(suite), "--jeval-output", out, "-q")
    lines = (project.pytester.path / out / "gsm8k_test-model.jsonl").read_text().splitlines()
    ids = [json.loads(line)["record_id"] for line in lines]
    assert len(ids) == len(set(ids)), "duplicated records"
    return result, project.records(out)


def test_ten_percent_faults_lose_nothing(pytester: pytest.Pytester, shared_data: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    n = 64
    project = Project(pytester, gsm_rows(shared_data, n))
    script = GsmScript(project.rows, wrong=set(range(3, n, 7)), garbage={5, 40})
    with FakeOpenAIServer(script, api_key=SECRET, latency=0.02) as clean:
        clean_result, clean_records = _run_collect(project, clean, "clean")
    injector = FaultInjector(script, rate=0.1, kinds=("429", "500"), seed=3, retry_after=0.05)
    with FakeOpenAIServer(injector, api_key=SECRET, latency=0.02) as faulty:
        result, records = _run_collect(project, faulty, "faulty")
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


# --------------------------------------------------------------------------- unusable endpoints

def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_endpoint_stops_the_run_with_one_message(project: Project) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    # without the preflight every one of the 4 samples would back off for 0.5+1+2+4+8 s
    suite = project.suite(url, run="max_retries = 5\nrequest_timeout = 60")
    result = project.pytester.runpytest_subprocess("--jeval-config", str(suite), "-rA")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + result.stderr.str()
    assert out.count("endpoint unusable") == 1
    lines = [ln for ln in out.splitlines() if "model 'test-model'" in ln]
    assert len(lines) == 1 and f"connection error to {url}" in lines[0], out
    for word in ("passed", "failed", "error", "PASSED", "FAILED", "ERROR "):
        assert f" {word}" not in out.replace("endpoint unusable", ""), out
    assert not (project.pytester.path / "out" / "gsm8k_test-model.jsonl").exists() or not (
        project.pytester.path / "out" / "gsm8k_test-model.jsonl").read_text()


def test_rejected_key_stops_the_run_without_showing_it(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "sk-WRONG-key-0815-do-not-print"
    monkeypatch.setenv("JEVAL_WRONG_KEY", wrong)
    script = GsmScript(project.rows)
    with FakeOpenAIServer(script, api_key=SECRET) as server:
        suite = project.suite(server.base_url, key_env="JEVAL_WRONG_KEY", run="max_retries = 3")
        result = project.pytester.runpytest_subprocess("--jeval-config", str(suite), "-rA", "-vv", "--tb=long")
        assert server.request_count == 0  # no sample was sent
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + result.stderr.str()
    lines = [ln for ln in out.splitlines() if "model 'test-model'" in ln]
    assert len(lines) == 1 and "rejected the API key" in lines[0] and "401" in lines[0], out
    assert wrong not in out and SECRET not in out
    assert " passed" not in out and " failed" not in out
