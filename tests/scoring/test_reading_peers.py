"""Answers read right against the peers' own scorer test cases (issue 29, section 1).

One block per class of misreading. The inputs are written out here; where a case comes
from another project's published tests its source is named (Math-Verify ``tests/``,
inspect_ai ``tests/scorer/``), and long upstream replies are cut to the sentences that
decide the reading. Each block has the cases that must change and the neighbours that
must not.
"""

from __future__ import annotations

import pytest

from pytest_jeval.scoring import (
    extract_answer_line,
    extract_answer_word,
    extract_choice_letters,
    score_answer_line,
    score_answer_word,
    score_mcq_multi,
    score_token_f1,
    token_f1,
)
from pytest_jeval.scoring._boxed import all_boxed, final_boxes
from pytest_jeval.scoring.math_equiv import final_math_answer, is_collection, score_math
from pytest_jeval.scoring.numeric import extract_final_number, final_number, score_numeric
from pytest_jeval.scoring.registry import SCORERS, call_scorer

# --------------------------------------------------------------------------- a label before the value


@pytest.mark.parametrize(
    ("reply", "gold"),
    [
        # Math-Verify tests/test_all.py, "Answer extraction with format Final Answer"
        ("Final Answer: The largest $n$ is 34.", "34"),
        # Math-Verify, "Answer extraction with format answer is" (the reply's last sentence)
        ("So, the total number of points in the domain is $1 + 2 \\times 9 = 1 + 18 = 19$ points. Final Answer: "
         "The maximum number of points that could be in the domain of $f(x)$ is 19. <|im_start|>user", "19"),
        # Math-Verify, "Issue #7: Volume extraction" (the reply's last sentences)
        ("Therefore, the volume of rectangular prism $ABCDEFGH$ is $5 \\times 6 \\times 4 = 120$. Final Answer: "
         "The volume of $ABCDEFGH$ is 120. I hope it is correct.", "120"),
        ("The final answer is: the value of $a_1$ is $\\frac{1}{2}$.", "\\frac{1}{2}"),
        ("Final Answer: $x$ equals 7", "7"),
    ],
)
def test_a_label_or_variable_is_never_the_answer_when_a_value_follows(reply: str, gold: str) -> None:
    score = score_math(reply, gold)
    assert score.correct is True, score.metadata


@pytest.mark.parametrize(
    ("reply", "extracted"),
    [
        ("The answer is odd $n$.", "n"),  # no linking verb: the last math span, as before
        ("Final Answer: $n$ is even.", "n"),  # nothing after the verb is a value: as before
        ("The final answer is $x = 5$.", "x = 5"),  # the equation is inside the math
        ("Final Answer: The answer for $k$ is 7.", "7"),
        ("Final answer: 34 is the largest $n$.", "n"),  # a value before the verb: as before
    ],
)
def test_label_rule_leaves_other_statements_alone(reply: str, extracted: str) -> None:
    assert final_math_answer(reply) == extracted


# --------------------------------------------------------------------------- negation


@pytest.mark.parametrize(
    ("reply", "number"),
    [
        ("The answer is not 5, it is 6", "6"),
        ("The answer is not 5. It is 6.", "6"),
        ("The answer isn't 5, it's 6.", "6"),
        ("Answer: not 5 but 6", "6"),
        ("The answer is not -2, it is -3", "-3"),
        ("The answer is 6, not 5", "6"),  # the negation comes after the answer
        ("The answer is not 5.", None),  # only a negation: no number is stated, nothing is guessed
    ],
)
def test_a_negated_value_is_never_the_answer(reply: str, number: str | None) -> None:
    assert extract_final_number(reply) == number


def test_negation_in_the_math_scorer() -> None:
    assert final_math_answer("The answer is not 5, it is 6") == "6"
    assert final_math_answer("The final answer is not $\\frac{1}{2}$ but $\\frac{1}{3}$.") == "\\frac{1}{3}"
    assert score_math("The answer is not 5, it is 6", "6").correct is True
    assert score_math("The answer is not 5, it is 6", "5").correct is False
    assert score_numeric("The answer is not 5.", "5").correct is None  # unscored, never read as 5


