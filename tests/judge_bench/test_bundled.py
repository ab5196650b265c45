"""The bundled gold sets and configs/judges.toml: valid, runnable offline, and with the documented results."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_jeval.judge_bench import make_judge_benchmark
from pytest_jeval.suite.config import load_suite
from pytest_jeval.suite.dataset import load_samples
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.judging import KEY, JudgeScript, run_suite, suite_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "configs" / "judges.toml"
DATA = REPO / "pytest_jeval" / "judge_bench" / "data"

# benchmark -> (items, judgments the code evaluator gets right)
EXPECTED = {"judge-exact-match": (12, 9), "judge-numeric": (8, 8), "judge-sql": (12, 10), "judge-tool-calls": (8, 7)}


def test_suite_file_plans_with_the_bundled_model() -> None:
    plan = EvalPlan.from_file(SUITE, invocation_dir=REPO, use_cache=False)
    assert set(plan.benchmarks) == set(EXPECTED)
    assert [m.engine for m in plan.models.values()] == ["local"] and "smollm2-135m" in plan.models
    for name, planned in plan.benchmarks.items():
        samples, skipped = plan.samples(name)
        assert (len(samples), skipped) == (EXPECTED[name][0], 0)
        assert all(planned.benchmark.prompt(s) is None for s in samples)  # code evaluators: no model call


def test_no_binary_database_is_bundled() -> None:
    assert not [p for p in DATA.iterdir() if p.suffix in (".db", ".sqlite", ".sqlite3")]
    assert (DATA / "shop.sql").is_file()


def test_bundled_llm_gold_set_loads() -> None:
    entry = load_suite(SUITE).benchmarks[0].model_copy(update={"name": "qa", "evaluator": "closed_qa"})
    samples, _ = load_samples(make_judge_benchmark(entry), files=[DATA / "closed_qa.jsonl"])
    assert len(samples) == 6 and {s.target for s in samples} == {True, False}


def test_bundled_sets_run_end_to_end(tmp_path: Path) -> None:
    suite = tomllib.loads(SUITE.read_text(encoding="utf-8"))
    tables = [
        f'name = "{b["name"]}"\nevaluator = "{b["evaluator"]}"\ndata_files = "{(SUITE.parent / b["data_files"]).resolve()}"'
        for b in suite["benchmarks"]
    ]
    with FakeOpenAIServer(JudgeScript(), api_key=KEY, models=("judge-model",)) as server:
        run = run_suite(tmp_path, suite_text(server.base_url, *tables))
        chat_calls = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert chat_calls == []  # code evaluators make no model call
    for name, (n, right) in EXPECTED.items():
        s = run.summary(name)
        assert (s["total_samples"], s["correct"], s["errors"], s["unscored"]) == (n, right, 0, 0), name
        assert s["accuracy"] == pytest.approx(right / n)
        records = run.records(name)
        assert {r["probability_source"] for r in records} == {"deterministic"}
        assert all(r["probability"] is None for r in records)  # never a made-up 1.0
    wrong = {rid for rid, outcome in run.outcomes("judge-sql").items() if outcome == "FAILED"}
    assert wrong == {"sql-09", "sql-12"}  # same rows on this data / columns in another order
