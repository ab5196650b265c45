"""Judge-scored built-ins: simpleqa, hle, frames, wildchat, gaia.

One fake server answers as the model (``test-model``) and as the judge
(``judge-model``), with known verdicts, so each test knows what every sample
must score.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from pytest_jeval.benchmarks import bench_gaia, bench_hle, bench_wildchat
from pytest_jeval.scoring.llm_judge.prompts import (
    parse_pairwise_verdict,
    parse_simpleqa_grade,
    parse_structured_verdict,
)
from pytest_jeval.suite.dataset import load_samples
from tests.support.bench import DATA, serve
from tests.support.gsm import outcome_ids


def keyed(table: dict[str, str], default: str = "no idea") -> Callable[[str], str]:
    """Answer with the value of the first key found in the prompt."""

    def answer(prompt: str) -> str:
        return next((v for k, v in table.items() if k in prompt), default)

    return answer


# --------------------------------------------------------------------------- verdict parsers


@pytest.mark.parametrize("text, grade", [
    ("A", "CORRECT"), ("B", "INCORRECT"), ("C", "NOT_ATTEMPTED"), ("**B**", "INCORRECT"), ("C.", "NOT_ATTEMPTED"),
    ("NOT_ATTEMPTED", "NOT_ATTEMPTED"), ("The grade is INCORRECT.", "INCORRECT"), ("Grade: A", "CORRECT"),
    ("The answer contradicts the target.\nB", "INCORRECT"), ("Because it contradicts the target, B", None),
    ("", None), ("I cannot grade this.", None), ("CORRECT or INCORRECT, hard to say", None),
])
def test_simpleqa_grade_parser(text: str, grade: str | None) -> None:
    assert parse_simpleqa_grade(text) == grade


@pytest.mark.parametrize("text, correct", [
    ("extracted_final_answer: 5\nreasoning: matches\ncorrect: yes", True),
    ("extracted_final_answer: 6\nreasoning: the [correct_answer] is 5\ncorrect: no", False),
    ("**correct:** Yes", True),
    ("correct: no\n... on reflection ...\ncorrect: yes", True),  # the last line counts
    ("The answer is TRUE", True), ("FALSE", False),
    ("TRUE or FALSE?", None), ("looks right to me", None), ("[correct_answer]: yes", None),
])
def test_structured_verdict_parser(text: str, correct: bool | None) -> None:
    assert parse_structured_verdict(text).correct is correct


@pytest.mark.parametrize("text, verdict", [
    ("My final verdict is tie: [[A=B]]", "A=B"), ("[[B>>A]]", "B>>A"), ("[[A>B]] ... so [[A>B]]", "A>B"),
    ("either [[A>B]] or [[B>A]]", None), ("A is better", None), ("[[A<<B]]", None),
])
def test_pairwise_verdict_parser(text: str, verdict: str | None) -> None:
    assert parse_pairwise_verdict(text) == verdict


# --------------------------------------------------------------------------- simpleqa

SIMPLEQA_MODEL = {
    "capital city of Australia": "It is Canberra.",
    "water boil": "Maybe 90 degrees.",
    "Mona Lisa": "I don't know.",
    "Mount Everest": "About 8,849 m.",
    "Starry Night": "1889",
}


def simpleqa_judge(prompt: str) -> str:
    predicted = prompt.rsplit("Predicted answer:", 1)[1]
    if "Canberra" in predicted or "1889" in predicted:
        return "A"
    if "90 degrees" in predicted:
        return "B"
    if "don't know" in predicted:
        return "C"
    return "Hmm, hard to say."  # no grade: unscored


def test_simpleqa_grades_and_summary(pytester: pytest.Pytester) -> None:
    with serve(pytester, keyed(SIMPLEQA_MODEL), simpleqa_judge) as p:
        result = p.run("simpleqa", "simpleqa/simple_qa_test_set.csv")
        result.assert_outcomes(passed=2, failed=3)
        assert outcome_ids(result, "passed") == {"simpleqa-0", "simpleqa-4"}
        records = p.records("simpleqa")
        assert [records[f"simpleqa-{i}"]["grade"] for i in range(5)] == [
            "CORRECT", "INCORRECT", "NOT_ATTEMPTED", None, "CORRECT"]
        assert records["simpleqa-3"]["is_correct"] is None and records["simpleqa-3"]["unscored"] is True
        assert records["simpleqa-2"]["is_correct"] is False
        # the grader got the gold target and the model's answer
        assert any("Gold target: Canberra" in t and "Predicted answer: It is Canberra." in t for t in p.router.judge_prompts)
        s = p.summary("simpleqa")
        assert s["accuracy"] == pytest.approx(2 / 5)
        assert (s["graded"], s["correct_count"], s["incorrect"], s["not_attempted"], s["ungraded"]) == (4, 2, 1, 1, 1)
        assert s["attempted_rate"] == pytest.approx(3 / 4)
        assert s["accuracy_given_attempted"] == pytest.approx(2 / 3)
        assert s["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
        assert set(s["per_subject"]) == {"Geography", "Science and technology", "Art"}


@pytest.mark.parametrize("bench,data", [("simpleqa", "simpleqa/simple_qa_test_set.csv"), ("frames", "frames/test.tsv"),
                                        ("natural-reasoning", "natural_reasoning/train.jsonl"),
                                        ("wildchat", "wildchat/train.jsonl"), ("hle", "hle/test.jsonl")])
def test_judge_benchmarks_need_a_judge(pytester: pytest.Pytester, bench: str, data: str) -> None:
    """A judge-scored benchmark without [judge] is refused before any request, not run unscored."""
    with serve(pytester, lambda prompt: "Some answer.") as p:
        suite = p.suite(bench, data, judge=False)
        result = p.pytester.runpytest("--jeval-config", str(suite))
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*benchmarks[[]0[]].name: '{bench}' is scored by an LLM judge; add a [[]judge[]] table*"])
        assert not p.server.requests


# --------------------------------------------------------------------------- hle


def test_hle_skips_image_rows_and_sets_choice_letters() -> None:
    samples, skipped = load_samples(bench_hle.BENCHMARK, files=[DATA / "hle" / "test.jsonl"])
    assert skipped == 1 and len(samples) == 5
    assert "66fb75c8d83ed7a299fdd135" not in {s.id for s in samples}
    by_id = {s.id: s for s in samples}
    assert by_id["66c5c3eae30bdd4f1da62cfc"].metadata["letters"] == "ABCDE"
    assert by_id["66e8784d70625d8c7700315a"].metadata["letters"] == "ABCD"
    assert "Exact Answer:" in bench_hle.prompt(by_id["6687ffb1091058ff19128813"])


def test_hle_fast_path_then_judge(pytester: pytest.Pytester) -> None:
    model = keyed({
        "smallest prime": "Explanation: 101 is prime.\nExact Answer: 101\nConfidence: 95%",
        "plants convert light": "Explanation: chlorophyll.\nExact Answer: photosynthesis (in chloroplasts)\nConfidence: 80%",
        "table salt": "Explanation: sodium chloride.\nExact Answer: KCl\nConfidence: 60%",
        "noble gas": "Explanation: B is not, A is not.\nAnswer: C\nConfidence: 90%",
        "sorting algorithm": "Explanation: quicksort is fast.\nAnswer: A\nConfidence: 70%",
    })

    def judge(prompt: str) -> str:
        if "[correct_answer]: Photosynthesis" in prompt:
            return "extracted_final_answer: photosynthesis (in chloroplasts)\nreasoning: same process\ncorrect: yes"
        if "[correct_answer]: NaCl" in prompt:
            return "extracted_final_answer: KCl\nreasoning: different compound\ncorrect: no"
        raise AssertionError(f"unexpected judge call: {prompt[:200]}")

    with serve(pytester, model, judge) as p:
        result = p.run("hle", "hle/test.jsonl")
        result.assert_outcomes(passed=3, failed=2)
        assert outcome_ids(result, "failed") == {"66ba5510db07a3a9151be0d2", "66e8784d70625d8c7700315a"}
        assert len(p.router.judge_prompts) == 2  # exact match and letters needed no judge
        records = p.records("hle")
        methods = {rid: r["scoring_metadata"]["method"] for rid, r in records.items()}
        assert methods == {"6687ffb1091058ff19128813": "exact_match", "668825f80a642802bdfeadfa": "judge",
                           "66ba5510db07a3a9151be0d2": "judge", "66c5c3eae30bdd4f1da62cfc": "letter",
                           "66e8784d70625d8c7700315a": "letter"}
        s = p.summary("hle")
        assert s["skipped_rows"] == 1 and s["total_samples"] == 5
        assert set(s["per_subject"]) == {"Math", "Biology/Medicine", "Chemistry", "Computer Science/AI"}


# --------------------------------------------------------------------------- frames


def test_frames_structured_verdict_and_reasoning_types(pytester: pytest.Pytester) -> None:
    model = keyed({"future wife": "Jane Ballou", "Punxsutawney": "87 years",
                   "Python programming": "about 160,000", "Eiffel Tower": "Einstein"})

    def judge(prompt: str) -> str:
        response = prompt.split("[response]:")[1].split("Your judgement")[0]
        if "Jane Ballou" in response:
            return "extracted_final_answer: Jane Ballou\nreasoning: exact\ncorrect: yes"
        if "87 years" in response:
            return "The extracted answer 87 matches. TRUE"  # fallback token
        if "160,000" in response:
            return "extracted_final_answer: 160,000\nreasoning: not the same\ncorrect: no"
        return "I am not sure."  # no verdict: unscored

    with serve(pytester, model, judge) as p:
        result = p.run("frames", "frames/test.tsv")
        result.assert_outcomes(passed=2, failed=2)
        assert outcome_ids(result, "passed") == {"frames-0", "frames-1"}
        records = p.records("frames")
        assert records["frames-1"]["scoring_metadata"]["judge_parse"] == "bool_token"
        assert records["frames-3"]["is_correct"] is None
        assert records["frames-0"]["subject"] == "Multiple constraints | Temporal reasoning"
        assert "https://en.wikipedia.org/wiki/James_Buchanan" in p.router.model_prompts[0] or any(
            "James_Buchanan" in t for t in p.router.model_prompts)
        per = p.summary("frames")["per_subject"]
        assert set(per) == {"Multiple constraints", "Temporal reasoning", "Numerical reasoning", "Tabular reasoning"}
        assert per["Temporal reasoning"]["total"] == 2 and per["Temporal reasoning"]["accuracy"] == 1.0
        assert per["Multiple constraints"]["total"] == 2 and per["Multiple constraints"]["accuracy"] == 0.5
        assert per["Tabular reasoning"]["accuracy"] == 0.0


# --------------------------------------------------------------------------- wildchat

# model replies carry a marker; the fake judge finds which assistant (A or B) holds it
WILDCHAT_MODEL = {"haiku": "MODEL-1 crisp leaves", "hash map": "MODEL-2 a table", "sleep": "MODEL-3 tips",
                  "Peru": "MODEL-4 Lima", "Hamlet": "MODEL-5 revenge"}


def wildchat_judge(prompt: str) -> str:
    b_start = prompt.index("<|The Start of Assistant B's Answer|>")
    marker = re.search(r"MODEL-(\d)", prompt).group(1)  # type: ignore[union-attr]
    model_is = "A" if prompt.index("MODEL-") < b_start else "B"
    verdicts = {
        # model clearly better in both orders: win, win -> 1.0, consistent
        "1": {"A": "[[A>>B]]", "B": "[[B>>A]]"},
        # position-biased judge always prefers A: win, loss -> 0.5, inconsistent, is_correct (>= 0.5)
        "2": {"A": "[[A>B]]", "B": "[[A>B]]"},
        # tie then loss: 0.25 -> not correct (an OR-of-verdicts rule would have passed it)
        "3": {"A": "[[A=B]]", "B": "[[A>B]]"},
        # loss both: 0.0
        "4": {"A": "[[B>A]]", "B": "[[A>>B]]"},
        # no verdict in one order: unscored
        "5": {"A": "[[A>B]]", "B": "I cannot decide."},
    }
    return f"Explanation... My final verdict: {verdicts[marker][model_is]}"


def test_wildchat_filters_to_english_single_turn() -> None:
    samples, skipped = load_samples(bench_wildchat.BENCHMARK, files=[DATA / "wildchat" / "train.jsonl"])
    assert skipped == 2  # the French conversation and the two-turn one
    assert samples[0].id == "c0ffee0000000000000000000000000a"
    assert samples[0].input == "Write a haiku about autumn leaves."
    assert samples[0].target.startswith("REFERENCE-1")


def test_wildchat_pairwise_both_orders(pytester: pytest.Pytester) -> None:
    with serve(pytester, keyed(WILDCHAT_MODEL), wildchat_judge) as p:
        result = p.run("wildchat", "wildchat/train.jsonl")
        result.assert_outcomes(passed=2, failed=3)
        ids = {"1": "c0ffee0000000000000000000000000a", "2": "c0ffee0000000000000000000000000b",
               "3": "c0ffee0000000000000000000000000d", "4": "c0ffee0000000000000000000000000f",
               "5": "c0ffee00000000000000000000000010"}
        assert outcome_ids(result, "passed") == {ids["1"], ids["2"]}
        assert len(p.router.judge_prompts) == 10  # two orders per sample
        # each sample's two judge prompts put the model's reply once first and once second
        for n in "12345":
            prompts = [t for t in p.router.judge_prompts if f"MODEL-{n}" in t]
            firsts = {t.index(f"MODEL-{n}") < t.index("<|The Start of Assistant B's Answer|>") for t in prompts}
            assert firsts == {True, False}
        r = p.records("wildchat")
        assert [r[ids[n]]["score"] for n in "1234"] == [1.0, 0.5, 0.25, 0.0]
        assert [r[ids[n]]["is_correct"] for n in "12345"] == [True, True, False, False, None]
        assert r[ids["2"]]["outcomes"] == ["win", "loss"] and r[ids["2"]]["position_consistent"] is False
        assert r[ids["3"]]["outcomes"] == ["tie", "loss"]
        s = p.summary("wildchat")
        assert s["judged"] == 4
        assert s["win_rate"] == pytest.approx(3 / 8)
        assert s["tie_rate"] == pytest.approx(1 / 8)
        assert s["loss_rate"] == pytest.approx(4 / 8)
        assert s["position_consistency"] == pytest.approx(2 / 4)
        assert s["per_order"] == {"model_first": {"win": 2, "tie": 1, "loss": 1},
                                  "model_second": {"win": 1, "tie": 0, "loss": 3}}
        assert s["accuracy"] == pytest.approx(2 / 5)
        assert s["skipped_rows"] == 2


# --------------------------------------------------------------------------- gaia

GAIA_META = "gaia/2023/validation/metadata.jsonl"


def test_gaia_attachments_from_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench_gaia.SNAPSHOT_ENV, raising=False)
    samples, skipped = load_samples(bench_gaia.BENCHMARK, files=[DATA / GAIA_META])
    by_id = {s.id: s for s in samples}
    assert skipped == 1  # the hidden "?" answer
    log = by_id["7bd855d8-463d-4ed5-93ca-5fe35145f733"]
    assert log.metadata["attachment"].endswith("7bd855d8-463d-4ed5-93ca-5fe35145f733.txt")
    assert "ORWELLIAN-PELICAN" in bench_gaia.prompt(log)  # text attachments are inlined
    sheet = by_id["b816bfce-3d80-4913-a07d-69b752ce6377"]
    assert sheet.metadata["attachment_missing"] is True and "not available" in bench_gaia.prompt(sheet)
    # a snapshot elsewhere, named by the environment variable, resolves file_path
    monkeypatch.setenv(bench_gaia.SNAPSHOT_ENV, str(DATA / "gaia" / "snapshot"))
    samples, _ = load_samples(bench_gaia.BENCHMARK, files=[DATA / GAIA_META])
    sheet = {s.id: s for s in samples}["b816bfce-3d80-4913-a07d-69b752ce6377"]
    assert sheet.metadata["attachment"] == str((DATA / "gaia" / "snapshot" / "2023" / "validation" /
                                                "b816bfce-3d80-4913-a07d-69b752ce6377.xlsx").resolve())
    assert "cannot be shown" in bench_gaia.prompt(sheet)
    assert sheet.subject == "level_2"


def test_gaia_exact_match_with_judge_fallback(pytester: pytest.Pytester) -> None:
    model = keyed({
        "312 spiders": "312 * 8 = 2496.\nFINAL ANSWER: 2,496",
        "keeper's name": "The log says ORWELLIAN-PELICAN.\nFINAL ANSWER: Orwellian Pelican",
        "first three prime": "FINAL ANSWER: 2, 3, five",
        "1896 Summer Olympics": "FINAL ANSWER: Paris",
        "column B": "FINAL ANSWER: 41",
    })

    def judge(prompt: str) -> str:
        if "[correct_answer]: 2, 3, 5" in prompt:
            return "extracted_final_answer: 2, 3, five\nreasoning: five is 5\ncorrect: yes"
        return "extracted_final_answer: x\nreasoning: differs\ncorrect: no"

    with serve(pytester, model, judge) as p:
        result = p.run("gaia", GAIA_META)
        result.assert_outcomes(passed=3, failed=2)
        assert outcome_ids(result, "failed") == {"5cfb274c-0207-4aa7-9575-6ac0bd95d9b2",
                                                 "b816bfce-3d80-4913-a07d-69b752ce6377"}
        records = p.records("gaia")
        assert records["c61d22de-5f6c-4958-a7f6-5e9707bd3466"]["scoring_metadata"]["method"] == "exact_match"
        assert records["2d83110e-a098-4ebb-9987-066c06fa42d0"]["scoring_metadata"]["method"] == "judge"
        assert len(p.router.judge_prompts) == 3  # only the exact-match misses went to the judge
        assert any("ORWELLIAN-PELICAN" in t for t in p.router.model_prompts)
        s = p.summary("gaia")
        assert set(s["per_subject"]) == {"level_1", "level_2", "level_3"}
        assert s["per_subject"]["level_3"]["accuracy"] == 1.0
        assert s["skipped_rows"] == 1
