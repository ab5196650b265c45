"""Numeric extraction and comparison, including the real GSM8K test split."""

from __future__ import annotations

import json
import pathlib

import pytest

from pytest_jeval.scoring.numeric import (
    extract_final_number,
    gsm8k_gold,
    numbers_equal,
    parse_number,
    score_numeric,
)

GSM8K = pathlib.Path(__file__).resolve().parents[1] / "data" / "gsm8k" / "test.jsonl"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is $1,450,000.", "1450000"),
        ("I get 5 apples and 3 pears, so 8 in total.", "8"),
        ("x = -2.50", "-2.50"),
        ("It is 3/4 of the cake", "3/4"),
        ("The growth is 1e3", "1e3"),
        ("It costs $5.", "5"),
        ("\u22127 degrees", "-7"),
        ("answer: 50%", "50"),
        ("#### 1,234", "1234"),
        ("The answer is 12. Then 14 more people came.", "12"),  # explicit statement beats last number
        ("She has 3 + 4 = 7 apples.\n#### 7\nThat took 20 minutes.", "7"),  # #### beats everything
        ("First 2, then \\boxed{42}, finally 7 minutes", "42"),
        ("\\boxed{\\frac{3}{4}}", "3/4"),
        ("5-3=2", "2"),
        ("nothing here", None),
        ("", None),
    ],
)
def test_extract_final_number(text: str, expected: str | None) -> None:
    assert extract_final_number(text) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [("1,234", 1234.0), ("$5", 5.0), ("3/4", 0.75), ("-2.50", -2.5), ("1e3", 1000.0), ("50%", 50.0),
     ("+3", 3.0), ("-$5", -5.0), ("12.", 12.0), (" 7 ", 7.0), (4, 4.0)],
)
def test_parse_number(text: str | int, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["abc", "1/0", "", None, "1.2.3", "inf", "nan", "12 apples"])
def test_parse_number_rejects(text: str | None) -> None:
    assert parse_number(text) is None


def test_numbers_equal() -> None:
    assert numbers_equal("1,450,000", "1450000")
    assert numbers_equal("0.1", 0.1000000001)
    assert numbers_equal("3/4", "0.75")
    assert not numbers_equal("1450001", "1450000")  # whole numbers: exact, no relative slack
    assert not numbers_equal("2", "3")
    assert not numbers_equal(None, "3") and not numbers_equal("x", "x")


def test_gsm8k_gold() -> None:
    assert gsm8k_gold("steps...\n#### 18") == "18"
    assert gsm8k_gold("a #### 1\n#### 1,450,000") == "1450000"
    with pytest.raises(ValueError):
        gsm8k_gold("no marker")


def test_score_numeric_metadata_and_unscored() -> None:
    score = score_numeric("So the total is $2,125.", "2125")
    assert score.correct is True and score.extracted == "2125"
    assert score.metadata == {"extracted_value": 2125.0, "gold_value": 2125.0}
    unscored = score_numeric("I cannot tell.", "5")
    assert unscored.correct is None and unscored.metadata["unscored_reason"] == "no number found"
    with pytest.raises(ValueError):
        score_numeric("5", "five")


@pytest.fixture(scope="module")
def gsm8k_rows() -> list[dict]:
    with GSM8K.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_gsm8k_golds_with_separators_and_dollar_replies(gsm8k_rows: list[dict]) -> None:
    golds = [gsm8k_gold(row["answer"]) for row in gsm8k_rows]
    assert len(golds) == 1319
    assert sum("," in row["answer"].rpartition("####")[2] for row in gsm8k_rows) == 14
    failures = []
    for row, gold in zip(gsm8k_rows, golds):
        n = int(gold)
        replies = [
            row["answer"],  # the worked solution itself ends with "#### <gold>"
            f"The answer is ${n:,}.",
            f"So she makes {n:,} dollars in all.\n#### {n:,}",
            f"**Answer:** {gold}",
        ]
        failures += [(reply[-40:], gold) for reply in replies if score_numeric(reply, gold).correct is not True]
        if score_numeric(f"The answer is ${n + 1:,}.", gold).correct is not False:
            failures.append(("off by one", gold))
    assert failures == []
