"""``jeval run`` with the reference's command line: ``-c SUITE``, its suite-wide options, ``-o FILE.jsonl``,
``run-all --include-hub``, "did you mean" for benchmark names, and ``-m`` checked against ``GET /v1/models``.

Subprocess runs (``python -m pytest_jeval``) against the test server over HTTP, as a user types them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli._main import main
from pytest_jeval.cli._run import run_all_selection
from pytest_jeval.cli._run_config import model_filter_expression
from pytest_jeval.cli._run_suite import RunUsageError, build_suite
from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import SECRET, chat_requests

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

QUICKSTART = Path(__file__).resolve().parents[2] / "pytest_jeval" / "benchmarks" / "data" / "quickstart.jsonl"
ROWS = [json.loads(line) for line in QUICKSTART.read_text(encoding="utf-8").splitlines()]
MODELS = ("model-a", "model-b")

#: Every option of the reference's ``jarvis eval run`` and ``python -m openjarvis.evals run`` tables
#: (its documentation, "jarvis eval run option reference" and "Research-only options"), as it spells them.
REFERENCE_OPTIONS = (
    "-c", "--config", "-b", "--benchmark", "-m", "--model", "-n", "--max-samples", "--backend", "--base-url",
    "--api-key", "--agent", "-e", "--engine", "--tools", "--telemetry", "--no-telemetry", "--gpu-metrics",
    "--no-gpu-metrics", "--seed", "--temperature", "--max-tokens", "--model-filter", "-o", "--output",
    "--wandb-project", "--wandb-entity", "--wandb-tags", "--wandb-group", "--sheets-id", "--sheets-worksheet",
    "--sheets-creds", "-v", "--verbose", "-w", "--max-workers", "--judge-model", "--judge-engine", "--split",
    "--concurrency", "--query-timeout",
)


def respond(body: dict[str, Any], attempt: int) -> str:
    text = last_user_message(body)
    for row in ROWS:
        if text.startswith(row["question"]):
            return f"Answer: {row['answer']}"
    return "no idea"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(respond, api_key=SECRET, models=MODELS) as s:
        yield s


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "JARVIS_BACKEND_", "JEVAL_")) and k != "OPENAI_API_KEY"}
    env["JEVAL_TEST_KEY"] = SECRET
    return env


def jeval(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_jeval", *argv], cwd=cwd, env=env or child_env(),
                          capture_output=True, text=True, timeout=300)


def remote(server: FakeOpenAIServer) -> list[str]:
    return ["--base-url", server.base_url, "--api-key-env", "JEVAL_TEST_KEY"]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_suite(tmp_path: Path, server: FakeOpenAIServer, models: tuple[str, ...] = MODELS) -> Path:
    entries = "".join(f'\n[[models]]\nname = "{m}"\nbase_url = "{server.base_url}"\napi_key_env = "JEVAL_TEST_KEY"\n'
                      for m in models)
    path = tmp_path / "suite.toml"
    path.write_text(f'[run]\noutput_dir = "out"\n{entries}\n[[benchmarks]]\nname = "quickstart"\n', encoding="utf-8")
    return path


# -- -c: the suite file -------------------------------------------------------------------------

@pytest.mark.slow
def test_config_runs_the_suite_without_b_and_m(tmp_path: Path, server: FakeOpenAIServer) -> None:
    write_suite(tmp_path, server)
    done = jeval(tmp_path, "run", "-c", "suite.toml", "-n", "3", "--seed", "7", "-w", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jeval run: suite suite.toml" in done.stdout
    assert ("repeat with: pytest --jeval-config suite.toml --jeval-set run.seed=7 --jeval-set run.max_workers=2 "
            "--jeval-set benchmarks.0.max_samples=3") in done.stdout
    for model in MODELS:
        assert len(records(tmp_path / "out" / f"quickstart_{model}.jsonl")) == 3
    assert (tmp_path / "suite.toml").read_text().count("max_samples") == 0  # the suite file is not rewritten
    # the same records as plain pytest on the suite with the same overrides
    first = {p.name: [r["record_id"] for r in records(p)] for p in (tmp_path / "out").glob("*.jsonl")}
    again = subprocess.run([sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "--jeval-set",
                            "run.seed=7", "--jeval-set", "benchmarks.0.max_samples=3", "--jeval-output", "again"],
                           cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout
    assert {p.name: [r["record_id"] for r in records(p)] for p in (tmp_path / "again").glob("*.jsonl")} == first


@pytest.mark.slow
def test_config_with_model_filter_and_an_output_file(tmp_path: Path, server: FakeOpenAIServer) -> None:
    write_suite(tmp_path, server)
    done = jeval(tmp_path, "run", "-c", "suite.toml", "-n", "2", "-o", "res/qs.jsonl")  # two models: two files
    assert done.returncode == 2
    assert done.stderr.startswith("jeval run: error: run.output_file: names the results file of one (benchmark, "
                                  "model) pair; this suite has 2 pairs") and "(from --output)" in done.stderr
    done = jeval(tmp_path, "run", "-c", "suite.toml", "--model-filter", "model-b", "-n", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-k '[model-b/'" in done.stdout
    assert not (tmp_path / "out" / "quickstart_model-a.jsonl").exists()
    assert len(records(tmp_path / "out" / "quickstart_model-b.jsonl")) == 2
    assert {r["body"]["model"] for r in chat_requests(server)} == {"model-b"}


def test_entry_options_are_refused_with_config(tmp_path: Path, server: FakeOpenAIServer,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    write_suite(tmp_path, server)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-c", "suite.toml", "-b", "gsm8k", "--base-url", "http://x"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["jeval run: error: -b: not with -c (the suite file sets it; edit the suite, or give --jeval-set "
                   "KEY=VALUE after --)",
                   "jeval run: error: --base-url: not with -c (the suite file sets it; edit the suite, or give "
                   "--jeval-set KEY=VALUE after --)"]
    assert main(["run", "-c", "suite.toml", "-w", "0"]) == 2  # an override's problem names the option
    assert "run.max_workers: Input should be greater than 0 (got 0) (from --max-workers)" in capsys.readouterr().err
    assert main(["run", "-m", "model-a"]) == 2
    assert capsys.readouterr().err.strip() == ("jeval run: error: the following arguments are required: "
                                               "-b/--benchmark (or -c SUITE.toml, which names them)")
    assert server.requests == []


def test_the_model_filter_expression_matches_the_item_ids() -> None:
    models = [argparse.Namespace(name=n, slug=n.replace(":", "-"), key=n) for n in ("qwen3:8b", "llama3:70b")]
    assert model_filter_expression(models, "qwen") == ("[qwen3-8b/", ["qwen3:8b"])
    with pytest.raises(RunUsageError, match="matches none of the suite's models"):
        model_filter_expression(models, "gpt")


# -- the reference's options --------------------------------------------------------------------

def test_help_lists_every_reference_option_with_its_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in REFERENCE_OPTIONS:
        assert f" {option}" in text, option
    for mapping in ("[run] max_workers", "[run] episode_timeout", "[run] telemetry", "[run] gpu_metrics",
                    "[run] wandb_project", "[run] wandb_tags", "[run] sheets_spreadsheet_id",
                    "[run] sheets_credentials_path", "[run] output_file", "[[benchmarks]] max_samples",
                    "Differs from the reference's --concurrency", "debug logging", "refused: a key"):
        assert mapping in text, mapping


def test_reference_options_become_suite_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_jeval.cli._main import build_parser

    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args([
        "run", "-b", "quickstart", "-m", "m", "--base-url", "http://127.0.0.1:9/v1", "--telemetry",
        "--no-gpu-metrics", "-w", "3", "--query-timeout", "90", "--wandb-project", "p", "--wandb-entity", "e",
        "--wandb-tags", "a,b", "--wandb-group", "g", "--sheets-id", "sid", "--sheets-worksheet", "ws",
        "--sheets-creds", "creds.json", "-v"])
    suite = build_suite(args, args.benchmarks, tmp_path)
    assert suite["run"] == {
        "output_dir": str(tmp_path / "results"), "telemetry": True, "gpu_metrics": False, "max_workers": 3,
        "episode_timeout": 90.0, "wandb_project": "p", "wandb_entity": "e", "wandb_tags": "a,b",
        "wandb_group": "g", "sheets_spreadsheet_id": "sid", "sheets_worksheet": "ws",
        "sheets_credentials_path": str(tmp_path / "creds.json")}
    from pytest_jeval.cli._run_options import verbose_args

    assert verbose_args(args) == ["-v", "--log-cli-level=DEBUG"]
    assert main(["run", "-b", "quickstart", "-m", "m", "--base-url", "http://127.0.0.1:9/v1", "--query-timeout",
                 "-1"]) == 2
    assert "--query-timeout: Input should be greater than 0" in capsys.readouterr().err


# -- -o FILE.jsonl -------------------------------------------------------------------------------

def test_output_ending_in_jsonl_writes_that_file_and_its_summary_beside_it(tmp_path: Path,
                                                                         server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "model-a", *remote(server), "-n", "3",
                 "-o", "results/qs_a.jsonl")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "results"
    assert len(records(out / "qs_a.jsonl")) == 3 and (out / "qs_a.jsonl").is_file()
    summary = json.loads((out / "qs_a.jsonl.summary.json").read_text())
    assert summary["total_samples"] == 3 and summary["benchmark"] == "quickstart"
    assert not (out / "quickstart_model-a.jsonl").exists() and (out / "suite.toml").is_file()
    suite = tomllib.loads((out / "suite.toml").read_text())
    assert suite["run"] == {"output_dir": str(out), "output_file": str(out / "qs_a.jsonl")}
    done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "model-a", "-m", "model-b", *remote(server),
                 "-o", "results/both.jsonl")
    assert done.returncode == 2
    assert "a .jsonl file holds the results of one benchmark on one model" in done.stderr
    assert not (out / "both.jsonl").exists()


# -- run-all --include-hub -------------------------------------------------------------------------

def test_include_hub_selects_the_hub_benchmarks() -> None:
    plain, left_out = run_all_selection(judge=False)
    hub, hub_left_out = run_all_selection(judge=False, hub=True)
    assert "gsm8k" in left_out and "gsm8k" not in plain
    assert {"gsm8k", "gpqa", "math500", "mmlu-pro"} <= set(hub) and set(plain) < set(hub)
    assert "simpleqa" in hub_left_out and "LLM judge" in hub_left_out["simpleqa"]  # still needs its judge


@pytest.mark.slow
def test_include_hub_offline_reports_each_unloadable_benchmark_and_runs_the_rest(
        tmp_path: Path, server: FakeOpenAIServer) -> None:
    env = {**child_env(), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    done = jeval(tmp_path, "run-all", "-m", "model-a", *remote(server), "-n", "1", "-o", "out", "--include-hub",
                 env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    hub, _ = run_all_selection(judge=False, hub=True)
    plain, _ = run_all_selection(judge=False)
    missing = sorted(set(hub) - set(plain))
    for name in missing:
        assert f"jeval run-all: error: {name}: its data cannot be loaded: cannot load" in done.stderr, name
    assert f"{len(missing)} benchmark(s) could not load their data and did not run" in done.stderr
    ran = {p.name.removesuffix("_model-a.jsonl") for p in (tmp_path / "out").glob("*_model-a.jsonl")}
    assert ran == set(plain)


# -- names and models --------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "meant"), [("terminal_bench", "'terminalbench'"), ("mmlu_pro", "'mmlu-pro'"),
                                             ("gsm8", "'gsm8k'"), ("natural_reasoning", "'natural-reasoning'")])
def test_a_reference_or_misspelled_name_gets_did_you_mean(name: str, meant: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-b", name, "-m", "m", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert f"-b: unknown benchmark {name!r}; did you mean {meant}" in err, err


def test_a_model_the_endpoint_does_not_list_is_refused_before_any_sample(tmp_path: Path,
                                                                         server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "Qwen/Qwen3-8B", *remote(server), "-n", "2")
    assert done.returncode == 4, done.stdout + done.stderr
    assert (f"model 'Qwen/Qwen3-8B': {server.base_url} does not list the model 'Qwen/Qwen3-8B' at GET /v1/models; "
            "it lists: model-a, model-b") in done.stdout + done.stderr
    assert chat_requests(server) == []


def test_an_endpoint_that_lists_no_models_is_said_and_the_run_goes_on(tmp_path: Path) -> None:
    with FakeOpenAIServer(respond, api_key=SECRET, models=("hidden",), list_models=False) as quiet:
        done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "any-name", *remote(quiet), "-n", "2")
        assert done.returncode == 0, done.stdout + done.stderr
        assert (f"jeval: {quiet.base_url} lists no models at GET /v1/models; the model id(s) 'any-name' are not "
                "checked") in done.stdout
        assert len(chat_requests(quiet)) == 2
