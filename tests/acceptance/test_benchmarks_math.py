"""Math built-ins: math500 end to end on the real file, natural-reasoning judged against reference_answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_jeval.benchmarks import bench_natural_reasoning
from pytest_jeval.suite.dataset import load_samples
from tests.support.bench import DATA, serve
from tests.support.gsm import outcome_ids

# --------------------------------------------------------------------------- math500


def test_math500_subset_end_to_end(pytester: pytest.Pytester, test_data: Path) -> None:
    path = test_data / "math500" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    right = rows[:16]  # assorted answers: tuples, fractions, text, intervals, ...
    wrong = [r for r in rows[16:] if re.fullmatch(r"\d+", r["answer"])][:6]  # integer golds, answered off by one
    replies = {}
    for i, r in enumerate(right):
        ans = r["answer"]
        replies[r["problem"]] = [
            f"Working... so we get \\boxed{{{ans}}}.",
            f"Working... \\boxed{{{ans.replace(chr(92) + 'frac', chr(92) + 'dfrac')}}}",
            f"Final answer: the final answer is ${ans}$. I hope it is correct.",
        ][i % 3]
    for r in wrong:
        replies[r["problem"]] = f"So the answer is \\boxed{{{int(r['answer']) + 1}}}"

    def model(prompt: str) -> str:
        return next(text for problem, text in replies.items() if problem in prompt)

    ids = json.dumps([r["unique_id"] for r in right + wrong])
    with serve(pytester, model) as p:
        result = p.run("math500", str(path), extra=f"record_ids = {ids}", judge=False)
        result.assert_outcomes(passed=len(right), failed=len(wrong))
        assert outcome_ids(result, "failed") == {r["unique_id"] for r in wrong}
        records = p.records("math500")
        assert set(records) == {r["unique_id"] for r in right + wrong}  # ids are unique_id
        first = records[right[0]["unique_id"]]
        assert first["expected"] == right[0]["answer"] and first["subject"] == right[0]["subject"]
        summary = p.summary("math500")
        assert summary["accuracy"] == pytest.approx(len(right) / (len(right) + len(wrong)))
        assert set(summary["per_subject"]) == {r["subject"] for r in right + wrong}


# --------------------------------------------------------------------------- natural-reasoning

NR = DATA / "natural_reasoning" / "train.jsonl"


def verdict(correct: bool, extracted: str = "x") -> str:
    return f"extracted_final_answer: {extracted}\n\nreasoning: compared.\n\ncorrect: {'yes' if correct else 'no'}"


def test_natural_reasoning_loads_reference_answer_and_skips_rows_without() -> None:
    samples, skipped = load_samples(bench_natural_reasoning.BENCHMARK, files=[NR])
    assert skipped == 2  # null and empty reference_answer
    assert [s.id for s in samples] == ["natural-reasoning-0", "natural-reasoning-2", "natural-reasoning-4"]
    assert [s.target for s in samples] == ["80 km/h", "720", "The function is odd, since f(-x) = -f(x)."]


def test_natural_reasoning_schema_without_reference_answer_fails_loudly(tmp_path: Path) -> None:
    from pytest_jeval.suite.dataset import DatasetLoadError

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "answer": "a", "responses": []}) + "\n")
    with pytest.raises(DatasetLoadError, match="reference_answer"):
        load_samples(bench_natural_reasoning.BENCHMARK, files=[bad])


def test_natural_reasoning_judged_against_reference_answer(pytester: pytest.Pytester) -> None:
    answers = {"120 km": "Final answer: 80 km/h", "hexagon": "Final answer: 540", "x^3": "Final answer: odd"}

    def model(prompt: str) -> str:
        return next(a for k, a in answers.items() if k in prompt)

    def judge(prompt: str) -> str:
        # the judge sees the reply and the reference_answer; it says yes when they agree
        if "[correct_answer]: 80 km/h" in prompt and "80 km/h" in prompt.split("[response]:")[1]:
            return verdict(True, "80 km/h")
        if "[correct_answer]: 720" in prompt:
            return verdict(False, "540")
        if "[correct_answer]: The function is odd" in prompt:
            return "**extracted_final_answer:** odd\n**reasoning:** same\n**correct:** yes"
        return "???"

    with serve(pytester, model, judge) as p:
        result = p.run("natural-reasoning", "natural_reasoning/train.jsonl")
        result.assert_outcomes(passed=2, failed=1)
        assert outcome_ids(result, "failed") == {"natural-reasoning-2"}
        assert len(p.router.judge_prompts) == 3
        records = p.records("natural-reasoning")
        assert records["natural-reasoning-2"]["extracted"] == "540"
        assert records["natural-reasoning-0"]["scoring_metadata"]["method"] == "judge"
        assert p.summary("natural-reasoning")["skipped_rows"] == 2
