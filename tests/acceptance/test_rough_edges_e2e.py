"""The rough edges a new user meets (issue 33, "Messages that explain" and the README), through the real
entry points: ``jeval`` subprocesses and pytester runs against the test server.

* a dead ``http://`` endpoint is not reported as a TLS problem (no ``ssl:default``);
* ``jeval rescore`` of an agent run reads the trajectories sidecar, and says how many records it could not
  score again and why;
* a letter the judge fallback found leaves no ``unscored_reason`` on a scored record;
* the W&B export prints one line, never its banner;
* one record selected by its exact id (two ways), where the README's old ``-k`` example took eleven;
* RMSE beside MAE in the judge metrics.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_jeval.cli._main import main
from pytest_jeval.core.paths import trajectories_path
from pytest_jeval.judge_bench.summary import judge_metrics
from pytest_jeval.metrics import mean_absolute_error, root_mean_squared_error
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.bench import DATA, mcq_answerer, serve


def _suite(path: Path, url: str, bench: str, extra: str = "", run: str = "") -> Path:
    suite = path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 20
        cache = false
        {run}

        [[models]]
        name = "test-model"
        base_url = "{url}"
        api_key = "x"

        [[benchmarks]]
        name = "{bench}"
        """) + extra, encoding="utf-8")
    return suite


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# -- a dead http:// endpoint --------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_a_dead_http_endpoint_is_not_called_a_tls_problem(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "JEVAL_", "JARVIS_BACKEND_"))}
    done = subprocess.run([sys.executable, "-m", "pytest_jeval", "run", "-b", "quickstart", "-m", "m", "--base-url",
                           url, "-n", "1"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert f"connection error to {url}" in text and "Cannot connect to host 127.0.0.1" in text, text
    assert "ssl:" not in text, text


# -- jeval rescore of an agent run ----------------------------------------------------------------

@pytest.mark.slow
def test_rescore_reads_the_trajectory_sidecar_and_says_what_it_could_not_rescore(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = tool_answer(ToolCallSpec("web_search", {"query": "weather Lisbon"}))
    from pytest_jeval.benchmarks.toolcall15 import bench_toolcall15
    from pytest_jeval.suite.dataset import load_samples

    bench = bench_toolcall15.BENCHMARK
    sample = {s.id: s for s in load_samples(bench, files=bench.default_files(bench_toolcall15.__file__))[0]}[
        "ts-01-weather"]
    with FakeOpenAIServer(script_responder({sample.input: [wrong, "Here you go."]}, default="no script")) as server:
        suite = _suite(pytester.path, server.base_url, "toolcall15", f'record_ids = ["{sample.id}"]\n')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    jsonl = pytester.path / "out" / "toolcall15_test-model.jsonl"
    sidecar = trajectories_path(jsonl)
    assert sidecar.is_file() and "trajectory" not in _records(jsonl)[0]  # the default: trajectories beside
    # the stored verdict is turned to correct by hand: a real rescoring from the sidecar turns it back
    tampered = [{**r, "is_correct": True, "score": 1.0} for r in _records(jsonl)]
    _write_records(jsonl, tampered)

    assert main(["rescore", str(jsonl), "-o", str(pytester.path / "again.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "with 'toolcall15': 1 verdicts changed\n" in out, out
    again = _records(pytester.path / "again.jsonl")
    assert again[0]["is_correct"] is False and "trajectory" not in again[0]
    assert trajectories_path(pytester.path / "again.jsonl").read_bytes() == sidecar.read_bytes()

    sidecar.unlink()  # nothing to replay: the stored verdict is kept, and the line says so
    assert main(["rescore", str(jsonl), "-o", str(pytester.path / "kept.jsonl")]) == 0
    out = capsys.readouterr().out
    assert ("with 'toolcall15': 0 verdicts changed; 1 record(s) not rescored, their stored verdicts kept "
            '(1 the record holds no trajectory (run with [run] trajectories = "inline"))') in out, out


# -- the judge fallback's letter ------------------------------------------------------------------

def test_a_letter_the_judge_found_leaves_no_unscored_reason(pytester: pytest.Pytester) -> None:
    rows = [json.loads(line) for line in (DATA / "mmlu_pro" / "test.jsonl").read_text().splitlines()]
    answers = {r["question"]: r["options"][r["answer_index"]] for r in rows}
    letter_only = mcq_answerer(answers)

    def model(prompt: str) -> str:
        if rows[0]["question"] in prompt:
            return "I would go with the option about it, but I will not name a letter."
        return letter_only(prompt)

    gold = "ABCDEFGHIJ"[rows[0]["answer_index"]]
    with serve(pytester, model, judge=lambda prompt: gold) as p:
        p.run("mmlu-pro", "mmlu_pro/test.jsonl")
        record = p.records("mmlu-pro")[str(rows[0]["question_id"])]
    meta = record["scoring_metadata"]
    assert record["is_correct"] is True and record["unscored"] is False
    assert meta["extraction"] == "judge" and meta["candidate_letter"] == gold
    assert "unscored_reason" not in meta and meta["regex"] == "no answer letter found"


# -- the W&B export --------------------------------------------------------------------------------

def test_the_wandb_export_prints_one_line_and_no_banner(pytester: pytest.Pytester, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    with FakeOpenAIServer(lambda body, attempt: "Answer: 4") as server:
        suite = _suite(pytester.path, server.base_url, "quickstart", 'max_samples = 2\n',
                       run='wandb_project = "jeval-test"')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    lines = result.stdout.lines + result.stderr.lines
    assert [line for line in lines if line.startswith("jeval: W&B: logged 1 run(s) to jeval-test")], lines[-20:]
    banner = [line for line in lines if re.search(r"(^|[.\s])wandb: ", line)]  # W&B's own prefix, glued or not
    assert not banner, banner


# -- one record by its exact id --------------------------------------------------------------------

@pytest.fixture
def gsm8k_180(pytester: pytest.Pytester) -> Path:
    rows = [{"question": f"What is {i} plus 0?", "answer": f"{i} + 0 = {i}\n#### {i}"} for i in range(180)]
    path = pytester.path / "gsm.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["the old -k", "-k with the id's end", "record_ids"])
def test_exact_id_selects_one_record(pytester: pytest.Pytester, gsm8k_180: Path, how: str) -> None:
    with FakeOpenAIServer(lambda body, attempt: "The answer is 17.") as server:
        suite = _suite(pytester.path, server.base_url, "gsm8k", f'data_files = "{gsm8k_180.name}"\n')
        args = {
            "the old -k": ["-k", "test-model and gsm8k-17"],
            "-k with the id's end": ["-k", "test-model/gsm8k-17]"],
            "record_ids": ["--jeval-set", 'benchmarks.gsm8k.record_ids=["gsm8k-17"]'],
        }[how]
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider", *args)
    ids = [r["record_id"] for r in _records(pytester.path / "out" / "gsm8k_test-model.jsonl")]
    if how == "the old -k":  # the README's example before issue 33: gsm8k-170 ... gsm8k-179 match too
        assert sorted(ids) == sorted(["gsm8k-17", *(f"gsm8k-17{d}" for d in range(10))])
    else:
        assert ids == ["gsm8k-17"], result.stdout.str()[-2000:]
        result.assert_outcomes(passed=1)


# -- the README's commands parse -------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[list[str]]:
    """Each command line of the README's ``sh`` blocks, split as a shell splits it (comments dropped)."""
    import shlex

    blocks = re.findall(r"^```(?:sh|bash|console)\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    return [argv for block in blocks for line in block.splitlines() if (argv := shlex.split(line, comments=True))]


def _check_pytest_args(args: list[str]) -> None:
    from _pytest.config import _prepareconfig

    config = _prepareconfig(args)  # parses every option (plugins included) without running a session
    try:
        assert config.getoption("jeval_config"), args
    finally:
        config._ensure_unconfigure()


def test_every_readme_command_parses() -> None:
    from pytest_jeval.cli import _run
    from pytest_jeval.cli._main import build_parser

    commands = readme_commands()
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    extras = set(re.findall(r"^(\w+) = \[", (README.parent / "pyproject.toml").read_text(encoding="utf-8"), re.M))
    seen = set()
    for argv in commands:
        tool = argv[0]
        seen.add(tool)
        if tool == "make":
            assert re.search(rf"^{re.escape(argv[1])}:", makefile, re.M), argv
        elif tool == "pip":
            for word in argv[2:]:
                if m := re.fullmatch(r"pytest-jeval\[(\w+)\]", word):
                    assert m.group(1) in extras, argv
        elif tool == "jeval":
            parser = build_parser()
            rest, passthrough = _run.split_passthrough(argv[1:]) if argv[1] in _run.PASSTHROUGH_COMMANDS else (
                argv[1:], [])
            _, unknown = parser.parse_known_args(rest)
            assert not unknown, argv
            if passthrough:
                _check_pytest_args(["--jeval-config", "suite.toml", *passthrough])
        elif tool == "pytest":
            _check_pytest_args(argv[1:])
        else:
            raise AssertionError(f"the README runs {tool!r}, which this test does not know how to check: {argv}")
    assert {"make", "pip", "jeval", "pytest"} <= seen and len(commands) >= 15


def test_the_readme_check_sees_a_bad_option() -> None:
    with pytest.raises((SystemExit, Exception)):
        _check_pytest_args(["--jeval-config", "suite.toml", "--jeval-no-such-option"])


# -- RMSE beside MAE --------------------------------------------------------------------------------

def test_rmse_beside_mae() -> None:
    gold = [0] * 10
    one_big_miss, four_small = [0] * 9 + [4], [1] * 4 + [0] * 6
    assert mean_absolute_error(one_big_miss, gold) == pytest.approx(0.4) == mean_absolute_error(four_small, gold)
    assert root_mean_squared_error(one_big_miss, gold) == pytest.approx(1.2649, abs=1e-4)
    assert root_mean_squared_error(four_small, gold) == pytest.approx(0.6325, abs=1e-4)
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    pred, ref = rng.normal(size=50) * 3, rng.integers(0, 5, size=50)
    assert root_mean_squared_error(pred, ref) == pytest.approx(float(np.sqrt(skm.mean_squared_error(ref, pred))))
    fields = judge_metrics([
        {"case_kind": "score", "labels": [0, 1, 2, 3, 4], "scale": [0, 4], "predicted": p, "gold": g,
         "is_correct": p == g, "error": None} for p, g in zip(one_big_miss, gold)])
    assert fields["mae"] == pytest.approx(0.4) and fields["rmse"] == pytest.approx(1.2649, abs=1e-4)


# -- the sampling knobs: benchmark > model > defaults, key by key ---------------------------------------

@pytest.mark.slow
def test_sampling_keys_reach_the_server_with_their_precedence(pytester: pytest.Pytester) -> None:
    from tests.support.gsm import chat_requests

    with FakeOpenAIServer(lambda body, attempt: "Answer: 4") as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [defaults]
            top_p = 0.9
            stop = ["###"]
            presence_penalty = 0.5
            seed = 1

            [run]
            output_dir = "out"
            cache = false

            [[models]]
            name = "test-model"
            base_url = "{server.base_url}"
            api_key = "x"
            top_p = 0.8
            frequency_penalty = -0.25

            [[models]]
            name = "gpt-5-mini"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "quickstart"
            record_ids = ["qs-arith-01"]
            repeats = 2
            top_p = 0.5
            seed = 10
            """), encoding="utf-8")
        pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
        bodies = [r["body"] for r in chat_requests(server)]
    keys = ("top_p", "stop", "presence_penalty", "frequency_penalty", "seed")
    sent = sorted((b["model"], *(b.get(k) for k in keys)) for b in bodies)
    assert sent == [
        ("gpt-5-mini", None, None, None, None, 10),  # a reasoning model: what its API refuses is left out
        ("gpt-5-mini", None, None, None, None, 11),
        ("test-model", 0.5, ["###"], 0.5, -0.25, 10),  # the benchmark's top_p and seed win; seed + n - 1
        ("test-model", 0.5, ["###"], 0.5, -0.25, 11),
    ], sent
