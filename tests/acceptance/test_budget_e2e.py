"""The run budget stops cleanly (issue 29, section 3), over real HTTP.

A run stopped by ``max_total_tokens`` (or ``max_cost_usd``) sends no call that could exceed it,
records the items it did not run as "budget exhausted" errors, says so, and exits 6; resumed
with a larger budget it ends with every item recorded once and the verdicts of an unbudgeted run.
A judge call counts too: refused, its item is an error, never a wrong answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_jeval.core.chat import BUDGET_EXHAUSTED
from tests.support.bench import serve
from tests.support.gsm import JevalProject, chat_requests

HEAD = "[defaults]\nmax_tokens = 64\n"


def aggregate(p: JevalProject, out: str = "out") -> dict[str, Any]:
    return json.loads((p.pytester.path / out / "summary.json").read_text())


@pytest.mark.slow
def test_a_run_stopped_by_the_budget_resumes_to_the_unbudgeted_verdicts(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing.clear()
    budgeted = p.suite(extra_run="max_total_tokens = 600\nmax_concurrency = 2", head=HEAD)
    first = p.pytester.runpytest_subprocess("--jeval-config", str(budgeted), "-p", "no:randomly")
    assert first.ret == 6, first.stdout.str()
    out = first.stdout.str()
    assert "the run budget is exhausted:" in out and "rerun with --jeval-resume" in out
    records = {r["record_id"]: r for r in p.records()}
    stopped = {rid for rid, r in records.items() if r["error"] is not None}
    assert 0 < len(stopped) < 10 and len(records) == 10
    assert all(BUDGET_EXHAUSTED in records[rid]["error"] and "max_total_tokens 600" in records[rid]["error"]
               for rid in stopped)
    assert len(chat_requests(p.server)) == 10 - len(stopped)  # a refused call is never sent
    summary = p.summary()
    assert summary["budget_exhausted"] == len(stopped) and summary["errors"] == len(stopped)
    budget = aggregate(p)["budget"]
    assert budget["exhausted"] is True and budget["items_stopped"] == len(stopped)
    sent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in records.values() if r["error"] is None)
    assert budget["spent_tokens"] == sent <= 600  # the calls that ran stayed within the budget

    p.server.reset_stats()
    resumed = p.pytester.runpytest_subprocess("--jeval-config", str(budgeted), "--jeval-resume",
                                              "--jeval-set", "run.max_total_tokens=100000", "-p", "no:randomly")
    assert resumed.ret == 1, resumed.stdout.str()  # wrong answers fail; the budget no longer stops anything
    assert p.server.request_count == len(stopped)  # only the stopped items ran again
    lines = (p.pytester.path / "out" / "gsm8k_test-model.jsonl").read_text().splitlines()
    ids = [json.loads(line)["record_id"] for line in lines]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 10  # every item recorded once
    assert "budget_exhausted" not in p.summary() and aggregate(p)["budget"]["exhausted"] is False

    unbudgeted = p.suite(name="free.toml", head=HEAD)
    p.pytester.runpytest_subprocess("--jeval-config", str(unbudgeted), "--jeval-output", "free", "--jeval-no-cache",
                                    "-p", "no:randomly")
    verdicts = {r["record_id"]: r["is_correct"] for r in p.records()}
    assert verdicts == {r["record_id"]: r["is_correct"] for r in p.records(out="free")}
    assert all(r["error"] is None for r in p.records())


def test_max_cost_usd_needs_a_known_price(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite(extra_run="max_cost_usd = 1.0")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*run.max_cost_usd: the cost of 'test-model' (models[[]0[]]) is unknown*"
                                 "set price_in_per_mtok and price_out_per_mtok on models[[]0[]]*"])
    assert p.server.request_count == 0


@pytest.mark.slow
def test_a_cost_budget_counts_dollars(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing.clear()
    # $1000 per million tokens both ways: a tenth of a cent per token, so $0.60 buys 600 tokens
    suite = p.suite(extra_run="max_cost_usd = 0.6\nmax_concurrency = 1", head=HEAD,
                    model_extra="price_in_per_mtok = 1000\nprice_out_per_mtok = 1000")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly")
    assert result.ret == 6
    budget = aggregate(p)["budget"]
    spent = sum(r["cost_usd"] for r in p.records() if r["error"] is None)
    assert budget["spent_usd"] == pytest.approx(spent) and spent <= 0.6
    assert 0 < budget["items_stopped"] < 10
    assert all("max_cost_usd 0.6" in r["error"] for r in p.records() if r["error"] is not None)


def test_a_refused_judge_call_makes_the_item_an_error(pytester: pytest.Pytester) -> None:
    answers = {"capital city of Australia": "It is Canberra.", "water boil": "Maybe 90 degrees.",
               "Mona Lisa": "I don't know.", "Mount Everest": "About 8,849 m.", "Starry Night": "1889"}

    def model(prompt: str) -> str:
        return next((a for key, a in answers.items() if key in prompt), "no idea")

    with serve(pytester, model, lambda prompt: "A") as p:
        suite = p.suite("simpleqa", "simpleqa/simple_qa_test_set.csv", run_extra="max_total_tokens = 3000")
        # every judge call may write 4000 tokens: more than the whole budget, so none is sent
        text = suite.read_text().replace('model = "judge-model"\n', 'model = "judge-model"\nmax_tokens = 4000\n')
        suite.write_text(text.replace("[run]", "[defaults]\nmax_tokens = 16\n\n[run]"))
        result = p.pytester.runpytest("--jeval-config", str(suite))
        assert result.ret == 6
        assert p.router.judge_prompts == []  # no judge call was sent
        records = p.records("simpleqa")
        assert len(p.router.model_prompts) == 5  # the model answered every question
        assert all(BUDGET_EXHAUSTED in r["error"] and r["is_correct"] is None for r in records.values())
        assert p.summary("simpleqa")["budget_exhausted"] == 5


@pytest.mark.slow
def test_xdist_workers_share_one_budget(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing.clear()
    suite = p.suite(extra_run="max_total_tokens = 600\nmax_concurrency = 2", head=HEAD)
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "-n", "2")
    assert result.ret == 6, result.stdout.str()
    records = p.records()
    sent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in records if r["error"] is None)
    budget = aggregate(p)["budget"]
    assert budget["spent_tokens"] == sent <= 600  # both workers wrote to the run's one ledger
    assert budget["items_stopped"] == sum(1 for r in records if r["error"] is not None) > 0
