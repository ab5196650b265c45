"""Judges that must prove themselves before they gate (issue 29, section 5), over real HTTP.

``[judge] validate`` runs the judge on a gold set (six closed-QA items written below) before any
judged sample. A scripted judge that agrees with the gold labels passes, and its figures appear
in the summary of the benchmark it judged and in each verdict's record; a judge that says "Yes"
to everything (accuracy 0.5, Cohen's kappa 0) stops the run before any sample, naming its kappa
and the floor. ``judge_repeats`` asks the judge each question again and reports how often it
agrees with itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.bench import JUDGE, Project, serve

#: (task, submission, gold): does the submission answer the task correctly?
GOLD = [
    ("What is the capital of France?", "The capital of France is Paris.", True),
    ("What is the capital of France?", "The capital of France is Berlin.", False),
    ("How many days are in a week?", "A week has seven days.", True),
    ("How many days are in a week?", "A week has ten days.", False),
    ("What is 2 + 2?", "2 + 2 = 4.", True),
    ("What is 2 + 2?", "2 + 2 = 5.", False),
]
TRUTH = {submission: gold for _, submission, gold in GOLD}
ANSWERS = {"capital city of Australia": "It is Canberra.", "water boil": "Maybe 90 degrees.",
           "Mona Lisa": "I don't know.", "Mount Everest": "About 8,849 m.", "Starry Night": "1889"}


def model(prompt: str) -> str:
    return next((a for key, a in ANSWERS.items() if key in prompt), "no idea")


def grade(prompt: str) -> str:
    """The SimpleQA grader's letter: Canberra and 1889 are right, the rest wrong."""
    predicted = prompt.rsplit("Predicted answer:", 1)[1]
    return "A" if "Canberra" in predicted or "1889" in predicted else "B"


def honest_judge(prompt: str) -> str:
    if "[Submission]:" in prompt:  # the gate's closed-QA question
        submission = prompt.split("[Submission]: ", 1)[1].split("\n", 1)[0]
        return "Checked.\nYes" if TRUTH[submission] else "Checked.\nNo"
    return grade(prompt)


def yes_judge(prompt: str) -> str:
    return "Yes" if "[Submission]:" in prompt else grade(prompt)


def gated_suite(p: Project, gold: Path, judge_keys: str, *, extra: str = "", run_extra: str = "") -> Path:
    suite = p.suite("simpleqa", "simpleqa/simple_qa_test_set.csv", extra=extra, run_extra=run_extra)
    text = suite.read_text().replace(f'model = "{JUDGE}"\n', f'model = "{JUDGE}"\nvalidate = "{gold}"\n{judge_keys}\n')
    suite.write_text(text)
    return suite


@pytest.fixture
def gold(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "gold" / "qa.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"id": f"g{i}", "input": task, "output": submission, "gold": label}) + "\n"
                            for i, (task, submission, label) in enumerate(GOLD)))
    return path


def gate_prompts(prompts: list[str]) -> list[str]:
    return [t for t in prompts if "[Submission]:" in t]


def test_a_judge_that_agrees_with_the_gold_set_passes_and_its_figures_are_reported(
        pytester: pytest.Pytester, gold: Path) -> None:
    with serve(pytester, model, honest_judge) as p:
        suite = gated_suite(p, gold, "min_kappa = 0.6\nmin_accuracy = 0.9")
        text = suite.read_text().replace("cache = false", "cache = true")
        suite.write_text(text)
        result = p.pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=2, failed=3)
        assert len(gate_prompts(p.router.judge_prompts)) == 6  # the gate asked first, once per gold item
        judged = p.summary("simpleqa")["judged_by"]
        assert (judged["verdicts"], judged["validated"], judged["models"]) == (5, 5, {JUDGE: 5})
        (validation,) = judged["validations"]
        assert validation["source"] == str(gold) and validation["evaluator"] == "closed_qa"
        assert (validation["n"], validation["errors"], validation["judge_model"]) == (6, 0, JUDGE)
        assert validation["accuracy"] == 1.0 and validation["cohen_kappa"] == pytest.approx(1.0)
        assert validation["ece"] is not None
        records = p.records("simpleqa")
        assert {r["judge"]["validation"]["id"] for r in records.values()} == {validation["id"]}
        result.stdout.fnmatch_lines([f"judge: simpleqa x test-model: 5 of 5 verdicts by {JUDGE}, validated on "
                                     f"{gold} (closed_qa, 6 items): accuracy 1.000, kappa 1.000, ECE *"])
        p.router.judge_prompts.clear()
        again = p.pytester.runpytest("--jeval-config", str(suite))  # the gate's calls come from the cache
        again.assert_outcomes(passed=2, failed=3)
        assert gate_prompts(p.router.judge_prompts) == []