# --------------------------------------------------------------------------- percentages


@pytest.mark.parametrize(
    ("reply", "gold"),
    [
        # inspect_ai tests/scorer/test_math.py, "percentage suffixes are normalized"
        ("The answer is 33.5%", "0.335"),
        ("The answer is 33.5\\%", "0.335"),
        ("The answer is 33.5 percent", "0.335"),
        ("The answer is 33.5 pct", "0.335"),
        ("The answer is \\frac{1}{2}\\%", "0.005"),
        ("The answer is 1/2 percent", "0.005"),
        # inspect_ai, "approximate values still match": the reverse
        ("The answer is 0.335", "33.5\\%"),
        ("The answer is 0.335", "33.5%"),
        # the sign as a unit, as before
        ("The answer is 50%", "50"),
        ("The answer is 50", "50%"),
    ],
)
def test_percent_either_way_in_the_numeric_scorer(reply: str, gold: str) -> None:
    score = score_numeric(reply, gold)
    assert score.correct is True
    assert score.metadata["percent"] == "either"


@pytest.mark.parametrize(
    ("reply", "gold"),
    [
        # inspect_ai tests/scorer/math_cases.json ("historical") and test_math.py
        ("\\boxed{33.5\\%}", "0.335"),
        ("The answer is $33.5\\%$.", "0.335"),
        ("\\boxed{\\frac{1}{2}\\%}", "0.005"),
        ("\\boxed{\\frac{1}{2}\\text{ percent}}", "0.005"),
        ("\\boxed{0.335}", "33.5\\%"),
        # Math-Verify tests/test_all.py, "percent notation"
        ("\\boxed{28 percent}", "$28\\%$"),
        ("\\boxed{28\\%}", "$28\\%$"),
        ("\\boxed{28}", "$28\\%$"),
    ],
)
def test_percent_either_way_in_the_math_scorer(reply: str, gold: str) -> None:
    score = score_math(reply, gold)
    assert score.correct is True, score.metadata


def test_percent_conventions_can_be_narrowed() -> None:
    assert score_numeric("The answer is 50%", "0.5", percent="unit").correct is False
    assert score_numeric("The answer is 50%", "50", percent="unit").correct is True
    assert score_numeric("The answer is 50%", "50", percent="value").correct is False
    assert score_numeric("The answer is 50%", "0.5", percent="value").correct is True
    assert score_math("\\boxed{50\\%}", "50", percent="value").correct is False
    assert score_math("\\boxed{50\\%}", "0.5", percent="unit").correct is False
    with pytest.raises(ValueError, match="percent must be one of"):
        score_numeric("5", "5", percent="half")  # type: ignore[arg-type]


def test_percent_readings_do_not_loosen_plain_numbers() -> None:
    assert score_numeric("The answer is 0.5", "50").correct is False  # no sign anywhere: no reading
    assert score_numeric("The answer is 34%", "0.335").correct is False
    assert score_math("\\boxed{0.5}", "50").correct is False
    assert final_number("It rose 12% to 40").text == "40"  # the last number is still the answer
    assert final_number("It rose to 40%").percent is True


def test_rescoring_keeps_the_runs_percent_convention() -> None:
    record = {"model_answer": "The answer is 50%", "expected": "0.5", "scoring_metadata": {"percent": "unit"}}
    assert call_scorer("numeric", record).correct is False
    assert call_scorer("numeric", {**record, "scoring_metadata": {}}).correct is True


# --------------------------------------------------------------------------- several boxes


