"""``label``: the same benchmark or model twice in one suite, told apart in ids, file names and tables.

The end-to-end test runs quickstart twice (``qs-a``: four arithmetic rows at the models'
temperatures; ``qs-b``: two rows at the benchmark's own temperature 0.2) x the same model
twice (``cold`` at 0.0, ``warm`` at 0.7) against the test server, which answers right below
temperature 0.5 and wrong above, so each pair's verdicts show which temperature it sent.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli import main
from pytest_jeval.suite.config import SuiteError, parse_suite
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    Fault,
    ToolCallSpec,
    last_user_message,
    script_responder,
    tool_answer,
)
from tests.support.gsm import chat_requests

QUICKSTART = Path(__file__).resolve().parents[2] / "pytest_jeval" / "benchmarks" / "data" / "quickstart.jsonl"
ARITH = ["qs-arith-01", "qs-arith-02", "qs-arith-03", "qs-arith-04"]


def parse(text: str) -> Any:
    return parse_suite(textwrap.dedent(text), Path("suite.toml"))


# -- validation -------------------------------------------------------------------------------


def test_a_duplicate_benchmark_without_labels_is_refused_naming_label() -> None:
    with pytest.raises(SuiteError) as info:
        parse("""
        [[models]]
        name = "m"
        [[benchmarks]]
        name = "gsm8k"
        [[benchmarks]]
        name = "quickstart"
        [[benchmarks]]
        name = "gsm8k"
        subset = "main"
        """)
    assert ("benchmarks[0] and benchmarks[2]: duplicate name 'gsm8k' (used in test ids and file names); "
            'give each a distinct label = "..."') in str(info.value)


def test_a_duplicate_model_without_labels_is_refused_naming_label() -> None:
    with pytest.raises(SuiteError, match=r"models\[0\] and models\[1\]: duplicate name 'm' .*distinct label"):
        parse("""
        [[models]]
        name = "m"
        [[models]]
        name = "m"
        temperature = 0.7
        [[benchmarks]]
        name = "gsm8k"
        """)


@pytest.mark.parametrize(("labels", "message"), [
    (('label = "x"', 'label = "x"'), "duplicate label 'x'"),
    (("", 'label = "gsm8k"'), "name 'gsm8k' and label 'gsm8k' are the same key"),
    (('label = "a"', ""), None),
])
def test_keys_must_be_unique(labels: tuple[str, str], message: str | None) -> None:
    text = f"""
    [[models]]
    name = "m"
    [[benchmarks]]
    name = "gsm8k"
    {labels[0]}
    [[benchmarks]]
    name = "gsm8k"
    {labels[1]}
    """
    if message is None:
        suite = parse(text)
        assert [b.key for b in suite.benchmarks] == ["a", "gsm8k"]
        return
    with pytest.raises(SuiteError, match=rf"benchmarks\[0\] and benchmarks\[1\]: {message}"):
        parse(text)


def test_model_labels_unique_by_their_file_name() -> None:
    with pytest.raises(SuiteError, match=r"models\[0\] and models\[1\]: 't\+1' and 't-1' both give 't-1'"):
        parse("""
        [[models]]
        name = "m"
        label = "t+1"
        [[models]]
        name = "m"
        label = "t-1"
        [[benchmarks]]
        name = "gsm8k"
        """)


@pytest.mark.parametrize("label", ["../up", "a b", "x/y", "-lead", ""])
@pytest.mark.parametrize("table", ["models", "benchmarks"])
def test_an_unsafe_label_is_refused(table: str, label: str) -> None:
    model = f'label = "{label}"' if table == "models" else ""
    bench = f'label = "{label}"' if table == "benchmarks" else ""
    with pytest.raises(SuiteError, match=rf"{table}\[0\]\.label: .*not usable as a label"):
        parse(f"""
        [[models]]
        name = "m"
        {model}
        [[benchmarks]]
        name = "gsm8k"
        {bench}
        """)


def test_labelled_pairs_whose_files_collide_are_refused() -> None:
    with pytest.raises(SuiteError, match=r"would both write calc_hard_m\.jsonl"):
        parse("""
        [[models]]
        name = "m1"
        label = "hard_m"
        [[models]]
        name = "m"
        [[benchmarks]]
        name = "quickstart"
        label = "calc"
        [[benchmarks]]
        name = "gsm8k"
        label = "calc_hard"
        """)


PLAN_SUITE = """
[[models]]
name = "test-model"
label = "cold"
temperature = 0.0
base_url = "http://127.0.0.1:9/v1"
[[models]]
name = "test-model"
label = "warm"
temperature = 0.7
base_url = "http://127.0.0.1:9/v1"
[[models]]
name = "test-model"
label = "warm+again"
temperature = 0.7
base_url = "http://127.0.0.1:9/v1"
[[benchmarks]]
name = "quickstart"
label = "qs-a"
[[benchmarks]]
name = "quickstart"
label = "qs-b"
temperature = 0.2
max_samples = 3
"""


def test_plan_keys_precedence_and_the_cache_key(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(PLAN_SUITE)
    plan = EvalPlan.from_file(path, invocation_dir=tmp_path)
    assert list(plan.benchmarks) == ["qs-a", "qs-b"] and list(plan.models) == ["cold", "warm", "warm+again"]
    assert {pb.benchmark.name for pb in plan.benchmarks.values()} == {"quickstart"}  # found by name
    assert len(plan.samples("qs-a")[0]) == 36 and len(plan.samples("qs-b")[0]) == 3
    # benchmark > model > defaults, per labelled entry
    assert plan.generation("qs-a", "cold")[0] == 0.0 and plan.generation("qs-a", "warm")[0] == 0.7
    assert plan.generation("qs-b", "warm")[0] == 0.2
    sample = plan.samples("qs-b")[0][0]

    def key(bench: str, model: str) -> str:
        request = plan.sample_request(bench, model, sample)
        assert request is not None and request.model == "test-model"  # the request sends the name
        return request.cache_key(plan.endpoint_for(plan.models[model]))

    # different settings never share a cached reply; identical ones do
    assert key("qs-a", "cold") != key("qs-a", "warm")
    assert key("qs-a", "warm") == key("qs-a", "warm+again")
    assert key("qs-b", "cold") == key("qs-b", "warm")  # the benchmark's temperature beats both models'


# -- end to end ---------------------------------------------------------------------------------


@dataclass
class ByTemperature:
    """Right below temperature 0.5, wrong above; qs-arith-04 at 0.7 fails with HTTP 500 while ``failing``."""

    golds: dict[str, str]
    failing: bool = True
    seen: list[tuple[str, float]] = field(default_factory=list)
    server: FakeOpenAIServer | None = None

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        temperature = float(body.get("temperature", -1))
        self.seen.append((str(body.get("model")), temperature))
        gold = next(g for q, g in self.golds.items() if q in last_user_message(body))
        if self.failing and temperature == 0.7 and gold == self.golds["What is 3 times 4?"]:
            return Fault("500")
        return Answer(gold if temperature < 0.5 else str(int(gold) + 1))


@pytest.fixture
def labelled(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, ByTemperature]]:
    rows = [json.loads(line) for line in QUICKSTART.read_text().splitlines()]
    golds = {r["question"]: r["answer"] for r in rows if r["id"] in ARITH}
    assert "What is 3 times 4?" in golds  # qs-arith-04
    responder = ByTemperature(golds)
    monkeypatch.setenv("JEVAL_TEST_KEY", "sk-labels")
    with FakeOpenAIServer(responder, api_key="sk-labels") as server:
        model = f'name = "test-model"\nbase_url = "{server.base_url}"\napi_key_env = "JEVAL_TEST_KEY"\n'
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 1
            request_timeout = 5

            [[models]]
            {model}label = "cold"
            temperature = 0.0

            [[models]]
            {model}label = "warm"
            temperature = 0.7

            [[benchmarks]]
            name = "quickstart"
            label = "qs-a"
            record_ids = {json.dumps(ARITH)}

            [[benchmarks]]
            name = "quickstart"
            label = "qs-b"
            record_ids = {json.dumps(ARITH[:2])}
            temperature = 0.2
            min_accuracy = 0.5
            """))
        responder.server = server
        yield suite, responder


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_labelled_benchmarks_and_models_end_to_end(labelled: tuple[Path, ByTemperature], pytester: pytest.Pytester,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    suite, responder = labelled
    server = responder.server
    assert server is not None
    result = pytester.runpytest("--jeval-config", str(suite), "-rA", "-p", "no:randomly")
    # qs-a x cold right (0.0); qs-a x warm wrong (0.7), one an error; qs-b right for both (its 0.2 wins)
    result.assert_outcomes(passed=8, failed=3, errors=1)
    passed = {line.split(" ", 1)[1] for line in result.outlines if line.startswith("PASSED ")}
    assert "suite.toml::qs-a::test_quickstart[cold/qs-arith-01]" in passed
    assert "suite.toml::qs-b::test_quickstart[warm/qs-arith-02]" in passed
    out = pytester.path / "out"
    assert sorted(p.name for p in out.glob("*.jsonl")) == [
        "qs-a_cold.jsonl", "qs-a_warm.jsonl", "qs-b_cold.jsonl", "qs-b_warm.jsonl"]
    # the server saw the model's name, at the two models' temperatures and the benchmark's
    assert {m for m, _ in responder.seen} == {"test-model"}
    assert {t for _, t in responder.seen} == {0.0, 0.7, 0.2}
    for bench, model, temperature, correct in (("qs-a", "cold", 0.0, True), ("qs-a", "warm", 0.7, False),
                                               ("qs-b", "cold", 0.2, True), ("qs-b", "warm", 0.2, True)):
        records = read(out / f"{bench}_{model}.jsonl")
        assert {r["record_id"] for r in records} == set(ARITH if bench == "qs-a" else ARITH[:2])
        for r in records:
            assert (r["benchmark"], r["benchmark_label"], r["model"], r["model_label"]) == (
                "quickstart", bench, "test-model", model)
            if r["error"] is None:
                assert r["request"]["temperature"] == temperature and r["is_correct"] is correct
            else:
                assert (bench, model, r["record_id"]) == ("qs-a", "warm", "qs-arith-04") and "HTTP 500" in r["error"]
        summary = json.loads((out / f"{bench}_{model}.jsonl.summary.json").read_text())
        assert (summary["benchmark"], summary["benchmark_label"], summary["model"], summary["model_label"]) == (
            "quickstart", bench, "test-model", model)
    aggregate = json.loads((out / "summary.json").read_text())
    assert sorted(r["jsonl"] for r in aggregate["runs"]) == sorted(p.name for p in out.glob("*.jsonl"))
    assert {(g["benchmark"], g["model"]) for g in aggregate["gates"]} == {("qs-b", "cold"), ("qs-b", "warm")}
    result.stdout.fnmatch_lines(["*jeval results*", "benchmark*model*", "-*",
                                 "qs-a*cold*4*1.000*", "qs-a*warm*4*0.000*", "qs-b*cold*2*1.000*",
                                 "qs-b*warm*2*1.000*", "", "gates:", "*PASS qs-b x cold*", "*PASS qs-b x warm*"])

    # -k selects by label
    before = server.request_count
    picked = pytester.runpytest("--jeval-config", str(suite), "--jeval-output", "out-k", "-k", "qs-b and warm")
    picked.assert_outcomes(passed=2)
    assert [p.name for p in (pytester.path / "out-k").glob("*.jsonl")] == ["qs-b_warm.jsonl"]
    assert server.request_count - before == 2

    # --jeval-resume reads the labelled files: only the errored sample is sent again
    responder.failing = False
    responder.seen.clear()
    resumed = pytester.runpytest("--jeval-config", str(suite), "--jeval-resume")
    resumed.assert_outcomes(passed=8, failed=4)
    assert responder.seen == [("test-model", 0.7)]
    # not rerun (from the cache); short-summary lines left out: pytest shortens them, except under CI=true
    assert sum("resumed: recorded as wrong" in line and not line.startswith("FAILED ")
               for line in resumed.outlines) == 3
    assert all(r["cached"] is False for pair in out.glob("*.jsonl") for r in read(pair))
    fixed = {r["record_id"]: r for r in read(out / "qs-a_warm.jsonl")}
    assert len(fixed) == 4 and fixed["qs-arith-04"]["error"] is None and fixed["qs-arith-04"]["is_correct"] is False

    # jeval rescore finds the benchmark by its name and keeps the labels
    source = out / "qs-a_warm.jsonl"
    capsys.readouterr()
    assert main(["rescore", str(source)]) == 0
    printed = capsys.readouterr().out
    assert "with 'quickstart'" in printed and "0 verdicts changed" in printed
    assert "summary fields changed: none" in printed, printed
    target = out / "qs-a_warm.rescored-quickstart.jsonl"
    assert target.read_bytes() == source.read_bytes()
    assert (json.loads(target.with_name(target.name + ".summary.json").read_text())
            == json.loads(source.with_name(source.name + ".summary.json").read_text()))
    assert chat_requests(server)

    # jeval summarize, compare and report read labelled files like any other
    assert main(["summarize", str(out / "qs-b_cold.jsonl")]) == 0
    printed, err = capsys.readouterr()
    assert "Benchmark: quickstart (label qs-b)" in printed and "Model:     test-model (label cold)" in printed
    assert "differs" not in err  # the stored summary matches its records, labels and all
    assert main(["compare", "--json", str(out / "qs-a_cold.jsonl"), str(source)]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["shared"] == 4 and "warning" not in compared
    assert (compared["metrics"]["A"]["accuracy"], compared["metrics"]["B"]["accuracy"]) == (1.0, 0.0)
    report = pytester.path / "report.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    html = report.read_text()
    assert all(f"{name}.jsonl" in html for name in ("qs-a_cold", "qs-a_warm", "qs-b_cold", "qs-b_warm"))


def test_an_external_agent_gets_the_model_name_not_the_label(pytester: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.external import ROWS, ExternalProject, chat_bodies, fake_agent_command

    monkeypatch.setenv("EXT_KEY", "sk-labels-ext")
    script = script_responder({"6*7": [tool_answer(ToolCallSpec("calculator", {"expression": "6*7"})), "42"]})
    with FakeOpenAIServer(script, api_key="sk-labels-ext", models=("ext-model",)) as server:
        project = ExternalProject(pytester, server, marker="labels-marker")
        # {model} lands in an argument the fake agent's normal mode ignores, to be read back from its argv
        command = fake_agent_command("normal", project.marker, "--needle-sha256", "{model}")
        project.write({"ext_plain": command}, model='api_key_env = "EXT_KEY"\nlabel = "ext-cold"', run="cache = false",
                      rows=[ROWS[0]])
        pytester.runpytest("--jeval-config", "suite.toml").assert_outcomes(passed=1)
        path = pytester.path / "out" / "ext_plain_ext-cold.jsonl.trajectories.jsonl"
        traj = {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}["mul"]
        assert (traj["benchmark"], traj["model"]) == ("ext_plain", "ext-model")
        argv = traj["external"]["argv"]
        assert argv[argv.index("--needle-sha256") + 1] == "ext-model"
        assert {b["model"] for b in chat_bodies(server)} == {"ext-model"}