def test_a_judge_below_the_floor_stops_the_run_before_any_judged_sample(
        pytester: pytest.Pytester, gold: Path) -> None:
    with serve(pytester, model, yes_judge) as p:
        suite = gated_suite(p, gold, "min_kappa = 0.6")
        result = p.pytester.runpytest("--jeval-config", str(suite))
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([
            f"*the judge '{JUDGE}' failed its validation on '{gold}' (closed_qa): kappa 0.000 is below min_kappa "
            "0.6. Measured: accuracy 0.500, Cohen's kappa 0.000, ECE * over 6 gold items (0 errored). No judged "
            "sample was sent."])
        assert p.router.model_prompts == []  # not one sample was asked
        assert len(p.router.judge_prompts) == 6
        assert not (p.pytester.path / "out" / "simpleqa_test-model.jsonl").exists()


def test_gate_settings_are_checked_before_anything_runs(pytester: pytest.Pytester, gold: Path) -> None:
    with serve(pytester, model, honest_judge) as p:
        cases: list[tuple[str, str]] = [
            ('validate_evaluator = "exact_match"', "*judge.validate_evaluator: the evaluator 'exact_match' asks no "
                                                   "model, so it cannot validate the judge*"),
            ('validate_evaluator = "nope"', "*judge.validate_evaluator: *unknown evaluator*'nope'*"),
        ]
        for keys, message in cases:
            result = p.pytester.runpytest("--jeval-config", str(gated_suite(p, gold, keys)))
            assert result.ret == pytest.ExitCode.USAGE_ERROR
            result.stderr.fnmatch_lines([message])
        missing = gated_suite(p, pytester.path / "absent.jsonl", "")
        result = p.pytester.runpytest("--jeval-config", str(missing))
        result.stderr.fnmatch_lines(["*judge.validate: '*absent.jsonl' is neither the key of a [[][[]benchmarks[]][]] "
                                     "entry with evaluator = ... nor a gold file*"])
        assert p.server.request_count == 0


def test_judge_repeats_report_the_judges_self_consistency(pytester: pytest.Pytester) -> None:
    asked: dict[str, int] = {}

    def flaky_judge(prompt: str) -> str:
        """Right about Canberra every time; about 1889 only on the first ask of each question."""
        predicted = prompt.rsplit("Predicted answer:", 1)[1]
        asked[predicted] = asked.get(predicted, 0) + 1
        if "Canberra" in predicted:
            return "A"
        if "1889" in predicted:
            return "A" if asked[predicted] == 1 else "B"
        return "B"

    with serve(pytester, model, flaky_judge) as p:
        suite = p.suite("simpleqa", "simpleqa/simple_qa_test_set.csv", extra="judge_repeats = 3",
                        run_extra="max_concurrency = 1")
        result = p.pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=2, failed=3)  # the first ask decides
        assert len(p.router.judge_prompts) == 5 * 3
        records = p.records("simpleqa")
        assert records["simpleqa-0"]["judge_verdicts"] == [True, True, True]
        assert records["simpleqa-4"]["judge_verdicts"] == [True, False, False]
        assert records["simpleqa-1"]["judge_verdicts"] == [False, False, False]
        assert records["simpleqa-4"]["judge"] == {"model": JUDGE, "repeats": 3}
        summary: dict[str, Any] = p.summary("simpleqa")["judge_repeats"]
        assert (summary["items"], summary["judge_repeats"], summary["split"]) == (5, 3, ["simpleqa-4"])
        assert summary["unanimous"] == pytest.approx(4 / 5)
        assert summary["agreement"] == pytest.approx((4 + 1 / 3) / 5)  # one of three pairs agrees on item 4
        result.stdout.fnmatch_lines(["judge repeats: simpleqa x test-model: 5 verdicts asked 3 times; agreement "
                                     "0.867, unanimous 0.800"])


def test_judge_repeats_need_a_replayable_judge(pytester: pytest.Pytester) -> None:
    with serve(pytester, model, honest_judge) as p:
        result = p.run("gsm8k", "gsm8k/test.jsonl", extra="judge_repeats = 2\nmax_samples = 2")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*benchmarks[[]0[]].judge_repeats: 'gsm8k' is not scored by a judge whose "
                                     "verdicts can be replayed*"])
