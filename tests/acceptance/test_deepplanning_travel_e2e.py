"""deepplanning travel through the plugin: a scripted model plans with the travel tools over the case's
database and writes a plan; the [judge] converts it to JSON; the constraint checks score it. A plan that
passes every check is correct (case_acc 1); one that breaks a check fails with that check as a reason; a
converter reply that holds no JSON is unscored; no plan is a zero (not delivered); nop scores 0; the
oracle is refused with the reason; bad input is a usage error naming the file."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "deepplanning" / "travelplanning"
PLAN = json.loads((TEST_DATA / "deepplanning" / "travel_plan_id_0.json").read_text())
PLAN_TEXT = "<plan>Day 1:\nCurrent City: from Hefei to Nanjing\n... (the Markdown plan) ...</plan>"


def run(pytester: pytest.Pytester, key: str = "", data_dir: str = str(DATA), base_url: str = "http://127.0.0.1:9/v1",
        judge_url: str | None = None, out: str = "out") -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    judge = f'[judge]\nmodel = "judge"\nbase_url = "{judge_url}"\n' if judge_url else ""
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "{out}"
        cache = false

        [[models]]
        name = "m"
        base_url = "{base_url}"

        [[benchmarks]]
        name = "deepplanning"
        data_dir = "{data_dir}"
        {key}

        [benchmarks.options]
        domain = "travel"
    """) + judge)
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    path = pytester.path / out / "deepplanning_m.jsonl"
    records = {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())} if path.exists() else {}
    return result, records


def converter(plans: dict[str, Any]) -> Any:
    """The judge: the JSON of the plan whose marker is in the plan text it is given (else not JSON)."""
    def respond(body: dict[str, Any], attempt: int) -> str:
        text = body["messages"][-1]["content"]
        for marker, plan in plans.items():
            if marker in text:
                return f"<JSON>{json.dumps(plan)}</JSON>"
        return "I cannot parse this plan."
    return respond


