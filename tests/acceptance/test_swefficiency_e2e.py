"""swefficiency through the plugin, on the fixture repository ``routegraph`` (two slow paths).

The expert's patch, replayed by the oracle, scores speedup ratio 1.0 within the stated precision; nop
makes nothing faster (model speedup 1.0, never correct); a patch that speeds the workload up but breaks a
covering test counts as no edit. The same workload measured three times gives the same instruction count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks._swe.evaluate import Checkout
from pytest_jeval.benchmarks._swe.options import SwefficiencyOptions
from pytest_jeval.benchmarks._swe.prepare import prepare
from pytest_jeval.benchmarks.swefficiency import bench_swefficiency as bench
from pytest_jeval.benchmarks.swefficiency.measure import PRECISION, REPEAT_PRECISION, helper_library, measure
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.scoring.registry import call_scorer
from pytest_jeval.testing.openai_server import FakeOpenAIServer, script_responder
from tests.support.swe import (
    DATA,
    REPOS,
    ROWS,
    SPECS,
    SWEFFICIENCY_ROWS,
    processes_mentioning,
    records,
    require_sandbox,
    require_valgrind,
    shared_cache,
    suite,
    summary,
    use_cache,
    write_rows,
)

IDS = [r["instance_id"] for r in SWEFFICIENCY_ROWS]


@pytest.fixture(autouse=True)
def _sandbox(monkeypatch: pytest.MonkeyPatch) -> Path:
    require_sandbox()
    require_valgrind()
    return use_cache(monkeypatch, shared_cache())


def _run(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")


def _instances(pytester: pytest.Pytester) -> str:
    return str(write_rows(pytester.path / "instances.jsonl", SWEFFICIENCY_ROWS))


@pytest.mark.slow
def test_the_experts_patch_scores_one_and_doing_nothing_is_no_speedup(pytester: pytest.Pytester,
                                                                      _sandbox: Path) -> None:
    data = _instances(pytester)
    suite(pytester, [{"name": "swefficiency", "label": "oracle", "agent": "oracle", "data_files": [data]},
                     {"name": "swefficiency", "label": "nop", "agent": "nop", "data_files": [data]}])
    result = _run(pytester)
    result.assert_outcomes(passed=len(IDS), failed=len(IDS))
    oracle, nop = records(pytester, "oracle"), records(pytester, "nop")
    ctx = LoadContext(benchmark="swefficiency", subset=None, seed=0, data_dir=DATA,
                      options=SwefficiencyOptions(repos_dir=REPOS, specs_file=SPECS))
    for iid in IDS:
        meta = oracle[iid]["scoring_metadata"]
        assert oracle[iid]["is_correct"] is True and meta["correctness"] is True, meta
        assert abs(meta["speedup_ratio"] - 1.0) <= PRECISION and abs(oracle[iid]["score"] - 1.0) <= PRECISION
        assert meta["expert_speedup"] > 5 and meta["model"]["scope"] == "timed" and meta["model"]["regions"] == 3
        assert meta["pre"]["wall_mean"] > meta["model"]["wall_mean"] > 0  # wall time recorded (never scored)
        idle = nop[iid]["scoring_metadata"]
        assert nop[iid]["is_correct"] is False and idle["model_speedup"] == 1.0 and idle["model"] is None
        assert idle["speedup_ratio"] == pytest.approx(1 / idle["expert_speedup"], rel=1e-5)
        sample = bench.to_sample(ROWS[iid], 0, ctx)
        again = call_scorer("swefficiency", oracle[iid], sample=sample)
        assert (again.correct, again.value) == (True, oracle[iid]["score"])
    best, idle_summary = summary(pytester, "oracle"), summary(pytester, "nop")
    assert abs(best["speedup_ratio_harmonic_mean"] - 1.0) <= PRECISION and best["speedup_ratio_count"] == len(IDS)
    assert "callgrind" in best["cost_measure"] and best["faster_count"] == len(IDS)
    experts = [nop[i]["scoring_metadata"]["expert_speedup"] for i in IDS]
    assert idle_summary["speedup_ratio_harmonic_mean"] == pytest.approx(len(IDS) / sum(experts), rel=1e-5)
    assert idle_summary["do_nothing_harmonic_mean"] == idle_summary["speedup_ratio_harmonic_mean"]
    assert idle_summary["faster_count"] == 0
    assert processes_mentioning(str(_sandbox)) == []


@pytest.mark.slow
def test_a_faster_patch_that_breaks_a_test_counts_as_no_edit(pytester: pytest.Pytester) -> None:
    wrong = (DATA / "patches" / "routegraph-2.fast-but-wrong.diff").read_text()
    answers: dict[str, list[Any]] = {"Speed up shortest_path": [f"<patch>\n{wrong}</patch>"]}
    with FakeOpenAIServer(script_responder(answers, default="?")) as server:
        suite(pytester, [{"name": "swefficiency", "backend": "direct", "data_files": [_instances(pytester)],
                          "record_ids": ["jeval-fixtures__routegraph-2"]}], base_url=server.base_url)
        result = _run(pytester)
    result.assert_outcomes(failed=1)
    meta = records(pytester, "swefficiency")["jeval-fixtures__routegraph-2"]["scoring_metadata"]
    assert meta["correctness"] is False and meta["raw_model_speedup"] > 5  # it is faster ...
    assert meta["correctness_failures"] == ["tests/test_paths.py::test_shortest_path_on_grid"]
    assert meta["model_speedup"] == 1.0  # ... and counts as no edit
    assert meta["speedup_ratio"] == pytest.approx(1 / meta["expert_speedup"], rel=1e-5)
    assert meta["reason"].startswith("the patch breaks covering tests")


@pytest.mark.slow
def test_the_same_workload_measured_three_times_counts_the_same(_sandbox: Path) -> None:
    ctx = LoadContext(benchmark="swefficiency", subset=None, seed=0, data_dir=DATA,
                      options=SwefficiencyOptions(repos_dir=REPOS, specs_file=SPECS))
    sample = bench.to_sample(ROWS["jeval-fixtures__routegraph-3"], 0, ctx)
    prepared = prepare(sample.metadata)
    helper = helper_library(prepared.cache)
    with Checkout(prepared) as checkout:
        counts = [measure(checkout, prepared.instance.workload, helper, timeout=600).instructions for _ in range(3)]
    assert min(counts) > 10_000_000
    assert max(counts) / min(counts) - 1 <= REPEAT_PRECISION, counts
