"""One pytest process keeps many requests in flight, bounded by max_concurrency, and still
reports items one by one in pytest's order. No assertion here depends on timings: the
server counts what was in flight at once, and holds the first requests until as many as the bound
allows are in flight (``HoldUntilConcurrent``), so they overlap however slow the machine is."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

# Loaded once here: pytester's in-process runs drop the modules they import, so without
# this every run would import openai and scipy.stats again (seconds on a busy machine).
import openai
import openai.resources.chat  # noqa: F401
import pytest
import scipy.stats  # noqa: F401

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, last_user_message
from tests.support.gsm import SECRET, GsmScript, chat_requests, gsm_rows
from tests.support.holds import HoldUntilConcurrent

SUITE = """
{head}
[run]
output_dir = "out"
cache = false
max_retries = 0
request_timeout = 60
{run}

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key_env = "JEVAL_TEST_KEY"
{model}

[[benchmarks]]
name = "{bench}"
data_files = "gsm.jsonl"
{bench_extra}
"""


class Project:
    def __init__(self, pytester: pytest.Pytester, rows: list[dict[str, Any]]) -> None:
        self.pytester = pytester
        self.rows = rows
        (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def suite(self, server: FakeOpenAIServer, *, run: str = "", model: str = "", head: str = "",
              bench: str = "gsm8k", bench_extra: str = "") -> Path:
        path = self.pytester.path / "suite.toml"
        path.write_text(SUITE.format(base_url=server.base_url, run=run, model=model, head=head, bench=bench,
                                     bench_extra=bench_extra))
        return path

    def records(self, bench: str = "gsm8k", out: str = "out") -> list[dict[str, Any]]:
        path = self.pytester.path / out / f"{bench}_test-model.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]


def project_with(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> Project:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    return Project(pytester, gsm_rows(test_data, n))


def test_max_concurrency_bounds_the_requests_in_flight(pytester: pytest.Pytester, test_data: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    p = project_with(pytester, test_data, monkeypatch, 50)
    with FakeOpenAIServer(HoldUntilConcurrent(GsmScript(p.rows), 8), api_key=SECRET, latency=0.05) as server:
        result = pytester.runpytest("--jeval-config", str(p.suite(server, run="max_concurrency = 8")))
        result.assert_outcomes(passed=50)
        assert server.request_count == 50  # one request per sample, none repeated
        assert server.max_in_flight == 8  # kept full, never more (serial calls would give 1)
    result.stdout.fnmatch_lines(["calls: 50 sent, 0 from cache, 0 retries, peak 8 in flight*"])
    assert len(p.records()) == 50


def test_model_max_concurrency_overrides_run(pytester: pytest.Pytester, test_data: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    p = project_with(pytester, test_data, monkeypatch, 12)
    with FakeOpenAIServer(HoldUntilConcurrent(GsmScript(p.rows), 3), api_key=SECRET, latency=0.05) as server:
        suite = p.suite(server, run="max_concurrency = 8", model="max_concurrency = 3")
        pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=12)
        assert server.max_in_flight == 3
        assert server.request_count == 12


def test_default_concurrency_is_32(pytester: pytest.Pytester, test_data: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    p = project_with(pytester, test_data, monkeypatch, 40)
    with FakeOpenAIServer(HoldUntilConcurrent(GsmScript(p.rows), 32), api_key=SECRET, latency=0.05) as server:
        pytester.runpytest("--jeval-config", str(p.suite(server))).assert_outcomes(passed=40)
        assert server.max_in_flight == 32


ITEM_LINE = re.compile(r"^suite\.toml::gsm8k::test_gsm8k\[test-model/(gsm8k-\d+)\] (PASSED|FAILED|ERROR)")


def test_items_report_in_collection_order(pytester: pytest.Pytester, test_data: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    n = 24
    p = project_with(pytester, test_data, monkeypatch, n)
    script = GsmScript(p.rows, wrong={3, 17})

    def later_rows_answer_first(body: dict[str, Any], attempt: int) -> Any:
        text = last_user_message(body)
        i = next(i for i, r in enumerate(p.rows) if r["question"] in text)
        return Answer(script.reply(i), delay=0.02 * (n - i))

    # the first 16 are answered together, so the delays alone decide the order they finish in
    with FakeOpenAIServer(HoldUntilConcurrent(later_rows_answer_first, 16), api_key=SECRET) as server:
        suite = p.suite(server, run="max_concurrency = 16")
        collected = pytester.runpytest("--jeval-config", str(suite), "--collect-only", "-q", "-p", "no:randomly")
        result = pytester.runpytest("--jeval-config", str(suite), "-v", "-p", "no:randomly")
        requests = chat_requests(server)
    order = [line.split("/", 1)[1].rstrip("]") for line in collected.outlines if line.startswith("suite.toml::")]
    assert order == [f"gsm8k-{i}" for i in range(n)]
    result.assert_outcomes(passed=n - 2, failed=2)
    reported = [m.group(1) for m in map(ITEM_LINE.match, result.outlines) if m]
    assert reported == order
    # the check means something: the server finished them in another order
    by_completion = sorted(requests, key=lambda r: r["completed_at"])
    finished = [next(i for i, row in enumerate(p.rows) if row["question"] in last_user_message(r["body"]))
                for r in by_completion]
    assert finished != sorted(finished)
    # and the outcomes are the right ones
    failed = [m.group(1) for m in map(ITEM_LINE.match, result.outlines) if m and m.group(2) == "FAILED"]
    assert failed == ["gsm8k-3", "gsm8k-17"]
    assert [r["record_id"] for r in p.records()] == [f"gsm8k-{i}" for i in range(n)]


JUDGED_BENCH = '''
from pytest_jeval import Benchmark, Sample, Score
from pytest_jeval.scoring.numeric import gsm8k_gold, score_numeric


def to_sample(row, index, ctx):
    return Sample(id=ctx.default_id(index), input=row["question"], target=gsm8k_gold(row["answer"]))


BENCHMARK = Benchmark(
    name="judged",
    dataset=None,
    to_sample=to_sample,
    prompt=lambda s: "Solve: " + s.input,
)


def test_judged(sample, response, judge, score):
    verdict = judge.chat("JUDGE: is this right? " + response.text)
    result = score_numeric(response.text, sample.target)
    score(Score(correct=result.correct and verdict.text == "yes", extracted=result.extracted,
                metadata={"judge": verdict.text}))
'''


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["thread", "process"])
def test_judge_calls_share_the_endpoint_bound(pytester: pytest.Pytester, test_data: Path,
                                              monkeypatch: pytest.MonkeyPatch, executor: str) -> None:
    n = 16
    p = project_with(pytester, test_data, monkeypatch, n)
    (pytester.path / "bench_judged.py").write_text(JUDGED_BENCH)
    script = GsmScript(p.rows)

    def respond(body: dict[str, Any], attempt: int) -> Any:
        text = last_user_message(body)
        if text.startswith("JUDGE:"):
            return "yes"
        return script(body, attempt)

    with FakeOpenAIServer(HoldUntilConcurrent(respond, 4), api_key=SECRET, latency=0.2,
                          models=("test-model", "judge-model")) as server:
        head = f'[judge]\nmodel = "judge-model"\nbase_url = "{server.base_url}"\napi_key_env = "JEVAL_TEST_KEY"\n'
        suite = p.suite(server, run=f'max_concurrency = 4\ncall_executor = "{executor}"', head=head, bench="judged",
                        bench_extra='module = "bench_judged.py"')
        result = pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=n)
        requests = chat_requests(server)
        assert len(requests) == 2 * n
        assert sum(r["body"]["model"] == "judge-model" for r in requests) == n
        # judge calls queue for the same 4 slots as the prefetched model calls
        assert server.max_in_flight == 4
    helper = ", HTTP client in 1 call process" if executor == "process" else ""
    result.stdout.fnmatch_lines([f"calls: {2 * n} sent, 0 from cache, 0 retries, peak 4 in flight, *in-call{helper}"])
    records = p.records("judged")
    assert all(r["judge_prompt_tokens"] and r["scoring_metadata"]["judge"] == "yes" for r in records)


# -n W: each worker keeps its own max_concurrency in flight; see tests/acceptance/test_call_process.py