@pytest.mark.parametrize(
    ("reply", "gold"),
    [
        # Math-Verify tests/test_numina_cases.py
        ("solutions are:\n\n\\[\n\\boxed{(1, 2)}, \\boxed{(2, 1)}, \\boxed{(-1, -20)}, \\boxed{(-20, -1)}\n\\]",
         "(2,1),(1,2),(-1,-20),(-20,-1)"),
        # Math-Verify tests/test_open_thoughts.py
        ("\\boxed{1} and \\boxed{2} and \\boxed{3}", "{1,2,3}"),
        ("\\boxed{1},\\boxed{2},\\boxed{3}", "{1,2,3}"),
        ("So $\\boxed{3}$ or $\\boxed{-1}$", "-1, 3"),
        ("\\boxed{2} \\quad \\text{and} \\quad \\boxed{\\frac{1}{2}}", "\\left\\{\\frac{1}{2}, 2\\right\\}"),
        ("\\boxed{1} and \\boxed{2} and \\boxed{2}", "\\{1, 2\\}"),  # a repeated box counts once
    ],
)
def test_several_boxes_against_a_set_gold(reply: str, gold: str) -> None:
    score = score_math(reply, gold)
    assert score.correct is True, score.metadata
    assert score.metadata["method"] == "set"


@pytest.mark.parametrize(
    ("reply", "gold", "correct"),
    [
        ("\\boxed{1} and \\boxed{2}", "{1,2,3}", False),  # one missing
        ("\\boxed{1} and \\boxed{2} and \\boxed{4}", "{1,2,3}", False),  # one wrong
        # inspect_ai tests/scorer/test_math.py: prose between the boxes, the last one counts
        ("\\boxed{10} and then \\boxed{42}", "\\{10,42\\}", False),
        ("\\boxed{10} and then \\boxed{42}", "42", True),
        # a draft box, then the answer: the last box against a list gold, as before
        ("A wrong \\boxed{0} draft ... so the answer is $\\boxed{1, -2}$.", "1,-2", True),
        # a single-value gold keeps the last box
        ("\\boxed{1} and \\boxed{2}", "2", True),
        ("\\boxed{1} and \\boxed{2}", "(1, 2)", False),  # a tuple is one value
        ("\\boxed{1,250} and \\boxed{3}", "1,250", False),  # a thousands number is one value
    ],
)
def test_several_boxes_neighbours(reply: str, gold: str, correct: bool) -> None:
    assert score_math(reply, gold).correct is correct


def test_box_groups_and_collections() -> None:
    text = "draft \\boxed{0}. Then: \\boxed{1}, \\boxed{2}"
    assert all_boxed(text) == ["0", "1", "2"]
    assert final_boxes(text) == ["1", "2"]
    assert final_boxes("no box") == []
    assert [is_collection(g) for g in ("\\{1,2,3\\}", "1, 2", "(1,2),(2,1)", "(1, 2)", "[0,1)", "1,250", "7")] == [
        True, True, True, False, False, False, False]


# --------------------------------------------------------------------------- token F1


@pytest.mark.parametrize(
    ("reply", "golds", "f1"),
    [
        # inspect_ai tests/scorer/test_classification.py
        ("foo", ["foo"], 1.0),
        ("foo1", ["foo"], 0.0),
        ("Paris", ["Paris, Texas", "Paris"], 1.0),
        ("Paris", ["Paris, Texas"], 2 / 3),
        ("(3.14)", ["3.14"], 1.0),
        # SQuAD: articles and punctuation go, tokens count with repetition
        ("The Eiffel Tower", ["eiffel tower"], 1.0),
        ("the the cat", ["cat cat"], 2 / 3),
        ("Denver Broncos won", ["Denver Broncos"], 0.8),
    ],
)
def test_token_f1(reply: str, golds: list[str], f1: float) -> None:
    score = score_token_f1(reply, golds)
    assert score.value == pytest.approx(f1)
    assert score.correct is (f1 == 1.0)


def test_token_f1_edges() -> None:
    assert token_f1("a", "the") == 1.0  # both normalise to nothing (SQuAD)
    assert token_f1("Paris", "") == 0.0
    assert score_token_f1("   ", "Paris").correct is None


# --------------------------------------------------------------------------- ANSWER: <word> / <line>


