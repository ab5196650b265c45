"""``jeval run --agent`` and ``--user-model``: the named agent and the [user] table in the suite it writes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli._main import main
from pytest_jeval.cli._run import left_out_reason
from pytest_jeval.cli._run_suite import RunUsageError, prepare_suite
from pytest_jeval.suite.catalog import builtin_benchmarks

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

URL = "http://127.0.0.1:9/v1"


def options(**kw: Any) -> argparse.Namespace:
    base: dict[str, Any] = dict(
        command="run", models=["m"], model_filter=None, engine=None, base_url=URL, api_key_env=None,
        max_samples=None, seed=None, temperature=None, max_tokens=None, concurrency=None, data_files=None,
        split=None, subset=None, backend=None, tools=None, agent=None, judge_model=None, judge_engine=None,
        judge_base_url=None, judge_api_key_env=None, user_model=None, user_engine=None, user_base_url=None,
        user_api_key_env=None, output="results/")
    base.update(kw)
    return argparse.Namespace(**base)


def test_agent_and_user_model_reach_the_suite(tmp_path: Path) -> None:
    text, _ = prepare_suite(options(agent="react", user_model="u", user_base_url=URL), ["taubench"], tmp_path)
    suite = tomllib.loads(text)
    assert suite["benchmarks"] == [{"name": "taubench", "agent": "react"}]
    assert suite["user"] == {"model": "u", "base_url": URL}


def test_taubench_without_a_user_model_says_which_option_adds_one(tmp_path: Path) -> None:
    with pytest.raises(RunUsageError, match=r"talks with a simulated user.*give --user-model MODEL"):
        prepare_suite(options(), ["taubench"], tmp_path)
    text, _ = prepare_suite(options(agent="oracle"), ["taubench"], tmp_path)  # the oracle needs no user
    assert tomllib.loads(text)["benchmarks"][0]["agent"] == "oracle"
    with pytest.raises(RunUsageError, match="--user-engine needs --user-model"):
        prepare_suite(options(user_engine="vllm"), ["taubench"], tmp_path)


def test_an_agent_the_benchmark_refuses_names_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-b", "toolcall15", "-m", "m", "--base-url", URL, "--agent", "oracle"]) == 2
    err = capsys.readouterr().err
    assert "jeval run: error: --agent: 'toolcall15' cannot run with the 'oracle' agent" in err


def test_run_all_leaves_out_a_benchmark_that_needs_a_user_model() -> None:
    bench = next(b for b in builtin_benchmarks() if b.name == "taubench")
    reason = left_out_reason(bench, judge=True, user=False) or ""
    assert "give --user-model" in reason
    assert "give --user-model" not in (left_out_reason(bench, judge=True, user=True) or "")
