"""End to end through pytester: a suite against a local OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.support.gsm import SECRET, JevalProject, chat_requests, outcome_ids


def test_outcomes_records_and_summary(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite()
    result = p.pytester.runpytest("--jeval-config", str(suite), "-rA")
    # rows 0,5..9 right; 1,4 wrong; 2 unscored; 3 an endpoint error after retries
    result.assert_outcomes(passed=6, failed=3, errors=1)
    assert outcome_ids(result, "passed") == {f"gsm8k-{i}" for i in p.script.expected_correct}
    assert outcome_ids(result, "failed") == {"gsm8k-1", "gsm8k-2", "gsm8k-4"}
    assert outcome_ids(result, "error") == {"gsm8k-3"}

    records = {r["record_id"]: r for r in p.records()}
    assert set(records) == {f"gsm8k-{i}" for i in range(10)}
    assert records["gsm8k-0"]["is_correct"] is True and records["gsm8k-0"]["score"] == 1.0
    assert records["gsm8k-1"]["is_correct"] is False and records["gsm8k-1"]["extracted"] is not None
    assert records["gsm8k-2"]["is_correct"] is None and records["gsm8k-2"]["unscored"] is True
    err = records["gsm8k-3"]
    assert err["is_correct"] is None and "HTTP 500" in err["error"] and "retries" in err["error"]
    # unmeasured telemetry is null, never a made-up 0
    for field in ("energy_joules", "power_watts", "gpu_utilization_pct", "mfu_pct", "mbu_pct", "ttft", "cost_usd"):
        assert records["gsm8k-0"][field] is None
    assert records["gsm8k-0"]["prompt_tokens"] > 0 and records["gsm8k-0"]["latency_seconds"] > 0

    s = p.summary()
    assert (s["total_samples"], s["errors"], s["unscored"], s["correct"]) == (10, 1, 1, 6)
    assert s["scored_samples"] == 8
    assert s["accuracy"] == pytest.approx(6 / 9)  # errors leave the denominator, unscored count as wrong
    low, high = s["accuracy_ci"]
    assert low < 6 / 9 < high
    result.stdout.fnmatch_lines(["*jeval results*", "gsm8k*test-model*10*0.667*[[]0.*, 0.*[]]*1*1*"])


def test_wrong_answer_message_is_short_and_readable(jeval_project: JevalProject) -> None:
    p = jeval_project
    result = p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["wrong answer", "  question:  *", f"  expected:  {p.script.gold(1)}", "  extracted: *"])
    assert "Traceback" not in result.stdout.str()


def test_k_selects_by_record_id(jeval_project: JevalProject) -> None:
    p = jeval_project
    result = p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-7 or gsm8k-0")
    result.assert_outcomes(passed=2)
    assert {r["record_id"] for r in p.records()} == {"gsm8k-0", "gsm8k-7"}
    assert len(chat_requests(p.server)) == 2  # deselected samples are never sent


def test_junit_properties(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.pytester.runpytest("--jeval-config", str(p.suite()), "--junitxml", "junit.xml")
    tree = ET.parse(p.pytester.path / "junit.xml")
    cases = tree.findall(".//testcase")
    assert len(cases) == 10
    for case in cases:
        props = {e.get("name"): e.get("value") for e in case.findall("./properties/property")}
        assert {"record_id", "benchmark", "model", "score", "latency"} <= set(props)
        assert props["benchmark"] == "gsm8k" and props["model"] == "test-model"
        assert props["record_id"] in case.get("name", "")
    first = next(c for c in cases if "gsm8k-0]" in c.get("name", ""))
    props = {e.get("name"): e.get("value") for e in first.findall("./properties/property")}
    assert props["score"] == "1.0" and float(props["latency"]) > 0


def test_api_key_never_leaks(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite(model_extra="", head="")
    # a key written in the suite itself, in a failing run with tracebacks shown
    text = suite.read_text().replace('api_key_env = "JEVAL_TEST_KEY"', f'api_key = "{SECRET}"')
    suite.write_text(text)
    result = p.pytester.runpytest(
        "--jeval-config", str(suite), "--junitxml", "junit.xml", "-l", "-vv", "--tb=long", "-rA",
        "--log-level=DEBUG", "--log-file=run.log",
    )
    result.assert_outcomes(passed=6, failed=3, errors=1)
    outputs = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junit": (p.pytester.path / "junit.xml").read_text(),
        "log": (p.pytester.path / "run.log").read_text(),
    }
    for path in (p.pytester.path / "out").iterdir():
        if path.is_file():
            outputs[path.name] = path.read_text()
    for name, text in outputs.items():
        assert SECRET not in text, f"API key leaked into {name}"
    # the server did receive the key: the run really used it
    assert p.server.request_count >= 10


@pytest.mark.slow
def test_gates_decide_exit_status(jeval_project: JevalProject) -> None:
    p = jeval_project
    passing = p.suite(bench_extra="min_accuracy = 0.6", extra_run="max_error_rate = 0.2")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(passing))
    assert result.ret == 0  # samples failed, but the gates hold
    result.stdout.fnmatch_lines(["gates:", "*PASS gsm8k x test-model: min_accuracy >= 0.6 (measured 0.6667)*",
                                 "*PASS gsm8k x test-model: max_error_rate <= 0.2 (measured 0.1000)*"])
    failing = p.suite(bench_extra="min_accuracy = 0.9", name="strict.toml")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(failing))
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*FAIL gsm8k x test-model: min_accuracy >= 0.9 (measured 0.6667)*"])


@pytest.mark.slow
def test_without_gates_exit_status_follows_pytest(jeval_project: JevalProject) -> None:
    p = jeval_project
    assert p.pytester.runpytest_subprocess("--jeval-config", str(p.suite())).ret == 1
    assert p.pytester.runpytest_subprocess("--jeval-config", str(p.suite()), "-k", "gsm8k-0").ret == 0


def test_plugin_is_silent_without_a_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    lines = [ln for ln in result.outlines if not ln.startswith("plugins:")]
    assert not [ln for ln in lines if "jeval" in ln]
    assert not (pytester.path / "results").exists()


def test_output_option_overrides_run_output_dir(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.pytester.runpytest("--jeval-config", str(p.suite()), "--jeval-output", "elsewhere", "-k", "gsm8k-0")
    assert not (p.pytester.path / "out").exists()
    assert len(p.records(out="elsewhere")) == 1
    aggregate = json.loads((p.pytester.path / "elsewhere" / "summary.json").read_text())
    assert aggregate["runs"][0]["jsonl"] == "gsm8k_test-model.jsonl"


def test_rerun_replaces_only_what_ran(jeval_project: JevalProject) -> None:
    """A ``-k`` rerun replaces the records of the items it ran and keeps the others (docs/results.md)."""
    p = jeval_project
    suite = p.suite()
    p.pytester.runpytest("--jeval-config", str(suite))
    p.pytester.runpytest("--jeval-config", str(suite), "-k", "gsm8k-0")
    assert [r["record_id"] for r in p.records()] == [f"gsm8k-{i}" for i in range(10)]