@pytest.mark.parametrize(
    ("reply", "word"),
    [
        # inspect_ai tests/scorer/test_answer.py
        ("ANSWER: Yes.", "Yes"),
        ("ANSWER: 42,\n", "42"),
        ("ANSWER: correct!", "correct"),
        ("ANSWER: 3.14", "3.14"),
        ("ANSWER: \u2606", "\u2606"),
        ("ANSWER: No\nActually, on reflection...\nANSWER: Yes", "Yes"),  # the last one counts
        ("**ANSWER:** yes", "yes"),
        ("ANSWER: Yes then more text", None),  # prose after the word: no word is stated
        ("ANSWER: No, because reasons", None),
        ("Yes", None),
    ],
)
def test_answer_word(reply: str, word: str | None) -> None:
    assert extract_answer_word(reply) == word


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        # inspect_ai tests/scorer/test_answer.py
        ("ANSWER:\nThis is a whole new line", "This is a whole new line"),
        ("What if I submitted this as the answer: some stuff\n\nNo, that seems wrong.\n\nANSWER: 0.1\n", "0.1"),
        ("ANSWER: New York City\nThat is all.", "New York City"),
        ("no marker at all", None),
    ],
)
def test_answer_line(reply: str, line: str | None) -> None:
    assert extract_answer_line(reply) == line


def test_answer_word_and_line_scores() -> None:
    assert score_answer_word("ANSWER: yes.", "Yes").correct is True
    assert score_answer_word("ANSWER: no", ["Yes", "Y"]).correct is False
    assert score_answer_word("ANSWER: maybe so", "Yes").correct is None
    assert score_answer_line("ANSWER: new  york city.", "New York City").correct is True
    assert score_answer_line("ANSWER: York", "New York City").correct is False


# --------------------------------------------------------------------------- several correct letters


@pytest.mark.parametrize(
    ("reply", "letters"),
    [
        # inspect_ai tests/scorer/test_choice.py and solver parse_answers
        ("ANSWER: A, B", {"A", "B"}),
        ("ANSWER: A,C", {"A", "C"}),
        ("ANSWER: AC", {"A", "C"}),
        ("ANSWER: A and C", {"A", "C"}),
        ("ANSWER: a c.", {"A", "C"}),
        ("ANSWERS: B", {"B"}),
        ("ANSWER: A\nwait\nANSWER: B, D", {"B", "D"}),
        ("ANSWER: A, E", None),  # E is not an option
        ("ANSWER: I think A", None),
        ("The answer is A and C", None),  # no marker: nothing is guessed
    ],
)
def test_choice_letters(reply: str, letters: set[str] | None) -> None:
    assert extract_choice_letters(reply, "ABCD") == letters


@pytest.mark.parametrize(
    ("reply", "gold", "correct"),
    [
        ("ANSWER: A, B", "A,B", True),
        ("ANSWER: A, B", "AB", True),
        ("ANSWER: B, A", ["A", "B"], True),
        ("ANSWER: A, B", "A", False),  # a false positive
        ("ANSWER: A", "A, B", False),  # a missed letter
        ("ANSWER: A, E", "A, E", True),  # the options widen to the gold's letters
        ("no answer", "A", None),
    ],
)
def test_mcq_multi(reply: str, gold: str | list[str], correct: bool | None) -> None:
    assert score_mcq_multi(reply, gold).correct is correct


def test_the_new_scorers_are_registered_for_rescoring() -> None:
    for name in ("token_f1", "answer_word", "answer_line", "mcq_multi"):
        assert name in SCORERS
    record = {"model_answer": "ANSWER: A, C", "expected": "A, C", "scoring_metadata": {}}
    assert call_scorer("mcq_multi", record).correct is True
    assert call_scorer("token_f1", {"model_answer": "Paris", "expected": "Paris, Texas"}).value == pytest.approx(2 / 3)
    aliases = {"model_answer": "ANSWER: NYC", "expected": "New York", "scoring_metadata": {"accepted": ["New York",
                                                                                                       "NYC"]}}
    assert call_scorer("answer_word", aliases).correct is True
    assert call_scorer("answer_line", {"model_answer": "ANSWER: New York", "expected": "new york"}).correct is True
