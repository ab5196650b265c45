"""Suite validation: bad suites stop the run before any request, naming the file and the key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.suite.config import SuiteError, parse_suite
from pytest_jeval.suite.plan import EvalPlan
from tests.support.gsm import JevalProject, chat_requests

MINIMAL = """
[[models]]
name = "m"

[[benchmarks]]
name = "gsm8k"
"""


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("max_samples = 5", "max_sample = 5"), "benchmarks[0].max_sample: unknown key"),
        (("max_samples = 5", 'max_samples = "five"'), "benchmarks[0].max_samples: Input should be a valid integer"),
        (('name = "gsm8k"', 'name = "gsm8kk"'), "benchmarks[0].name: unknown benchmark 'gsm8kk'"),
        (('api_key_env = "JEVAL_TEST_KEY"', 'engine = "olama"\napi_key_env = "JEVAL_TEST_KEY"'), "models[0].engine: Value error, unknown engine 'olama'"),
        (('data_files = "gsm.jsonl"', 'data_files = "missing.jsonl"'), "benchmarks[0].data_files: file not found"),
        (("[run]", "[runn]"), "runn: unknown key"),
        (("[meta]", "[meta\n"), "malformed TOML"),
        (("max_retries = 1", "max_retries = -1"), "run.max_retries: Input should be greater than or equal to 0"),
        (('api_key_env = "JEVAL_TEST_KEY"', 'api_key_env = "JEVAL_NOT_SET_ANYWHERE"'), "models[0].api_key_env: environment variable 'JEVAL_NOT_SET_ANYWHERE' is not set"),
    ],
    ids=["misspelled-key", "wrong-type", "unknown-benchmark", "unknown-engine", "missing-data-file", "unknown-section",
         "malformed-toml", "out-of-range", "missing-key-env"],
)
@pytest.mark.slow
def test_bad_suite_is_a_usage_error(jeval_project: JevalProject, edit: tuple[str, str], expected: str) -> None:
    p = jeval_project
    suite = p.suite(bench_extra="max_samples = 5")
    old, new = edit
    text = suite.read_text()
    assert old in text
    suite.write_text(text.replace(old, new, 1))
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert str(suite) in err
    assert expected in err
    assert not chat_requests(p.server)
    assert not (p.pytester.path / "out").exists()


def test_error_lists_every_problem_with_its_path(tmp_path: Path) -> None:
    text = MINIMAL + '\n[[benchmarks]]\nname = "supergpqa"\nmax_samples = 0\ntemprature = 1\n'
    with pytest.raises(SuiteError) as info:
        parse_suite(text, tmp_path / "s.toml")
    msg = str(info.value)
    assert "benchmarks[1].max_samples: Input should be greater than 0" in msg
    assert "benchmarks[1].temprature: unknown key" in msg


def test_models_and_benchmarks_are_required(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"models: required key is missing"):
        parse_suite('[[benchmarks]]\nname = "gsm8k"\n', tmp_path / "s.toml")


def test_duplicate_model_names_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="duplicate name 'm'"):
        parse_suite('[[models]]\nname = "m"\n[[models]]\nname = "m"\n[[benchmarks]]\nname = "gsm8k"\n', tmp_path / "s.toml")


def test_precedence_benchmark_over_model_over_defaults(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"question": "q", "answer": "#### 1"}\n')
    (tmp_path / "s.toml").write_text(
        """
[defaults]
temperature = 0.1
max_tokens = 100

[[models]]
name = "a"
temperature = 0.3

[[models]]
name = "b"
max_tokens = 50

[[benchmarks]]
name = "gsm8k"
data_files = "d.jsonl"
temperature = 0.7

[[benchmarks]]
name = "quickstart"
"""
    )
    plan = EvalPlan.from_file(tmp_path / "s.toml", invocation_dir=tmp_path)
    assert plan.generation("gsm8k", "a") == (0.7, 100)
    assert plan.generation("gsm8k", "b") == (0.7, 50)
    assert plan.generation("quickstart", "a") == (0.3, 100)
    assert plan.generation("quickstart", "b") == (0.1, 50)
    # built-in defaults when nothing is set
    (tmp_path / "t.toml").write_text(MINIMAL)
    assert EvalPlan.from_file(tmp_path / "t.toml", invocation_dir=tmp_path).generation("gsm8k", "m") == (0.0, 2048)


def test_endpoint_fallbacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_BASE_URL", "http://env-host:1/v1")
    monkeypatch.setenv("JEVAL_API_KEY", "env-key")
    monkeypatch.setenv("MY_KEY", "model-key")
    (tmp_path / "s.toml").write_text(
        """
[backend.external]
base_url = "http://external:2/v1"

[[models]]
name = "own"
base_url = "http://own:3/v1"
api_key_env = "MY_KEY"

[[models]]
name = "ext"

[[models]]
name = "vllm-model"
engine = "vllm"
api_key = "inline"

[[benchmarks]]
name = "quickstart"
"""
    )
    plan = EvalPlan.from_file(tmp_path / "s.toml", invocation_dir=tmp_path)
    own = plan.endpoint_for(plan.models["own"])
    assert (own.base_url, own.api_key.get_secret_value()) == ("http://own:3/v1", "model-key")
    ext = plan.endpoint_for(plan.models["ext"])
    assert (ext.base_url, ext.api_key.get_secret_value()) == ("http://env-host:1/v1", "env-key")  # env over TOML
    assert "model-key" not in repr(own) and "env-key" not in repr(ext)
    monkeypatch.delenv("JEVAL_BASE_URL")
    assert plan.endpoint_for(plan.models["ext"]).base_url == "http://external:2/v1"
    plan.suite.backend.external.base_url = None
    assert plan.endpoint_for(plan.models["ext"]).base_url is None  # the client's default (api.openai.com)
    assert plan.endpoint_for(plan.models["vllm-model"]).base_url == "http://localhost:8000/v1"
    assert plan.models["vllm-model"].api_key is not None
    assert "inline" not in repr(plan.suite)


def _suite(run: str = "", bench: str = "") -> str:
    return f'[run]\n{run}\n[[models]]\nname = "m"\n[[benchmarks]]\nname = "gsm8k"\n{bench}\n'


def test_the_reference_agent_key_is_accepted(tmp_path: Path) -> None:
    """``agent = "orchestrator"`` (the reference's named agent) parses; the plan checks the name."""
    suite = parse_suite(_suite(bench='agent = "orchestrator"'), tmp_path / "s.toml")
    assert suite.benchmarks[0].agent == "orchestrator"


def test_unbuilt_keys_at_their_defaults_and_a_supported_energy_vendor_are_accepted(tmp_path: Path) -> None:
    suite = parse_suite(_suite(run='warmup_samples = 0\nsheets_worksheet = "Results"\nenergy_vendor = "nvidia"',
                               bench="tools = []"), tmp_path / "s.toml")
    assert suite.run.energy_vendor == "nvidia"
    with pytest.raises(SuiteError, match=r"run\.energy_vendor: Input should be '' or 'nvidia' \(got 'amd'\)"):
        parse_suite(_suite(run='energy_vendor = "amd"'), tmp_path / "s.toml")
