"""``num_fewshot`` end to end (issue 33): gsm8k with k worked examples from its train split, through pytester and the
``jeval run`` subprocess, against the test server over HTTP. The requests hold the k examples in the recorded
order before the question, the records carry their ids, the summary says how many."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import chat_requests

DATA = Path(__file__).resolve().parents[1] / "data" / "gsm8k"
TEST_ROWS = [json.loads(line) for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines()]
TRAIN_ROWS = [json.loads(line) for line in (DATA / "train.jsonl").read_text(encoding="utf-8").splitlines()]


def _answer(body: dict[str, Any], attempt: int) -> str:
    """The gold number of the test question asked (the last user turn), else nothing useful."""
    text = last_user_message(body)
    for row in TEST_ROWS:
        if row["question"] in text:
            return f"Answer: {row['answer'].rsplit('####', 1)[1].strip()}"
    return "no idea"


def _suite(path: Path, url: str, extra: str = "") -> Path:
    suite = path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        cache = false
        seed = 11

        [[models]]
        name = "test-model"
        base_url = "{url}"
        api_key = "x"

        [[benchmarks]]
        name = "gsm8k"
        data_files = "{DATA / 'test.jsonl'}"
        fewshot_files = "{DATA / 'train.jsonl'}"
        record_ids = ["gsm8k-0", "gsm8k-1", "gsm8k-2", "gsm8k-3"]
        """) + extra, encoding="utf-8")
    return suite


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _check_requests(server: FakeOpenAIServer, expected_ids: list[str]) -> None:
    """Each request: the k examples (question in the user turn, worked answer in the assistant turn), in
    ``expected_ids`` order, then the question."""
    bodies = [r["body"] for r in chat_requests(server)]
    assert len(bodies) == 4
    for body in bodies:
        messages = body["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"] * len(expected_ids) + ["user"]
        for n, shot in enumerate(expected_ids):
            row = TRAIN_ROWS[int(shot.removeprefix("gsm8k-"))]
            assert row["question"] in messages[2 * n]["content"]
            gold = row["answer"].rsplit("####", 1)[1].strip()
            assert messages[2 * n + 1]["content"].endswith(f"\nAnswer: {gold}")
        assert any(row["question"] in messages[-1]["content"] for row in TEST_ROWS[:4])


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_num_fewshot_by_jeval_set(pytester: pytest.Pytester, workers: list[str]) -> None:
    expected = [f"gsm8k-{int(i)}" for i in np.random.default_rng(11).permutation(len(TRAIN_ROWS))[:3]]
    with FakeOpenAIServer(_answer) as server:
        suite = _suite(pytester.path, server.base_url)
        run = pytester.runpytest_subprocess if workers else pytester.runpytest
        result = run("--jeval-config", str(suite), "--jeval-set", "benchmarks.gsm8k.num_fewshot=3",
                     "-p", "no:cacheprovider", *workers)
        result.assert_outcomes(passed=4)
        _check_requests(server, expected)
    result.stdout.fnmatch_lines(["*gsm8k: num_fewshot = 3: that many worked examples from its 'train' split*"])
    records = _records(pytester.path / "out" / "gsm8k_test-model.jsonl")
    assert len(records) == 4
    assert all(r["fewshot_ids"] == expected and r["fewshot_split"] == "train" for r in records)
    summary = json.loads((pytester.path / "out" / "gsm8k_test-model.jsonl.summary.json").read_text())
    assert summary["num_fewshot"] == 3 and summary["fewshot_split"] == "train"


@pytest.mark.slow
def test_no_examples_without_num_fewshot(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(_answer) as server:
        suite = _suite(pytester.path, server.base_url, "num_fewshot = 0\n")
        pytester.runpytest("--jeval-config", str(suite), "-p", "no:cacheprovider").assert_outcomes(passed=4)
        _check_requests(server, [])
    records = _records(pytester.path / "out" / "gsm8k_test-model.jsonl")
    assert all("fewshot_ids" not in r for r in records)


@pytest.mark.slow
def test_jeval_run_num_fewshot(tmp_path: Path) -> None:
    expected = [f"gsm8k-{int(i)}" for i in np.random.default_rng(42).permutation(len(TRAIN_ROWS))[:3]]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "JARVIS_BACKEND_", "JEVAL_"))}
    env["JEVAL_TEST_KEY"] = "x"
    with FakeOpenAIServer(_answer) as server:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_jeval", "run", "-b", "gsm8k", "-m", "test-model", "--base-url",
             server.base_url, "--api-key-env", "JEVAL_TEST_KEY", "--data-files", str(DATA / "test.jsonl"),
             "--max-samples", "4", "--num-fewshot", "3", "-o", "out", "--",
             "--jeval-set", f"benchmarks.gsm8k.fewshot_files={DATA / 'train.jsonl'}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        for body in (r["body"] for r in chat_requests(server)):
            assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 3 + ["user"]
    assert "num_fewshot = 3" in (tmp_path / "out" / "suite.toml").read_text(encoding="utf-8")
    records = _records(tmp_path / "out" / "gsm8k_test-model.jsonl")
    assert len(records) == 4 and all(r["fewshot_ids"] == expected for r in records)


def test_an_unreachable_hub_source_is_a_usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # no fewshot_files: gsm8k's train split is loaded from the Hub, which this machine cannot reach
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(pytester.path / "hf"))  # an empty cache
    with FakeOpenAIServer(_answer) as server:
        suite = _suite(pytester.path, server.base_url, "num_fewshot = 3\n")
        train = DATA / "train.jsonl"
        suite.write_text(suite.read_text().replace(f'fewshot_files = "{train}"', ""))
        result = pytester.runpytest_subprocess("--jeval-config", str(suite))
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["ERROR: 'gsm8k': num_fewshot = 3: its few-shot split 'train' could not be loaded "
                                     "(give fewshot_files, a local copy in the Hub's schema): cannot load "
                                     "'openai/gsm8k' (split 'train')*"])
        assert chat_requests(server) == []


def test_a_benchmark_without_a_source_refuses_it_before_any_request(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(_answer) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [[models]]
            name = "test-model"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "quickstart"
            """), encoding="utf-8")
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-set",
                                               "benchmarks.quickstart.num_fewshot=2")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*benchmarks[[]0[]].num_fewshot: 'quickstart' declares no few-shot source; the "
                                     "benchmarks that do are: gsm8k, mmlu-pro*"])
        assert server.requests == []
