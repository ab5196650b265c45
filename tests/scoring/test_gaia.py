"""GAIA normalised exact match, and plain-text exact match."""

from __future__ import annotations

import pytest

from pytest_jeval.scoring.gaia import extract_final_answer, gaia_match, gold_type, score_gaia
from pytest_jeval.scoring.text import exact_match, normalize_text


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ("17", "17"),
        ("$17", "17"),
        ("17.0", "17"),
        ("1,000", "1000"),
        ("1000", "1,000"),  # the reference would split this gold into a list ["1", "000"]
        ("12%", "12"),
        (" 3.5 ", "3.5"),
        ("42.", "42"),
        ("0.30000000000000004", "0.3"),
        ("apple, banana, 3", "apple,banana,3"),
        ("Apple; Banana", "apple;banana"),
        ("1, 2.0, $3", "1,2,3"),
        ("Saint Petersburg", "saint petersburg"),
        ("St. Petersburg!", "St Petersburg"),
        ("  The  Beatles ", "the beatles"),
    ],
)
def test_matches(pred: str, gold: str) -> None:
    assert gaia_match(pred, gold)


@pytest.mark.parametrize(
    ("pred", "gold"),
    [
        ("18", "17"),
        ("17 km", "17"),
        ("seventeen", "17"),
        ("apple, banana", "apple,banana,3"),  # lengths differ
        ("apple, banana, 4", "apple,banana,3"),
        ("a.b, c", "ab,c"),  # list elements keep their punctuation
        ("Moscow", "Saint Petersburg"),
        ("", "x"),
        (None, "x"),
    ],
)
def test_mismatches(pred: str | None, gold: str) -> None:
    assert not gaia_match(pred, gold)


def test_gold_types() -> None:
    assert gold_type("$1,234.50") == "number"
    assert gold_type("1e3") == "number"
    assert gold_type("a, b") == "list"
    assert gold_type("1,2,3") == "list"
    assert gold_type("inf") == "string"
    assert gold_type("Paris") == "string"


def test_extract_final_answer() -> None:
    assert extract_final_answer("thinking...\nFINAL ANSWER: 42\n") == ("42", "final_answer_marker")
    assert extract_final_answer("Final answer: x\nmore text\nFINAL ANSWER: **Paris**") == ("Paris", "final_answer_marker")
    assert extract_final_answer("FINAL ANSWER:\n\n  7") == ("7", "final_answer_marker")
    assert extract_final_answer("  just this ") == ("just this", "whole_reply")


def test_score_gaia() -> None:
    score = score_gaia("The population is large.\nFINAL ANSWER: 1,234,567", "1234567")
    assert score.correct is True and score.extracted == "1,234,567"
    assert score.metadata == {"extraction": "final_answer_marker", "gold_type": "number"}
    assert score_gaia("FINAL ANSWER: 12", "13").correct is False
    unscored = score_gaia("FINAL ANSWER:   ", "13")
    assert unscored.correct is None and unscored.metadata["extraction"] == "final_answer_marker"


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [("The Beatles!", "beatles"), ("  An   apple, a day ", "apple day"), ("U.S.A.", "usa"),
     ("\u201cQuoted\u201d", "quoted"), ("Ｆｕｌｌ width", "full width"), ("", "")],
)
def test_normalize_text(raw: str, normalized: str) -> None:
    assert normalize_text(raw) == normalized


def test_exact_match() -> None:
    assert exact_match("the Eiffel Tower.", "Eiffel tower")
    assert not exact_match("Eiffel", "Eiffel Tower")
    assert not exact_match("", "")  # an empty prediction never matches
    assert not exact_match("the", "a")  # nothing left after normalisation
