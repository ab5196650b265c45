"""Loading samples through ``datasets``: stable record ids, subsets, clear errors offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_jeval.benchmarks.bench_gsm8k import BENCHMARK as GSM8K
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.gsm import JevalProject


@pytest.fixture
def gsm_file(test_data: Path) -> Path:
    return test_data / "gsm8k" / "test.jsonl"


def test_real_gsm8k_file_loads_with_index_ids(gsm_file: Path) -> None:
    samples, skipped = load_samples(GSM8K, files=[gsm_file])
    assert skipped == 0 and len(samples) == 1319
    assert samples[0].id == "gsm8k-0" and samples[0].target == "18"
    assert samples[1318].id == "gsm8k-1318"
    # thousands separators are stripped from the gold
    assert all("," not in s.target for s in samples)


def test_ids_do_not_depend_on_seed_or_max_samples(gsm_file: Path) -> None:
    full = {s.id: s for s in load_samples(GSM8K, files=[gsm_file])[0]}
    a = load_samples(GSM8K, files=[gsm_file], max_samples=20, seed=1)[0]
    b = load_samples(GSM8K, files=[gsm_file], max_samples=20, seed=2)[0]
    again = load_samples(GSM8K, files=[gsm_file], max_samples=20, seed=1)[0]
    assert [s.id for s in a] == [s.id for s in again]  # deterministic for a seed
    assert [s.id for s in a] != [s.id for s in b]
    for s in a + b:
        assert full[s.id] == s  # the same record keeps the same id and content
    assert [s.index for s in a] == sorted(s.index for s in a)  # kept in source order


def test_record_ids_filter(gsm_file: Path) -> None:
    samples = load_samples(GSM8K, files=[gsm_file], record_ids=["gsm8k-5", "gsm8k-900"])[0]
    assert [s.id for s in samples] == ["gsm8k-5", "gsm8k-900"]


def test_wrong_schema_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"problem": "1+1", "solution": "2"}) + "\n")
    with pytest.raises(DatasetLoadError, match=r"row 0 of 'gsm8k' does not have the expected schema: KeyError"):
        load_samples(GSM8K, files=[bad])


@pytest.mark.slow
def test_hub_dataset_offline_fails_with_a_clear_message(jeval_project: JevalProject, monkeypatch: pytest.MonkeyPatch) -> None:
    p = jeval_project
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(p.pytester.path / "hf"))  # an empty cache
    suite = p.suite()
    suite.write_text(suite.read_text().replace('data_files = "gsm.jsonl"', ""))
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: cannot load 'openai/gsm8k' (split 'test') from the Hugging Face Hub*"
                                 "data_files at a local copy*"])
    assert not p.server.requests


def test_lf_reruns_only_the_wrong_samples(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite()
    p.pytester.runpytest("--jeval-config", str(suite), "-p", "cacheprovider")
    result = p.pytester.runpytest("--jeval-config", str(suite), "--lf", "-p", "cacheprovider")
    result.assert_outcomes(failed=3, errors=1)
    # the reruns replace their own records; the others are kept (docs/results.md)
    assert {r["record_id"] for r in p.records()} == {f"gsm8k-{i}" for i in range(10)}


def test_k_selects_by_model_slug(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite()
    text = suite.read_text() + f"""
[[models]]
name = "other:model"
base_url = "{p.server.base_url}"
api_key_env = "JEVAL_TEST_KEY"
"""
    suite.write_text(text)
    result = p.pytester.runpytest("--jeval-config", str(suite), "-k", "other-model and gsm8k-0", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_gsm8k[[]other-model/gsm8k-0[]] PASSED*"])
