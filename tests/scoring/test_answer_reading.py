"""Answers are read the way a careful person reads them (issue 18, section 3).

One block per class of misreading: signed answers, equations inside an answer
statement, math answer statements in prose, boxed lists, value-first equation
golds, and wordy SimpleQA grader replies. Each class has positive and negative
cases; two runs through the plugin check that the built-in benchmarks get the
same readings over real HTTP.
"""

from __future__ import annotations

import json

import pytest

from pytest_jeval.scoring.llm_judge.prompts import parse_simpleqa_grade
from pytest_jeval.scoring.math_equiv import compare_math, final_math_answer, normalize_latex, score_math
from pytest_jeval.scoring.numeric import extract_final_number, score_numeric
from pytest_jeval.scoring.registry import get_scorer
from tests.support.bench import serve
from tests.support.gsm import outcome_ids

# --------------------------------------------------------------------------- signed numbers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The final answer is -3.", "-3"),
        ("Answer: -12", "-12"),
        ("Final answer: -1,250", "-1250"),
        ("**Answer**: -12", "-12"),
        ("The answer is \u22127.", "-7"),  # Unicode minus
        ("Answer: \u221212 degrees", "-12"),
        ("Answer: \u201312", "-12"),  # an en dash touching the number is a sign too
        ("The answer to part (b) is -6.", "-6"),
        ("So the final answer is: -0.5", "-0.5"),
        ("The answer is -$5.", "-5"),
        ("#### -3", "-3"),
        ("\\boxed{-42}", "-42"),
    ],
)
def test_a_sign_touching_the_stated_number_is_kept(text: str, expected: str) -> None:
    assert extract_final_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer - 12", "12"),  # a dash with a space after it is punctuation
        ("Final answer \u2013 12", "12"),
        ("Final answer \u2014 12", "12"),
        ("Answer: - 12", "12"),
        ("Answer:\n- 12 apples", "12"),  # a list bullet, not a sign
        ("step-2: add them, so the answer is 5", "5"),
        ("Steps 1-3 done; the answer is 4-5 hours", "4"),  # a range: its first end, positive
        ("She read pages 3-4", "4"),
        ("the 2019-2020 season", "2020"),
        ("To answer this, we note that 3 + 4 = 7", "7"),  # "answer" as a verb is no statement
    ],
)
def test_dashes_that_are_not_signs(text: str, expected: str) -> None:
    assert extract_final_number(text) == expected


def test_negative_gold_scores_through_the_registry() -> None:
    numeric = get_scorer("numeric")
    right = numeric({"model_answer": "Working...\nThe final answer is -3.", "expected": "-3"})
    wrong = numeric({"model_answer": "Working...\nThe final answer is -3.", "expected": "3"})
    assert (right.correct, right.extracted) == (True, "-3")
    assert wrong.correct is False
    assert score_numeric("Final answer: \u22121,250", "-1250").correct is True


# --------------------------------------------------------------------------- equations in a statement


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is 12 + 30 = 42.", "42"),
        ("Answer: 3 \u00d7 $4 = $12", "12"),
        ("The answer is 5 x 3 = 15 apples.", "15"),
        ("Final answer: 100 - 140 = -40", "-40"),
        ("The answer is x = 5 + 2 = 7", "7"),
        ("The answer is (2 + 3) \\cdot 4 = 20", "20"),
        ("The answer is \\frac{6}{2} = 3", "3"),
        ("Answer: 1,200 + 50 = 1,250 dollars", "1250"),
        ("#### 12 + 30 = 42", "42"),
        ("\\boxed{12+30=42}", "42"),
    ],
)
def test_a_leading_equation_yields_its_result(text: str, expected: str) -> None:
    assert extract_final_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is 7, because 10 - 3 = 7 is not 8 = 8", "7"),  # the equation is justification
        ("The answer is 42 since 6 \u00d7 7 = 42... and 40 = 40", "42"),
        ("Answer: 5 (from 2 + 3 = 5, not 9 = 9)", "5"),
        ("The answer is 12 + 30 =", "12"),  # no result stated: the first number, as before
        ("The answer is 12. Then 14 = 14 more", "12"),
    ],
)
def test_an_equation_after_prose_is_not_the_answer(text: str, expected: str) -> None:
    assert extract_final_number(text) == expected


def test_equation_answers_score_against_math_golds() -> None:
    assert score_math("The final answer is 12 + 30 = 42.", "42").correct is True
    assert score_math("The final answer is 12 + 30 = 41.", "42").correct is False
    assert normalize_latex("\\frac{1}{2} + \\frac{1}{2} = 1") == "1"
    assert normalize_latex("a + b = 5") == "a+b=5"  # letters: an equation, not arithmetic


