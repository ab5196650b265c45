"""The code evaluators: exact match, classification, numeric, JSON match, trajectory similarity."""

from __future__ import annotations

import json

import pytest

from pytest_jeval.judge_bench.evaluators.code import json_equal, trajectory_similarity
from pytest_jeval.scoring.judging.registry import EvaluatorError
from tests.support.evaluators import judge


def test_exact_match_normalises_whitespace_and_case_only() -> None:
    assert judge("exact_match", output="  New\n York ", expected="new york").predicted is True
    assert judge("exact_match", output="New York.", expected="new york").predicted is False
    j = judge("exact_match", output="x", expected="y")
    assert j.predicted is False and j.distribution is None and j.probability_source == "deterministic"


def test_classification_compares_labels() -> None:
    assert judge("classification", output=" Positive. ", expected="positive").predicted is True
    assert judge("classification", output="negative", expected="positive").predicted is False
    assert judge("classification", output="", expected="positive").predicted is False


def test_numeric() -> None:
    assert judge("numeric", output="So the total is $1,450,000.", expected="1450000").predicted is True
    assert judge("numeric", output="0.333333333", expected="1/3").predicted is True
    assert judge("numeric", output="1450001", expected="1450000").predicted is False
    assert judge("numeric", output="no number here", expected="3").predicted is False
    with pytest.raises(EvaluatorError):
        judge("numeric", output="3", expected="three")


def test_json_match() -> None:
    assert judge("json_match", output='```json\n{"b": [1, 2], "a": 1.0}\n```', expected={"a": 1, "b": [1, 2]}).predicted is True
    assert judge("json_match", output='{"b": [2, 1], "a": 1}', expected='{"a": 1, "b": [1, 2]}').predicted is False
    assert judge("json_match", output="{not json", expected="{}").predicted is False
    assert not json_equal(True, 1) and json_equal(1, 1.0) and not json_equal({"a": None}, {})
    with pytest.raises(EvaluatorError):
        judge("json_match", output="{}", expected="{broken")


def test_trajectory_similarity_formula() -> None:
    assert trajectory_similarity([], []) == 1.0
    assert trajectory_similarity(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert trajectory_similarity(["a", "c"], ["a", "b", "c"]) == pytest.approx(1 - 1 / 3)
    assert trajectory_similarity(["x", "y"], ["a", "b", "c", "d"]) == 0.0
    steps = json.dumps([{"tool": "search"}, {"tool": "Open"}, {"tool": "answer"}])
    j = judge("trajectory", scale=[0, 4], output="1. search\n2. open\n3. answer", expected=steps)
    assert j.predicted == 4 and j.details["similarity"] == 1.0
    j = judge("trajectory", scale=[0, 4], output=["search", "answer"], expected=steps)
    assert j.details["similarity"] == pytest.approx(2 / 3) and j.predicted == 3  # round_half_up(2.67)
    assert judge("trajectory", output=["search"], expected=steps).predicted == 0  # 0-1 scale: 1/3 -> 0
