"""End to end through pytester: judge benchmarks against a server with chosen verdicts and logprobs.

Every expected number below is worked out by hand from the scripted verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from pytest_jeval import metrics
from pytest_jeval.judge_bench.summary import AUTO_ACCEPT, ECE_BINS, REVIEW_HIGH, REVIEW_LOW
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.judging import (
    KEY,
    Fault,
    JudgeScript,
    SuiteRun,
    chat_bodies,
    fixed,
    run_suite,
    suite_text,
    verdict_answer,
    write_gold,
)


def YES_NO(p_yes: float) -> list[tuple[str, float]]:
    """Top alternatives of a Yes/No verdict token."""
    return [("Yes", p_yes), ("No", 1 - p_yes)]


def _boolean_rows() -> list[dict[str, Any]]:
    golds = [True, True, True, True, False, False, False, False, True, True, False, False]
    return [{"id": f"q{i}", "input": f"Question number {i:02d}?", "output": f"Answer number {i:02d}.",
             "criteria": "Correct.", "gold": g} for i, g in enumerate(golds)]


def _script_boolean(s: JudgeScript) -> None:
    s.add("Question number 00", fixed(verdict_answer("Looks right.\n", "Yes", YES_NO(0.95))))
    s.add("Question number 01", fixed(verdict_answer("", "Yes", YES_NO(0.85))))
    s.add("Question number 02", fixed(verdict_answer("Hmm.\n", "Yes", YES_NO(0.55))))
    s.add("Question number 03", fixed(verdict_answer("", "No", YES_NO(0.32))))
    s.add("Question number 04", fixed(verdict_answer("", "No", YES_NO(0.05))))
    s.add("Question number 05", fixed(verdict_answer("", "No", YES_NO(0.45))))
    s.add("Question number 06", fixed(verdict_answer("", "Yes", YES_NO(0.92))))
    s.add("Question number 07", fixed(verdict_answer("Verdict: ", "No", None)))  # endpoint gives no logprobs
    # variants " Yes." and "yes" fold into Yes: mass 0.6 + 0.2 = 0.8 vs No 0.1 -> P(Yes) = 0.8 / 0.9
    variants = [(" Yes.", 0.6), ("yes", 0.2), (" No", 0.1), (" maybe", 0.1)]
    s.add("Question number 08", fixed(verdict_answer("No doubt:", " Yes.", variants)))
    s.add("Question number 09", fixed("I cannot judge this."))  # outside the labels: unscored
    s.add("Question number 10", fixed(verdict_answer("", "Yes", [("Yes", 0.2), ("No", 0.1), ("Hmm", 0.7)])))  # low mass
    s.add("Question number 11", fixed(Fault("500")))  # endpoint error


# (record, gold, predicted, probability, correct); q7: no probability, q9: unscored, q11: error
EXPECTED = {
    "q0": (True, True, 0.95, True), "q1": (True, True, 0.85, True), "q2": (True, True, 0.55, True),
    "q3": (True, False, 0.68, False), "q4": (False, False, 0.95, True), "q5": (False, False, 0.55, True),
    "q6": (False, True, 0.92, False), "q7": (False, False, None, True), "q8": (True, True, 0.8 / 0.9, True),
    "q10": (False, True, 2 / 3, False),
}


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SuiteRun, list[dict[str, Any]]]]:
    """One suite run with a boolean benchmark (qa) and a 0-4 benchmark with repeats (rubric)."""
    folder: Path = tmp_path_factory.mktemp("judge-e2e")
    script = JudgeScript()
    _script_boolean(script)
    for i in range(6):
        script.add(f"Rubric task {i}", _score_rule(i))
    write_gold(folder, "qa.jsonl", _boolean_rows())
    write_gold(folder, "rubric.jsonl", _score_rows())
    with FakeOpenAIServer(script, api_key=KEY, models=("judge-model",)) as server:
        run = run_suite(folder, suite_text(
            server.base_url,
            'name = "qa"\nevaluator = "closed_qa"\ndata_files = "qa.jsonl"',
            'name = "rubric"\nevaluator = "llm_judge"\ndata_files = "rubric.jsonl"\nrepeats = 3',
        ))
        bodies = chat_bodies(server)
    assert run.ret == 1
    yield run, bodies


def test_boolean_judge_records_and_every_metric(e2e: tuple[SuiteRun, list[dict[str, Any]]]) -> None:
    run, bodies = e2e
    passed, failed = "PASSED", "FAILED"
    assert run.outcomes("qa") == {
        "q0": passed, "q1": passed, "q2": passed, "q3": failed, "q4": passed, "q5": passed, "q6": failed,
        "q7": passed, "q8": passed, "q9": failed, "q10": failed, "q11": "ERROR",
    }
    recs = run.by_id("qa")
    for rid, (gold, predicted, prob, correct) in EXPECTED.items():
        r = recs[rid]
        assert (r["gold"], r["predicted"], r["is_correct"]) == (gold, predicted, correct), rid
        assert r["case_kind"] == "boolean" and r["scale"] is None and r["tolerance"] == 0
        if prob is None:
            assert r["probability"] is None and r["probability_source"] == "no_logprobs"
        else:
            assert r["probability"] == pytest.approx(prob) and r["probability_source"] == "logprobs"
    assert recs["q8"]["allowed_mass"] == pytest.approx(0.9) and recs["q8"]["low_mass"] is False
    assert recs["q10"]["allowed_mass"] == pytest.approx(0.3) and recs["q10"]["low_mass"] is True
    assert recs["q3"]["p_positive"] == pytest.approx(0.32)
    unscored = recs["q9"]
    assert unscored["is_correct"] is None and unscored["unscored"] is True and unscored["predicted"] is None
    assert unscored["probability"] is None and unscored["probability_source"] == "unscored"
    assert unscored["raw_replies"] == ["I cannot judge this."]
    assert "none of the labels" in unscored["scoring_metadata"]["unscored_reason"]
    assert recs["q11"]["error"] is not None and "case_kind" not in recs["q11"]

    s = run.summary("qa")
    assert (s["total_samples"], s["errors"], s["unscored"], s["correct"]) == (12, 1, 1, 7)
    assert s["accuracy"] == pytest.approx(7 / 11)  # errors leave the denominator, unscored counts as wrong
    assert s["accuracy_ci"] == pytest.approx(list(metrics.wilson_interval(7, 11)))
    assert s["tolerance"] == 0 and s["n_judged"] == 10 and s["n_with_probability"] == 9
    # gold rows [T, F] x predicted columns [T, F]
    assert s["confusion_matrix"]["labels"] == [True, False]
    assert s["confusion_matrix"]["matrix"] == [[4, 1], [2, 3]]
    assert s["f1_average"] == "binary"
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((4 / 6, 4 / 5, 8 / 11))
    assert s["cohen_kappa"] == pytest.approx((0.7 - 0.5) / 0.5)
    assert s["mae"] is None and s["signed_mean_error"] is None
    probs = [0.95, 0.85, 0.55, 0.68, 0.95, 0.55, 0.92, 0.8 / 0.9, 2 / 3]
    hits = [1, 1, 1, 0, 1, 1, 0, 1, 0]
    assert s["brier"] == pytest.approx(sum((q - y) ** 2 for q, y in zip(probs, hits)) / 9)
    # bins (right-closed, width 0.1): 0.9-1 {.95,.95,.92 | 1,1,0}, 0.8-0.9 {.85,.889 | 1,1},
    # 0.6-0.7 {.68,.667 | 0,0}, 0.5-0.6 {.55,.55 | 1,1}
    ece = (abs(2 - 2.82) + abs(2 - (0.85 + 0.8 / 0.9)) + abs(0 - (0.68 + 2 / 3)) + abs(2 - 1.1)) / 9
    assert s["ece"] == pytest.approx(ece) and s["ece_bins"] == 10
    counts = [b["count"] for b in s["reliability"]]
    assert counts == [0, 0, 0, 0, 0, 2, 2, 0, 2, 3]
    assert s["reliability"][9]["observed_rate"] == pytest.approx(2 / 3)
    assert s["reliability"][0]["mean_confidence"] is None
    assert s["routing"]["auto_accept"] == pytest.approx({"threshold": 0.9, "n": 3, "coverage": 3 / 11, "accuracy": 2 / 3})
    review = dict(s["routing"]["human_review"])
    assert review.pop("range") == [0.4, 0.6]
    assert review == pytest.approx({"n": 2, "coverage": 2 / 11, "accuracy": 1.0})
    assert s["low_mass_count"] == 1 and s["consistency"] is None
    # run 0 reuses nothing (the prefetch had no logprobs): one prefetch + one logprobs call per answered item
    qa_bodies = [b for b in bodies if "Question number" in b["messages"][-1]["content"]]
    assert sum(1 for b in qa_bodies if b.get("logprobs")) >= 11
    assert all(b.get("top_logprobs") == 10 for b in qa_bodies if b.get("logprobs"))


def _score_rows() -> list[dict[str, Any]]:
    golds = [4, 3, 2, 1, 0, 4]
    return [{"id": f"r{i}", "input": f"Rubric task {i}", "output": f"Response {i}", "criteria": "Be helpful.",
             "gold": g} for i, g in enumerate(golds)]


# per item: the level answered on attempts 1, 2, 3 (repeats 0, 1, 2) and the distribution of repeat 0
REPEATS = {0: [4, 4, 4], 1: [2, 2, 3], 2: [2, 2, 2], 3: [3, 1, 3], 4: [0, 0, 0], 5: [1, 1, 1]}
DISTS = {0: {"4": 0.7, "3": 0.2, "0": 0.1}, 1: {"2": 0.5, "3": 0.3, "1": 0.2}, 2: {"2": 1.0},
         3: {"3": 0.6, "4": 0.4}, 4: {"0": 0.9, "1": 0.1}, 5: {"1": 0.8, "4": 0.2}}


def _score_rule(i: int) -> Any:
    def rule(body: dict[str, Any], prompt: str, attempt: int) -> Any:
        level = str(REPEATS[i][min(attempt, 3) - 1])
        dist = DISTS[i] if attempt == 1 else {level: 1.0}
        alts = [(k, v) for k, v in dist.items()]
        return verdict_answer("Considering the rubric, I rate it\n", level, alts)
    return rule


def test_score_judge_with_repeats(e2e: tuple[SuiteRun, list[dict[str, Any]]]) -> None:
    run, bodies = e2e
    predicted = [4, 2, 2, 3, 0, 1]
    gold = [4, 3, 2, 1, 0, 4]
    within = [abs(a - b) <= 1 for a, b in zip(predicted, gold)]
    assert run.outcomes("rubric") == {f"r{i}": "PASSED" if ok else "FAILED" for i, ok in enumerate(within)}
    recs = run.by_id("rubric")
    assert recs["r0"]["scale"] == [0, 4] and recs["r0"]["tolerance"] == 1
    assert recs["r0"]["expected_level"] == pytest.approx(4 * 0.7 + 3 * 0.2)
    assert recs["r0"]["probability"] == pytest.approx(0.9)  # P(level within one of 4)
    assert recs["r1"]["probability"] == pytest.approx(1.0)  # levels 1..3 all within one of 2
    assert recs["r3"]["repeat_predictions"] == [3, 1, 3]
    s = run.summary("rubric")
    assert s["accuracy"] == pytest.approx(4 / 6) and s["tolerance"] == 1
    assert s["mae"] == pytest.approx(1.0) and s["signed_mean_error"] == pytest.approx(-2 / 6)
    assert s["kappa_weights"] == "quadratic"
    assert s["cohen_kappa"] == pytest.approx(cohen_kappa_score(gold, predicted, labels=[0, 1, 2, 3, 4], weights="quadratic"))
    assert s["confusion_matrix"]["labels"] == [0, 1, 2, 3, 4]
    assert s["confusion_matrix"]["matrix"][4] == [0, 1, 0, 0, 1]  # gold 4 -> predicted 1 and 4
    assert s["consistency"] == pytest.approx(14 / 18) and s["consistency_items"] == 6
    expected_levels = [3.4, 2.1, 2.0, 3.4, 0.1, 1.6]
    assert s["mae_expected_level"] == pytest.approx(sum(abs(e - g) for e, g in zip(expected_levels, gold)) / 6)
    # repeats use nonce k: three logprobs requests per item reach the server (the cache does not collapse them)
    logprob_calls = [b for b in bodies if b.get("logprobs") and "Rubric task" in b["messages"][-1]["content"]]
    assert len(logprob_calls) == 18


def _recompute(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every judge summary metric recomputed from JSONL records with the documented rules."""
    base = [r for r in records if r.get("error") is None]
    judged = [r for r in base if r.get("case_kind") and r.get("predicted") is not None]
    head = next(r for r in records if r.get("case_kind"))
    kind, labels = head["case_kind"], head["labels"]
    pred, gold = [r["predicted"] for r in judged], [r["gold"] for r in judged]
    n, correct = len(base), sum(1 for r in base if r["is_correct"] is True)
    out: dict[str, Any] = {"accuracy": correct / n, "accuracy_ci": list(metrics.wilson_interval(correct, n)),
                           "tolerance": head["tolerance"], "n_judged": len(judged)}
    matrix, order = metrics.confusion_matrix(pred, gold, labels=labels)
    out["confusion_matrix"] = {"labels": order, "matrix": matrix.tolist(), "rows": "gold", "columns": "predicted"}
    prf = metrics.precision_recall_f1(pred, gold, positive=True) if kind == "boolean" else \
        metrics.precision_recall_f1(pred, gold, average="macro")
    out["precision"], out["recall"], out["f1"] = prf
    out["cohen_kappa"] = metrics.cohen_kappa(gold, pred, labels=labels, weights="quadratic" if kind == "score" else None)
    if kind == "score":
        out["mae"] = metrics.mean_absolute_error(pred, gold)
        out["rmse"] = metrics.root_mean_squared_error(pred, gold)
        out["signed_mean_error"] = metrics.signed_mean_error(pred, gold)
    cal = [r for r in judged if r["probability"] is not None]
    probs, hits = [r["probability"] for r in cal], [int(r["is_correct"] is True) for r in cal]
    if cal:
        out["ece"] = metrics.expected_calibration_error(probs, hits, n_bins=ECE_BINS)
        out["reliability"] = metrics.reliability_bins(probs, hits, n_bins=ECE_BINS)
        out["brier"] = metrics.brier_score(probs, hits)
    rows = [r["repeat_predictions"] for r in base if r.get("repeat_predictions") and None not in r["repeat_predictions"]]
    if rows:
        out["consistency"] = metrics.consistency([list(col) for col in zip(*rows)])
    auto = [r for r in base if r["probability"] is not None and r["probability"] >= AUTO_ACCEPT]
    review = [r for r in base if r["probability"] is not None and REVIEW_LOW <= r["probability"] <= REVIEW_HIGH]
    for name, chosen in (("auto_accept", auto), ("human_review", review)):
        out[f"{name}.coverage"] = len(chosen) / n
        out[f"{name}.accuracy"] = sum(r["is_correct"] is True for r in chosen) / len(chosen) if chosen else None
    return out


def _approx_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_approx_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_approx_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


@pytest.mark.parametrize("benchmark", ["qa", "rubric"])
def test_summary_recomputes_from_jsonl(e2e: tuple[SuiteRun, list[dict[str, Any]]], benchmark: str) -> None:
    run, _ = e2e
    summary, again = run.summary(benchmark), _recompute(run.records(benchmark))
    for key, value in again.items():
        if "." in key:
            block, field = key.split(".")
            assert _approx_equal(summary["routing"][block][field], value), key
        else:
            assert _approx_equal(summary[key], value), key
    assert summary["accuracy"] == summary["correct"] / (summary["total_samples"] - summary["errors"])
