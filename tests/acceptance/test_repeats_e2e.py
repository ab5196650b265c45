"""Repeats as measurement on a direct benchmark (issue 29, section 2), over real HTTP.

Three GSM8K rows run ``repeats = 4``. The test server answers each row right or wrong by a fixed
pattern per repeat, so every statistic of the summary's ``repeats`` block is computed by hand
below. With ``[defaults] seed`` the n-th repeat sends ``seed + n - 1`` and the server reads the
repeat from it: ``-n 2`` must give exactly what ``-n 0`` gives. Without a seed the server tells
repeats apart only by arrival, and a rerun served from the response cache must give every repeat
back its own answer (a cache keyed without the repeat would hand all four the same one).
"""

from __future__ import annotations

import json
import math
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli import main
from pytest_jeval.scoring.numeric import gsm8k_gold
from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import SECRET, chat_requests, gsm_rows

SEED = 100
#: Per row, whether repeat 1..4 is answered right.
PATTERN = {0: [True, True, True, True], 1: [True, False, False, True], 2: [False, False, False, False]}


class PatternServer:
    """Answers row i's repeat r right or wrong by PATTERN; r from the request's seed, else by arrival."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.arrivals: dict[int, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], attempt: int) -> str:
        text = last_user_message(body)
        row = next(i for i, r in enumerate(self.rows) if r["question"] in text)
        if isinstance(body.get("seed"), int):
            repeat = body["seed"] - SEED
        else:
            with self.lock:
                repeat = self.arrivals.get(row, 0)
                self.arrivals[row] = repeat + 1
        gold = int(gsm8k_gold(self.rows[row]["answer"]))
        return f"Answer: {gold if PATTERN[row][repeat % 4] else gold + 1}"


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[tuple[pytest.Pytester, FakeOpenAIServer, PatternServer]]:
    rows = gsm_rows(test_data, 3)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    responder = PatternServer(rows)
    with FakeOpenAIServer(responder, api_key=SECRET) as server:
        yield pytester, server, responder


def write_suite(pytester: pytest.Pytester, server: FakeOpenAIServer, *, seed: bool) -> Path:
    path = pytester.path / "suite.toml"
    path.write_text(textwrap.dedent(f"""
        [defaults]
        {f"seed = {SEED}" if seed else ""}

        [run]
        output_dir = "out"
        max_retries = 0

        [[models]]
        name = "test-model"
        base_url = "{server.base_url}"
        api_key_env = "JEVAL_TEST_KEY"

        [[benchmarks]]
        name = "gsm8k"
        data_files = "gsm.jsonl"
        repeats = 4
        """))
    return path


def read(pytester: pytest.Pytester, out: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    jsonl = pytester.path / out / "gsm8k_test-model.jsonl"
    records = {r["record_id"]: r for r in map(json.loads, jsonl.read_text().splitlines())}
    return records, json.loads(jsonl.with_name(jsonl.name + ".summary.json").read_text())


@pytest.mark.slow
def test_repeats_give_the_hand_computed_statistics_and_xdist_agrees(
        project: tuple[pytest.Pytester, FakeOpenAIServer, PatternServer]) -> None:
    pytester, server, _ = project
    suite = write_suite(pytester, server, seed=True)
    serial = pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "serial",
                                           "--jeval-no-cache", "-p", "no:randomly")
    assert serial.ret == 1, serial.stdout.str()  # wrong answers fail their items
    serial.assert_outcomes(passed=6, failed=6)
    records, summary = read(pytester, "serial")
    assert sorted(records) == [f"gsm8k-{i}@{r}" for i in range(3) for r in range(1, 5)]
    for i, pattern in PATTERN.items():
        for r, right in enumerate(pattern, start=1):
            record = records[f"gsm8k-{i}@{r}"]
            assert (record["is_correct"], record["repeat"], record["repeat_of"]) == (right, r, f"gsm8k-{i}")
            assert record["served"] == {"model": "test-model", "system_fingerprint": None, "seed": SEED + r - 1}
    seeds = sorted(r["body"]["seed"] for r in chat_requests(server))
    assert seeds == sorted(SEED + r for r in range(4) for _ in range(3))  # every repeat its own request

    rep = summary["repeats"]
    assert (rep["items"], rep["runs"], rep["k"]) == (3, 12, 4)
    # per item c correct of n = 4: c = 4, 2, 0
    assert rep["pass_at_k"]["1"] == pytest.approx((4 / 4 + 2 / 4 + 0) / 3)
    assert rep["pass_at_k"]["2"] == pytest.approx((1 + (1 - 1 / 6) + 0) / 3)  # 1 - C(2,2)/C(4,2) for c = 2
    assert rep["pass_at_k"]["4"] == pytest.approx(2 / 3)
    assert rep["pass_hat_k"]["4"] == pytest.approx(1 / 3)
    assert rep["pass_hat_k"]["2"] == pytest.approx((1 + 1 / 6 + 0) / 3)  # C(2,2)/C(4,2) for c = 2
    assert rep["per_repeat_accuracy"] == pytest.approx({"1": 2 / 3, "2": 1 / 3, "3": 1 / 3, "4": 2 / 3})
    assert rep["mean_accuracy"] == pytest.approx(0.5)
    assert rep["stderr"] == pytest.approx(math.sqrt((4 * (1 / 6) ** 2 / 3) / 4))
    assert rep["majority_vote_accuracy"] == pytest.approx(1 / 3)  # 2 of 4 is a tie, not a majority
    assert rep["flip_rate"] == pytest.approx(1 / 3)
    assert rep["flipped"] == [{"item": "gsm8k-1", "verdicts": [True, False, False, True]}]
    assert summary["accuracy"] == pytest.approx(6 / 12)
    assert summary["served"]["seeds"] == {str(SEED + r): {"records": 3, "cached": 0} for r in range(4)}
    assert "repeats: gsm8k x test-model: 3 items x 4 runs; mean accuracy 0.500 ± 0.096" in serial.stdout.str()
    assert "flip rate 0.333 (1 flipped: gsm8k-1)" in serial.stdout.str()

    report = pytester.path / "report.html"
    assert main(["report", str(pytester.path / "serial"), "-o", str(report)]) == 0
    html = report.read_text()
    assert "1 items whose verdict flipped between runs" in html and "<code>gsm8k-1</code>: ✓ ✗ ✗ ✓" in html

    parallel = pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "parallel",
                                             "--jeval-no-cache", "-n", "2")
    parallel.assert_outcomes(passed=6, failed=6)
    records_n2, summary_n2 = read(pytester, "parallel")
    assert {k: r["is_correct"] for k, r in records_n2.items()} == {k: r["is_correct"] for k, r in records.items()}
    assert summary_n2["repeats"] == summary["repeats"]


@pytest.mark.slow
def test_the_cache_keeps_each_repeat_its_own_answer(
        project: tuple[pytest.Pytester, FakeOpenAIServer, PatternServer]) -> None:
    pytester, server, _ = project
    suite = write_suite(pytester, server, seed=False)
    first = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly")
    first.assert_outcomes(passed=6, failed=6)
    assert len(chat_requests(server)) == 12  # no seed: the requests differ only by the repeat (the nonce)
    records, summary = read(pytester, "out")
    assert summary["repeats"]["flip_rate"] == pytest.approx(1 / 3)
    server.reset_stats()
    again = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly")
    again.assert_outcomes(passed=6, failed=6)
    assert server.request_count == 0  # every answer from the cache
    records_again, summary_again = read(pytester, "out")
    assert {k: r["model_answer"] for k, r in records_again.items()} == {k: r["model_answer"] for k, r in
                                                                         records.items()}
    assert all(r["cached"] for r in records_again.values())
    assert summary_again["repeats"] == summary["repeats"]
