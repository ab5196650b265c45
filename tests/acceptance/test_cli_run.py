"""``jeval run`` and ``jeval run-all``: real subprocess runs against the test server over HTTP.

The server answers the bundled quickstart set right (or, for the ``wrong`` server, every item
wrong); the runs write a suite into the output directory, and that suite runs again under
plain ``pytest --jeval-config``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.calls.engines import ENGINES
from pytest_jeval.cli import main
from pytest_jeval.cli._run import run_all_selection
from pytest_jeval.cli._run_suite import LOCAL_MODEL, RunUsageError, build_suite, prepare_suite, write_suite
from pytest_jeval.cli._toml import dumps
from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import SECRET, chat_requests

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

QUICKSTART = Path(__file__).resolve().parents[2] / "pytest_jeval" / "benchmarks" / "data" / "quickstart.jsonl"
ROWS = [json.loads(line) for line in QUICKSTART.read_text(encoding="utf-8").splitlines()]
MODELS = ("model-a", "model-b")


def quickstart_responder(right: bool) -> Any:
    """The gold answer of the quickstart row the prompt asks (or a wrong one); 'no idea' for anything else."""

    def respond(body: dict[str, Any], attempt: int) -> str:
        text = last_user_message(body)
        for row in ROWS:
            if text.startswith(row["question"]):
                return f"Answer: {row['answer']}" if right else "Answer: Zanzibar 12345 Q"
        return "no idea"

    return respond


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(quickstart_responder(True), api_key=SECRET, models=MODELS) as s:
        yield s


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "JARVIS_BACKEND_", "JEVAL_")) and k != "OPENAI_API_KEY"}
    env["JEVAL_TEST_KEY"] = SECRET
    return env


def jeval(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_jeval", *argv], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=180)


def pytest_run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=180)


def remote(server: FakeOpenAIServer) -> list[str]:
    return ["--base-url", server.base_url, "--api-key-env", "JEVAL_TEST_KEY"]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- subprocess runs ------------------------------------------------------------------------

def test_run_writes_the_suite_and_records(tmp_path: Path, server: FakeOpenAIServer) -> None:
    argv = ["run", "-b", "quickstart", "-m", "model-a", *remote(server), "--max-samples", "4", "-o", "out"]
    done = jeval(tmp_path, *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    suite_path = tmp_path / "out" / "suite.toml"
    assert f"suite {Path('out') / 'suite.toml'}" in done.stdout
    assert f"repeat with: pytest --jeval-config {Path('out') / 'suite.toml'}" in done.stdout
    suite = tomllib.loads(suite_path.read_text(encoding="utf-8"))
    assert suite["models"] == [{"name": "model-a", "base_url": server.base_url, "api_key_env": "JEVAL_TEST_KEY"}]
    assert suite["benchmarks"] == [{"name": "quickstart", "max_samples": 4}]
    assert suite["run"]["output_dir"] == str(tmp_path / "out")
    first = records(tmp_path / "out" / "quickstart_model-a.jsonl")
    assert len(first) == 4 and all(r["is_correct"] for r in first)
    assert len(chat_requests(server)) == 4
    assert SECRET not in suite_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_matrix_of_two_benchmarks_and_two_models(tmp_path: Path, server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run", "-b", "quickstart", "-b", "email_triage", "-m", "model-a", "-m", "model-b",
                 *remote(server), "-n", "2", "-o", "out")
    # email_triage gets 'no idea' from the server: wrong answers, pytest's status 1
    assert done.returncode == 1, done.stdout + done.stderr
    for bench in ("quickstart", "email_triage"):
        for model in MODELS:
            assert len(records(tmp_path / "out" / f"{bench}_{model}.jsonl")) == 2
    assert {r["body"]["model"] for r in chat_requests(server)} == set(MODELS)
    # the written suite repeats the run under plain pytest (answers from the response cache),
    # with the same exit status: jeval run's is pytest's
    first = {f: [r["record_id"] for r in records(f)] for f in (tmp_path / "out").glob("*.jsonl")}
    sent = len(chat_requests(server))
    again = pytest_run(tmp_path, "--jeval-config", "out/suite.toml")
    assert again.returncode == done.returncode, again.stdout
    assert {f: [r["record_id"] for r in records(f)] for f in (tmp_path / "out").glob("*.jsonl")} == first
    assert len(chat_requests(server)) == sent


@pytest.mark.slow
def test_pass_through_of_k_n_and_junitxml(tmp_path: Path, server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "model-a", *remote(server), "-o", "out",
                 "--", "-k", "qs-arith", "-n", "2", "--junitxml", "junit.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "repeat with: pytest --jeval-config" in done.stdout and "-k qs-arith -n 2 --junitxml junit.xml" in done.stdout
    assert "2 workers" in done.stdout  # xdist ran the session
    ids = {r["record_id"] for r in records(tmp_path / "out" / "quickstart_model-a.jsonl")}
    arith = {r["id"] for r in ROWS if r["id"].startswith("qs-arith")}
    assert ids == arith and len(chat_requests(server)) == len(arith)  # -k selected before any request
    cases = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    assert {c.get("name", "").split("/", 1)[1].rstrip("]") for c in cases} == arith


def test_a_bad_value_is_a_usage_error_before_any_request(tmp_path: Path, server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run", "-b", "quickstart", "-m", "model-a", *remote(server), "--max-samples", "-1")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "jeval run: error: --max-samples: Input should be greater than 0 (got -1)"]
    assert server.requests == [] and not (tmp_path / "results").exists()


@pytest.mark.slow
def test_run_all_runs_every_benchmark_with_bundled_data(tmp_path: Path, server: FakeOpenAIServer) -> None:
    done = jeval(tmp_path, "run-all", "-m", "model-a", *remote(server), "--max-samples", "2", "-o", "out")
    assert done.returncode in (0, 1), done.stdout + done.stderr  # a finished run (wrong answers give 1)
    ran = {p.name.removesuffix("_model-a.jsonl") for p in (tmp_path / "out").glob("*_model-a.jsonl")}
    expected, left_out = run_all_selection(judge=False)
    assert ran == set(expected)
    assert {"quickstart", "doc_qa", "email_triage", "security_scanner", "coding_assistant", "ipw"} <= ran
    assert not {"gsm8k", "gpqa", "frames", "simpleqa"} & ran
    for name in ran:
        assert len(records(tmp_path / "out" / f"{name}_model-a.jsonl")) == 2
    assert "left out gsm8k: its data is on the Hugging Face Hub (openai/gsm8k)" in done.stdout
    assert "left out frames: its data is on the Hugging Face Hub" in done.stdout
    assert "scored by an LLM judge (give --judge-model)" in done.stdout
    assert set(left_out) >= {"gsm8k", "frames"}


# -- usage errors, in process (main returns before pytest would start) ----------------------

@pytest.mark.parametrize(("option", "message"), [
    (["--temperature", "abc"], "--temperature: Input should be a valid number, unable to parse string as a number"),
    (["--temperature", "nan"], "--temperature: Input should be a finite number"),
    (["-b", "nope"], "-b: unknown benchmark 'nope'; known benchmarks are:"),
    (["--engine", "bad"], f"--engine: Value error, unknown engine 'bad'; the registered engines are: {', '.join(ENGINES.names())}"),
    (["--max-tokens", "0"], "--max-tokens: Input should be greater than 0"),
    (["--seed", "1.5"], "--seed: Input should be a valid integer"),
    (["--concurrency", "x"], "--concurrency: Input should be a valid integer"),
    (["--data-files", "missing.jsonl"], "--data-files: file not found: "),
    (["-b", "simpleqa"], "-b: 'simpleqa' is scored by an LLM judge; add a [judge] table"),
    (["--model-filter", "zzz"], "--model-filter 'zzz' matches none of the models (model-a)"),
    (["-m", "model-a"], "-m model-a is given twice"),
    (["--api-key-env", "UNSET_JEVAL_VAR"], "--api-key-env: environment variable 'UNSET_JEVAL_VAR' is not set"),
    (["--judge-base-url", "http://x"], "--judge-base-url needs --judge-model"),
])
def test_bad_values_are_usage_errors(option: list[str], message: str, tmp_path: Path, server: FakeOpenAIServer,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    benchmark = [] if "-b" in option else ["-b", "quickstart"]
    argv = ["run", *benchmark, "-m", "model-a", "--base-url", server.base_url, *option]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"jeval run: error: {message}"), err
    assert server.requests == [] and list(tmp_path.iterdir()) == []


def test_a_key_on_the_command_line_is_refused_and_not_repeated(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "-b", "quickstart", "-m", "m", "--base-url", "http://127.0.0.1:9"]
    for argv in (["--api-key", SECRET], [f"--api-key={SECRET}"]):
        with pytest.raises(SystemExit) as exc:
            main([*base, *argv])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert SECRET not in err and "--api-key is not accepted" in err and "--api-key-env" in err
    assert main([*base, "--api-key-env", SECRET]) == 2  # a key given where its variable's name belongs
    err = capsys.readouterr().err
    assert SECRET not in err and "--api-key-env takes the NAME of an environment variable" in err


def test_a_pytest_option_before_the_separator_says_where_it_goes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "-b", "quickstart", "-m", "local", "-k", "arith"])
    assert exc.value.code == 2
    assert "unrecognized arguments: -k arith (pytest's options go after --)" in capsys.readouterr().err


# -- the suite, in process ------------------------------------------------------------------

def options(**kw: Any) -> argparse.Namespace:
    base: dict[str, Any] = dict(
        command="run", models=["local"], model_filter=None, engine=None, base_url=None, api_key_env=None,
        max_samples=None, seed=None, temperature=None, max_tokens=None, concurrency=None, data_files=None,
        split=None, subset=None, backend=None, tools=None, judge_model=None, judge_engine=None,
        judge_base_url=None, judge_api_key_env=None, output="results/")
    base.update(kw)
    return argparse.Namespace(**base)


def test_suite_from_options(tmp_path: Path) -> None:
    suite = build_suite(options(models=["local", "org/Model-7B"], engine="vllm", base_url="http://h:8000/v1",
                                api_key_env="K", max_samples="5", seed="7", temperature="0.3", max_tokens="64",
                                concurrency="8", data_files=["d/x.jsonl"], split="dev", subset="s",
                                judge_model="j", judge_engine="vllm", model_filter=None, output="o"),
                        ["gsm8k"], tmp_path)
    assert suite["models"] == [
        {"name": LOCAL_MODEL, "engine": "local"},
        {"name": "org/Model-7B", "engine": "vllm", "base_url": "http://h:8000/v1", "api_key_env": "K"}]
    assert suite["benchmarks"] == [{"name": "gsm8k", "max_samples": 5, "split": "dev", "subset": "s",
                                    "data_files": [str(tmp_path / "d" / "x.jsonl")]}]
    assert suite["defaults"] == {"temperature": 0.3, "max_tokens": 64}
    assert suite["run"] == {"output_dir": str(tmp_path / "o"), "seed": 7, "max_concurrency": 8}
    assert suite["judge"] == {"model": "j", "engine": "vllm"}
    assert tomllib.loads(dumps(suite)) == suite


def test_model_filter_and_option_conflicts(tmp_path: Path) -> None:
    suite = build_suite(options(models=["org/a-7b", "org/b-7b", "c-70b"], model_filter="7b"), ["quickstart"],
                        tmp_path)
    assert [m["name"] for m in suite["models"]] == ["org/a-7b", "org/b-7b"]
    with pytest.raises(RunUsageError, match="--data-files needs exactly one -b"):
        build_suite(options(data_files=["x"]), ["quickstart", "doc_qa"], tmp_path)
    with pytest.raises(RunUsageError, match="--base-url: every model runs on the bundled local engine"):
        build_suite(options(base_url="http://x"), ["quickstart"], tmp_path)


def test_a_judged_benchmark_with_a_judge_model_is_a_good_suite(tmp_path: Path) -> None:
    args = options(models=["m"], base_url="http://127.0.0.1:9/v1", judge_model="judge-x",
                   judge_base_url="http://127.0.0.1:9/v1")
    text, out = prepare_suite(args, ["simpleqa"], tmp_path)
    suite = tomllib.loads(text)
    assert suite["judge"] == {"model": "judge-x", "base_url": "http://127.0.0.1:9/v1"}
    assert out == tmp_path / "results" and not out.exists()  # checked, nothing written yet
    with pytest.raises(RunUsageError, match=r"scored by an LLM judge.*give --judge-model"):
        prepare_suite(options(models=["m"], base_url="http://127.0.0.1:9/v1"), ["simpleqa"], tmp_path)


def test_a_different_suite_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "suite.toml"
    mine.write_text("# the user's own suite\n")
    written = write_suite(tmp_path, "a = 1\n")
    assert mine.read_text() == "# the user's own suite\n"
    assert written.path.name.startswith("suite-") and written.path.read_text() == "a = 1\n"
    assert written.note is not None and written.path.name in written.note
    assert write_suite(tmp_path, "a = 1\n").path == written.path  # the same suite again: the same file
    assert write_suite(tmp_path / "new", "a = 1\n").path == tmp_path / "new" / "suite.toml"


def test_toml_writer_round_trips() -> None:
    doc = {
        "meta": {"name": 'quote " back \\ tab \t nl \n cr \r bell \x07 del \x7f é 漢 😀', "e": ""},
        "defaults": {"temperature": 0.1, "big": 1e300, "tiny": 5e-324, "whole": 2.0, "neg": -3, "on": True},
        "run": {"tags": ["a", "b\"c"], "ints": [1, 2], "empty": []},
        "weird key": {"a.b": 1, "": 2},
        "models": [{"name": "x", "nested": {"k": "v"}}, {"name": "y"}],
    }
    assert tomllib.loads(dumps(doc)) == doc
    special = tomllib.loads(dumps({"a": math.inf, "b": -math.inf, "c": math.nan}))
    assert special["a"] == math.inf and special["b"] == -math.inf and math.isnan(special["c"])