# --------------------------------------------------------------------------- math statements in prose


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final Answer: The final answer is 42. I hope it is correct.", "42"),
        ("Final Answer: The final answer is x^2 + 1. I hope it is correct.", "x^2 + 1"),
        ("Final Answer: The final answer is 3.5. I hope it is correct.", "3.5"),
        ("Final Answer: The final answer is (2, 3). I hope it is correct.", "(2, 3)"),
        ("Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.", "\\frac{1}{2}"),
        ("The final answer is 9 I hope it is correct.", "9"),
        ("The answer is 42 because 6 times 7 is 42.", "42"),
        ("The answer is \\frac{1}{2}, which is one half.", "\\frac{1}{2}"),
        ("The answer is $4$ because $2 + 2 = 4$.", "4"),
        ("So the answer is 15 since both cases agree", "15"),
        ("The answer for $k$ is 7.", "7"),
        ("The answer to part (a) is $x^2+1$; part (b) follows.", "x^2+1"),
        ("Thus the final answer for $n = 3$ is $\\sqrt{2}$.", "\\sqrt{2}"),
        ("So the answer is Evelyn.", "Evelyn"),
        ("**Answer:** 5", "5"),  # markdown around the statement or the answer
        ("**Answer**: $\\frac{1}{2}$", "\\frac{1}{2}"),
        ("The final answer is **42**.", "42"),
        ("Answer: `7`.", "7"),
    ],
)
def test_math_statement_reduced_to_its_answer(text: str, expected: str) -> None:
    assert final_math_answer(text) == expected


@pytest.mark.parametrize(
    "text",
    ["I hope it is correct.", "We need to answer for $k$ first.", "No final result here, sorry."],
)
def test_math_prose_without_a_statement_is_unscored(text: str) -> None:
    assert final_math_answer(text) is None
    assert score_math(text, "7").correct is None


def test_math_prose_scores() -> None:
    assert score_math("Final Answer: The final answer is 42. I hope it is correct.", "42").correct is True
    assert score_math("The answer for $k$ is 7.", "7").correct is True
    assert score_math("The answer for $k$ is 8.", "7").correct is False
    assert score_math("The answer is 42 because 6 times 7 is 42.", "42").correct is True


# --------------------------------------------------------------------------- boxed lists and thousands


@pytest.mark.parametrize(
    ("pred", "gold", "equal"),
    [
        ("2, 3", "23", False),  # two items are not the number formed by joining them
        ("1, 250", "1250", False),
        ("1, 250", "1,250", False),
        ("-1, 250", "-1250", False),
        ("1,\\ 250", "1250", False),  # a LaTeX space is a space
        ("1,250", "1250", True),  # tight, groups of three: thousands
        ("10,\\!080", "10080", True),  # LaTeX thousands spacing stays a number
        ("11,\\! 111,\\! 111,\\! 100", "11111111100", True),
        ("1{,}250", "1250", True),
        ("2, 3", "2,3", True),
        ("1, 250", "1, 250", True),
        ("2,3", "23", False),  # tight but not three digits: a list
        ("1,250", "1, 250", False),
        ("2, 2", "2", False),
    ],
)
def test_commas_separate_items_unless_they_group_thousands(pred: str, gold: str, equal: bool) -> None:
    assert compare_math(pred, gold)[0] is equal


def test_boxed_lists_through_the_scorers() -> None:
    assert score_math("so \\boxed{2, 3}", "23").correct is False
    assert score_math("so \\boxed{1, 250}", "1250").correct is False
    assert score_math("so \\boxed{1,250}", "1250").correct is True
    assert score_math("so \\boxed{2, 3}", "2, 3").correct is True
    assert extract_final_number("so \\boxed{2, 3}") == "2"  # a list's first item, never 23
    assert extract_final_number("so \\boxed{1, 250}") == "1"
    assert extract_final_number("so \\boxed{1,250}") == "1250"
    assert normalize_latex("1, 250") == "1, 250" and normalize_latex("2, 3") == "2,3"


# --------------------------------------------------------------------------- value-first equations


@pytest.mark.parametrize(
    ("pred", "gold", "equal"),
    [
        ("2", "2 = x", True),
        ("2", "x = 2", True),
        ("x = 2", "2 = x", True),
        ("2 = x", "2", True),
        ("\\frac{1}{2} = y", "0.5", True),
        ("2x + 3 = y", "y = 2x + 3", True),
        ("-3 = k", "-3", True),
        ("3", "2 = x", False),
        ("2 = x", "3", False),
        ("2 = x = y", "2", False),  # two variables: not a single-variable equation
    ],
)
def test_single_variable_equations_are_symmetric(pred: str, gold: str, equal: bool) -> None:
    assert compare_math(pred, gold)[0] is equal


