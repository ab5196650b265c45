"""``jeval rescore``: stored records scored again by their scorer."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_jeval.cli._rescore import rescore_record
from pytest_jeval.scoring.registry import get_scorer
from tests.support.result_files import A


def test_rescore_keeps_unscored_when_the_scorer_says_so() -> None:
    record = {"record_id": "x", "model_answer": "I like turtles.", "expected": "42", "error": None,
              "is_correct": None, "score": None, "unscored": True, "scoring_metadata": {}}
    out = rescore_record(record, "numeric")
    assert out["is_correct"] is None and out["unscored"] is True and out["score"] is None


def test_rescore_scorer_crash_counts_as_wrong() -> None:
    record = {"record_id": "x", "model_answer": "5", "expected": "not a number", "error": None}
    out = rescore_record(record, "numeric")
    assert out["is_correct"] is False and out["score"] == 0.0
    assert "ValueError" in out["scoring_metadata"]["exception"]


def test_mcq_scorer_uses_stored_letters_and_keeps_the_judge_choice() -> None:
    mcq = get_scorer("mcq")
    record = {"record_id": "x", "model_answer": "Answer: F", "expected": "F", "error": None,
              "scoring_metadata": {"valid_letters": "ABCDEFGHIJ"}}
    assert mcq(record).correct is True
    judged = {"record_id": "y", "model_answer": "I'd go with the second-to-last one.", "expected": "C", "error": None,
              "is_correct": True, "score": 1.0, "extracted": "C",
              "scoring_metadata": {"extraction": "judge", "candidate_letter": "C", "judge_output": "C",
                                   "valid_letters": "ABCD"}}
    score = mcq(judged)
    assert score.correct is True and score.extracted == "C" and score.metadata == judged["scoring_metadata"]


def test_rescore_reproduces_the_quickstart_fixture_by_kind(tmp_path: Path) -> None:
    # numeric, contains and mcq records rescored each with its own scorer give the stored verdicts
    kind_scorer = {"arithmetic": "numeric", "facts": "contains", "multiple-choice": "mcq"}
    for line in A.read_text().splitlines():
        record = json.loads(line)
        assert rescore_record(record, kind_scorer[record["subject"]]) == record