def test_a_plan_is_converted_and_checked(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    broken = json.loads(json.dumps(PLAN))
    broken["daily_plans"][0]["activities"][5]["details"]["name"] = "Confucius Temple"  # skips a must-visit
    scripts = {
        "from Hefei to Nanjing": [
            tool_answer(ToolCallSpec("query_train_info", {"origin": "Hefei", "destination": "Nanjing",
                                                          "depDate": "2025-11-12"})),
            tool_answer(ToolCallSpec("query_hotel_info", {"destination": "Nanjing", "checkinDate": "2025-11-12",
                                                          "checkoutDate": "2025-11-13", "hotelStar": "3"})),
            tool_answer(ToolCallSpec("search_location", {"place_name": "Laomendong"})),
            tool_answer(ToolCallSpec("recommend_restaurants", {"latitude": "32.013276", "longitude": "118.781209"})),
            PLAN_TEXT.replace("...", "GOOD PLAN")],
        "from Shanghai to Beijing": ["<plan>Day 1: Shanghai to Beijing, UNPARSABLE</plan>"],
    }
    with FakeOpenAIServer(script_responder(scripts)) as model, FakeOpenAIServer(converter({"GOOD PLAN": PLAN})) as judge:
        result, records = run(pytester, base_url=model.base_url, judge_url=judge.base_url)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the unscored case fails its item, the good one passes
    result.assert_outcomes(passed=1, failed=1)
    good = records["travel-en-id_0"]
    assert good["is_correct"] is True and good["score"] == 1.0
    meta = good["scoring_metadata"]
    assert meta["case_acc"] == 1.0 and meta["failed_constraints"] == [] and meta["delivered"] is True
    assert meta["deviations"] and meta["converter_model"] == "judge"
    # the tools answered from the case's own database
    trajectories = (pytester.path / "out" / "deepplanning_m.jsonl.trajectories.jsonl").read_text().splitlines()
    trajectory = next(t for t in map(json.loads, trajectories) if t.get("record_id") == "travel-en-id_0")
    results = {c["name"]: c["result"] for c in trajectory["tool_calls"]}
    assert "G7798" in results["query_train_info"] and "G3031" not in results["query_train_info"]
    assert "Orange Hotel Nanjing" in results["query_hotel_info"]
    assert json.loads(results["search_location"])["latitude"] == "32.013276"
    assert "Six Dynasties Teahouse" in results["recommend_restaurants"]
    # the converter got the plan inside <plan></plan>, nothing else
    asked = [r["body"] for r in judge.requests if r["path"].endswith("/chat/completions")]
    assert any(b["messages"][-1]["content"].startswith("Day 1:\nCurrent City: from Hefei") for b in asked)
    unparsable = records["travel-en-id_1"]
    assert unparsable["is_correct"] is None
    assert unparsable["scoring_metadata"]["unscored_reason"] == \
        "the converter's reply held no JSON plan after 3 attempts"
    summary = json.loads((pytester.path / "out" / "deepplanning_m.jsonl.summary.json").read_text())
    travel = summary["travel"]
    assert travel["scored_cases"] == 1 and travel["unscored_cases"] == 1 and travel["case_acc"] == 1.0
    assert "shopping" not in summary

    # the same case with a plan that skips a must-visit attraction: that check fails, with its reason
    scripts["from Hefei to Nanjing"] = ["<plan>BROKEN PLAN</plan>"]
    with FakeOpenAIServer(script_responder(scripts)) as model, \
            FakeOpenAIServer(converter({"BROKEN PLAN": broken})) as judge:
        _, records = run(pytester, base_url=model.base_url, judge_url=judge.base_url, out="out2")
    meta = records["travel-en-id_0"]["scoring_metadata"]
    assert records["travel-en-id_0"]["is_correct"] is False
    assert meta["personalized_score"] == 0.0 and meta["case_acc"] == 0.0
    assert meta["composite_score"] == meta["commonsense_score"] / 2
    failed = {f["check"]: f for f in meta["failed_constraints"]}
    assert failed["attraction_must_visit_named"]["kind"] == "hard"
    assert failed["attraction_must_visit_named"]["reason"] == \
        "Missing attractions (attraction_must_visit_named): Laomendong"
    # the detour also breaks the transfer times around it (a commonsense check, with its reason)
    assert failed["reasonable_transfer_time"]["kind"] == "commonsense"
    assert "Orange Hotel Nanjing->Confucius Temple" in failed["reasonable_transfer_time"]["reason"]

    # jeval rescore recomputes the checks from the stored plan and gives the same file
    from pytest_jeval.cli import main

    source, target = pytester.path / "out" / "deepplanning_m.jsonl", pytester.path / "rescored.jsonl"
    capsys.readouterr()
    assert main(["rescore", str(source), "-o", str(target)]) == 0
    assert "0 verdicts changed" in capsys.readouterr().out


@pytest.mark.slow
def test_no_plan_is_a_zero_nop_scores_zero_and_no_judge_is_unscored(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(script_responder({"Hefei": ["I would rather not plan this."]})) as model:
        _, records = run(pytester, base_url=model.base_url, judge_url=model.base_url)
    undelivered = records["travel-en-id_0"]
    assert undelivered["is_correct"] is False and undelivered["scoring_metadata"]["delivered"] is False
    assert undelivered["scoring_metadata"]["failed_constraints"][0]["check"] == "plan_delivered"
    _, records = run(pytester, 'agent = "nop"', out="nop")
    assert len(records) == 2 and all(r["is_correct"] is False and r["score"] == 0.0 for r in records.values())
    summary = json.loads((pytester.path / "nop" / "deepplanning_m.jsonl.summary.json").read_text())
    assert summary["travel"]["case_acc"] == 0.0 and summary["travel"]["delivery_rate"] == 0.0
    with FakeOpenAIServer(script_responder({"Hefei": ["<plan>a plan</plan>"]})) as model:
        _, records = run(pytester, base_url=model.base_url, out="nojudge")
    assert records["travel-en-id_0"]["is_correct"] is None
    assert "needs a [judge]" in records["travel-en-id_0"]["scoring_metadata"]["unscored_reason"]


def test_the_oracle_is_refused_with_the_reason(pytester: pytest.Pytester) -> None:
    _, records = run(pytester, 'agent = "oracle"')
    assert all(r["is_correct"] is None for r in records.values())
    assert all("no gold plan" in (r.get("error") or "") for r in records.values()), records


@pytest.mark.parametrize(("breakage", "message"), [
    ("query", "*deepplanning: */travelplanning_query_en.json case #0 is malformed*"),
    ("csv", "*deepplanning: */id_1/hotels/hotels.csv is malformed*"),
])
def test_bad_input_is_a_usage_error_naming_the_file(pytester: pytest.Pytester, breakage: str, message: str) -> None:
    import shutil

    copy = pytester.path / "copy"
    shutil.copytree(DATA, copy)
    if breakage == "query":
        (copy / "data" / "travelplanning_query_en.json").write_text('[{"id": "0"}]')
    else:
        (copy / "database" / "database_en" / "id_1" / "hotels" / "hotels.csv").write_bytes(b"name,price\n\xff\xfe,1\n")
    result, records = run(pytester, data_dir=str(copy))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not records