# --------------------------------------------------------------------------- SimpleQA grades


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ("This is a B", "INCORRECT"),
        ("The grade is B", "INCORRECT"),
        ("Grade: C", "NOT_ATTEMPTED"),
        ("Grade: C\nThe prediction does not answer the question.", "NOT_ATTEMPTED"),
        ("**A**", "CORRECT"),
        ("The grade is **A**.", "CORRECT"),
        ("It's an A.", "CORRECT"),
        ("I would grade it as C.", "NOT_ATTEMPTED"),
        ("Graded as B because it names another city.", "INCORRECT"),
        ("My final verdict: (B)", "INCORRECT"),
        ("The grade is A. On reflection, the grade is B.", "INCORRECT"),  # the last statement counts
        ("The prediction names Sydney, not Canberra. This is a B.", "INCORRECT"),
    ],
)
def test_wordy_grader_replies_are_read(text: str, grade: str) -> None:
    assert parse_simpleqa_grade(text) == grade


@pytest.mark.parametrize(
    "text",
    [
        "Hmm, hard to say.",
        "A careful reading shows Bob is wrong.",  # stray capitals are never a grade
        "This is a C-level answer.",
        "This is a bit off.",
        "It is a good answer.",
        "Because it contradicts the target, B",
        "The predicted answer is Canberra, which matches.",
        "grade: b",  # grades are capital letters
        "CORRECT or INCORRECT, hard to say",
    ],
)
def test_a_reply_with_no_grade_stays_unparsed(text: str) -> None:
    assert parse_simpleqa_grade(text) is None


# --------------------------------------------------------------------------- through the plugin

GSM_ROWS = [
    {"question": "A diver starts at sea level and sinks 3 metres. Where is she?", "answer": "0 - 3 = -3\n#### -3"},
    {"question": "A shop loses 1,250 dollars. What is its profit?", "answer": "#### -1,250"},
    {"question": "Tom has 12 and gets 30 more. How many?", "answer": "12 + 30 = 42\n#### 42"},
    {"question": "Ann has 5 and gives 2 away. How many?", "answer": "#### 3"},
]
GSM_REPLIES = {
    "diver": "She is 3 metres below, so the final answer is -3.",
    "shop": "Final answer: -1,250",
    "Tom": "The answer is 12 + 30 = 42.",
    "Ann": "The final answer is -3.",  # wrong: the gold is 3, and the sign is kept
}


def test_gsm8k_run_keeps_signs_and_reads_equations(pytester: pytest.Pytester) -> None:
    data = pytester.path / "gsm.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in GSM_ROWS), encoding="utf-8")

    def model(prompt: str) -> str:
        return next(reply for key, reply in GSM_REPLIES.items() if key in prompt)

    with serve(pytester, model) as p:
        result = p.run("gsm8k", str(data), judge=False)
        result.assert_outcomes(passed=3, failed=1)
        records = p.records("gsm8k")
        assert outcome_ids(result, "failed") == {"gsm8k-3"}
        assert [records[f"gsm8k-{i}"]["extracted"] for i in range(4)] == ["-3", "-1250", "42", "-3"]


SIMPLEQA_REPLIES = {
    "Canberra": "The predicted answer matches the gold target. This is an A.",
    "90 degrees": "The grade is B",
    "don't know": "Grade: C\nThe answer does not attempt the question.",
    "8,849": "Honestly, A careful grader might hesitate here.",  # no grade: unscored
    "1889": "**A**",
}
SIMPLEQA_MODEL = {
    "capital city of Australia": "It is Canberra.",
    "water boil": "Maybe 90 degrees.",
    "Mona Lisa": "I don't know.",
    "Mount Everest": "About 8,849 m.",
    "Starry Night": "1889",
}


def test_simpleqa_run_reads_wordy_grades(pytester: pytest.Pytester) -> None:
    def model(prompt: str) -> str:
        return next((v for k, v in SIMPLEQA_MODEL.items() if k in prompt), "no idea")

    def judge(prompt: str) -> str:
        predicted = prompt.rsplit("Predicted answer:", 1)[1]
        return next(v for k, v in SIMPLEQA_REPLIES.items() if k in predicted)

    with serve(pytester, model, judge) as p:
        result = p.run("simpleqa", "simpleqa/simple_qa_test_set.csv")
        result.assert_outcomes(passed=2, failed=3)
        records = p.records("simpleqa")
        assert [records[f"simpleqa-{i}"]["grade"] for i in range(5)] == [
            "CORRECT", "INCORRECT", "NOT_ATTEMPTED", None, "CORRECT"]
        assert records["simpleqa-3"]["unscored"] is True
        assert p.summary("simpleqa")["ungraded"] == 1
