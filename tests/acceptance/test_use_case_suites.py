"""The two ready-made use-case suites: the cloud one validates without a request, the local one runs.

``configs/use_cases_cloud.toml`` names six cloud models and the variables their keys come
from: it is resolved into a plan (every benchmark found, 30 samples each, every endpoint and
key resolved) and collected with ``--collect-only``, with no server anywhere. The local one
runs offline on the bundled model (a few samples of each benchmark, through ``--jeval-set``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_jeval.suite.plan import EvalPlan

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
CORE = ("coding_assistant", "security_scanner", "daily_digest", "doc_qa", "browser_assistant")
CLOUD_KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY")


@pytest.fixture
def cloud_keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    keys = {name: f"sk-test-{name.lower()}" for name in CLOUD_KEYS}
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    for name in ("JEVAL_BASE_URL", "JARVIS_BACKEND_BASE_URL", "JEVAL_API_KEY", "JARVIS_BACKEND_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return keys


@pytest.mark.parametrize("name", ["use_cases_cloud.toml", "use_cases_local.toml"])
def test_a_suite_runs_the_five_core_use_cases_with_30_samples_each(name: str, cloud_keys: dict[str, str],
                                                                   tmp_path: Path) -> None:
    plan = EvalPlan.from_file(CONFIGS / name, invocation_dir=tmp_path)
    assert tuple(plan.benchmarks) == CORE
    for bench in CORE:
        samples, _ = plan.samples(bench)
        assert len(samples) == 30, bench
        assert not plan.benchmarks[bench].benchmark.needs_judge, bench
    assert len(plan.models) >= 2


def test_the_cloud_suite_resolves_six_models_to_their_providers_and_keys(cloud_keys: dict[str, str],
                                                                        tmp_path: Path) -> None:
    plan = EvalPlan.from_file(CONFIGS / "use_cases_cloud.toml", invocation_dir=tmp_path)
    assert len(plan.models) == 6
    providers = {"anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY", "openai": "OPENAI_API_KEY"}
    for model in plan.models.values():
        assert model.api_key is None, "keys stay out of the suite file"
        endpoint = plan.endpoint_for(model)
        assert endpoint.api_key.get_secret_value() == cloud_keys[providers[str(model.provider)]], model.name
        if model.provider == "openai":
            assert endpoint.base_url is None  # the client's own default
        else:
            assert endpoint.base_url is not None and endpoint.base_url.startswith("https://")


def test_the_cloud_suite_refuses_to_start_without_its_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_jeval.suite.config import SuiteError

    for name in CLOUD_KEYS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SuiteError, match=r"ANTHROPIC_API_KEY.*is not set"):
        EvalPlan.from_file(CONFIGS / "use_cases_cloud.toml", invocation_dir=tmp_path)


@pytest.mark.slow
def test_the_cloud_suite_collects_900_items_without_a_request(pytester: pytest.Pytester,
                                                              cloud_keys: dict[str, str]) -> None:
    shutil.copy(CONFIGS / "use_cases_cloud.toml", pytester.path / "cloud.toml")
    result = pytester.runpytest_subprocess("--jeval-config", "cloud.toml", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*900 tests collected*"])
    assert not (pytester.path / "results" / "use-cases-cloud").joinpath("summary.json").exists()


@pytest.mark.slow
@pytest.mark.local_model
def test_the_local_suite_runs_offline_on_the_bundled_model(pytester: pytest.Pytester) -> None:
    shutil.copy(CONFIGS / "use_cases_local.toml", pytester.path / "local.toml")
    few = [arg for bench in CORE for arg in ("--jeval-set", f"benchmarks.{bench}.max_samples=1")]
    # one sample of each benchmark on the greedy entry: the bundled model reads long prompts slowly
    result = pytester.runpytest_subprocess("--jeval-config", "local.toml", *few,
                                           "--jeval-set", "defaults.max_tokens=16", "-k", "greedy")
    assert result.ret in (0, 1), result.stdout.str() + result.stderr.str()
    out = pytester.path / "results" / "use-cases-local"
    files = sorted(p.name for p in out.glob("*.jsonl"))
    assert files == sorted(f"{b}_smollm2-135m-greedy.jsonl" for b in CORE)
    for path in out.glob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(records) == 1, path.name
    summary = json.loads((out / "summary.json").read_text())
    assert summary  # the aggregate is written
