"""``[run] warmup_samples``: untimed calls that the server sees first and that leave no trace in the results."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import Answer, last_user_message
from tests.support.gsm import GsmScript, JevalProject, chat_requests

COLD = 0.8
"""Seconds the first calls to the (cold) server take: a warm-up call absorbs them, no record shows them."""


class ColdStart:
    """The project's GSM8K script, with the first ``cold`` chat calls held ``COLD`` seconds."""

    def __init__(self, inner: GsmScript, cold: int) -> None:
        self.inner = inner
        self.cold = cold
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        with self.lock:
            self.calls += 1
            slow = self.calls <= self.cold
        reply = self.inner(body, attempt)
        if slow and isinstance(reply, str):
            return Answer(reply, delay=COLD)
        return reply


def _row(p: JevalProject, request: dict[str, Any]) -> int:
    text = last_user_message(request["body"])
    return next(i for i, row in enumerate(p.script.rows) if row["question"] in text)


def _cache_entries(root: Path) -> int:
    return sum(1 for _ in root.glob("*/*.json")) if root.is_dir() else 0


def test_warmup_calls_come_first_and_leave_no_record_latency_or_cache_entry(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.server.responder = ColdStart(p.script, cold=2)
    suite = p.suite(extra_run="warmup_samples = 2")
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    result.assert_outcomes(passed=6, failed=3, errors=1)  # as without warm-up: warm-ups are not items
    result.stdout.fnmatch_lines(["warm-up: 2 calls to test-model in *s", "*calls: 10 sent, 0 from cache*"])

    chats = chat_requests(p.server)
    assert len(chats) == 2 + 10 + 1  # two warm-ups, ten samples, one retry of the failing row
    warmups, measured = chats[:2], chats[2:]
    assert [_row(p, r) for r in warmups] == [0, 1]  # the first two samples of the benchmark
    assert all(w["completed_at"] <= measured[0]["arrived_at"] for w in warmups)  # done before any measured call
    assert sorted({_row(p, r) for r in measured}) == list(range(10))

    records = p.records()
    assert len(records) == 10 and len({r["record_id"] for r in records}) == 10
    latencies = [r["latency_seconds"] for r in records if r["latency_seconds"] is not None]
    assert len(latencies) == 9 and max(latencies) < COLD  # the cold calls were the warm-ups
    summary = p.summary()
    assert summary["total_samples"] == 10
    assert summary["latency_stats"]["max"] == max(latencies)
    cache = p.pytester.path / "out" / ".cache"
    assert _cache_entries(cache) == 9  # the nine answered samples; the warm-ups wrote nothing

    # The cache now holds the warm-up prompts' replies: a warm-up never reads it, the samples do.
    p.server.reset_stats()
    again = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    again.assert_outcomes(passed=6, failed=3, errors=1)
    again.stdout.fnmatch_lines(["warm-up: 2 calls to test-model in *s", "*calls: 1 sent, 9 from cache*"])
    rows = [_row(p, r) for r in chat_requests(p.server)]
    assert rows[:2] == [0, 1] and rows[2:] == [3, 3]  # warm-ups sent again, then only the failing row


def test_warmup_writes_no_cache_entry_for_a_sample_the_run_does_not_measure(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite(extra_run="warmup_samples = 2")
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly",
                                  "--deselect", "suite.toml::gsm8k::test_gsm8k[test-model/gsm8k-0]")
    chats = chat_requests(p.server)
    ran = result.parseoutcomes()
    assert sum(ran.get(k, 0) for k in ("passed", "failed", "errors")) == 9
    assert [_row(p, r) for r in chats[:2]] == [0, 1]
    assert 0 not in [_row(p, r) for r in chats[2:]]
    assert _cache_entries(p.pytester.path / "out" / ".cache") == 8  # rows 1, 2, 4..9; nothing for row 0


def test_no_warmup_without_the_key(jeval_project: JevalProject) -> None:
    p = jeval_project
    result = p.pytester.runpytest("--jeval-config", str(p.suite()), "-p", "no:randomly")
    result.assert_outcomes(passed=6, failed=3, errors=1)
    assert "warm-up" not in result.stdout.str()
    assert len(chat_requests(p.server)) == 11


@pytest.mark.slow
def test_each_xdist_worker_warms_up_its_own_process(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite(extra_run="warmup_samples = 2\ncache = false")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "-n", "2")
    result.assert_outcomes(passed=6, failed=3, errors=1)
    result.stdout.fnmatch_lines_random(["warm-up: 2 calls to test-model in *s [[]gw0[]]",
                                        "warm-up: 2 calls to test-model in *s [[]gw1[]]"])
    assert len(chat_requests(p.server)) == 2 * 2 + 10 + 1
    assert len(p.records()) == 10


def test_a_failed_warmup_call_is_reported_and_the_run_goes_on(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing = {0}  # the first warm-up prompt gets 500s (and so does its measured call)
    suite = p.suite(extra_run="warmup_samples = 1")
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    result.stdout.fnmatch_lines(["warm-up: 1 call to test-model in *s (1 failed, run goes on: EndpointError: *"])
    assert len(p.records()) == 10
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
@pytest.mark.local_model  # skipped, with the reason, where llama-cpp-python or the GGUF is missing
def test_the_bundled_local_model_is_warmed_up_too(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("suite.toml").write_text(
        '[defaults]\nmax_tokens = 8\n[run]\noutput_dir = "out"\ncache = false\nwarmup_samples = 1\n'
        '[[models]]\nname = "smollm2-135m"\nengine = "local"\n'
        '[[benchmarks]]\nname = "quickstart"\nrecord_ids = ["qs-fact-01"]\n'
    )
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    assert result.ret in (0, 1), result.stderr.str()
    result.stdout.fnmatch_lines(["warm-up: 1 call to smollm2-135m in *s", "*jeval results*"])
    assert "failed" not in next(line for line in result.outlines if line.startswith("warm-up"))
    lines = (pytester.path / "out" / "quickstart_smollm2-135m.jsonl").read_text().splitlines()
    assert len(lines) == 1
