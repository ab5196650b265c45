"""Multiple-choice letter extraction: the final stated answer, never a guess."""

from __future__ import annotations

import pytest

from pytest_jeval.scoring.mcq import extract_choice_letter, score_choice

STATED = [
    ("Answer: B", "B"),  # the reference bug read this as "A" (first capital letter)
    ("answer is (B)", "B"),
    ("(B)", "B"),
    ("**B**", "B"),
    ("The answer is B.", "B"),
    ("B)", "B"),
    ("B. Paris", "B"),
    ("B", "B"),
    ("b", "B"),
    ("answer: b", "B"),
    ("ANSWER: C", "C"),
    ("answer is c.", "C"),
    ("Answer: (a)", "A"),
    ("Answer: B because it is larger than the others.", "B"),
    ("Answer: A. The other options are wrong.", "A"),
    ("**Answer:** D", "D"),
    ("**Answer**: D", "D"),
    ("After careful analysis, the correct answer is **(C)**.", "C"),
    ("Final Answer: $\\boxed{A}$", "A"),
    ("\\boxed{C}", "C"),
    ("I choose B.", "B"),
    ("Therefore, B is correct.", "B"),
    ("Answer - C", "C"),
    ("The answer would be D", "D"),
    ("The final answer is option C.", "C"),
    ("Option C", "C"),
    ("The answer is\n\nB", "B"),
]

REASONING = [
    ("A is wrong because it ignores friction. C is wrong too. So the answer is C", "C"),
    ("A is wrong because x, so the answer is C.", "C"),
    ("I think A... Final answer: D", "D"),
    ("Let me list the options.\n(A) 3\n(B) 4\n(C) 5\n(D) 6\nThe answer is (B).", "B"),
    ("Is B correct? Let me check. The answer is A.", "A"),
    ("The answer is not obviously A. After checking, the answer is D.", "D"),
    ("(C) looks right. Checking (C) again: yes, (C).", "C"),
    ("The answer is A. Wait, that ignores the sign. The correct answer is C.", "C"),
    ("Answer: B\nOn reflection B double-counts.\nFinal answer: (D)", "D"),
    ("Between A and B, A has a flaw.\nB", "B"),
]

NO_ANSWER = [
    "",
    "Hello there. I have no idea.",
    "The answer is a bit tricky, let me think.",  # lowercase "a" is an article here
    "Answer: Both are fine",
    "The answer is not A",
    "A and B are both plausible, and so are C and D.",
    "(A) might work, (B) might also work.",
    "Answer: E",  # not a valid letter
    "According to Einstein, light is fast.",  # the first-capital-letter bug would say "A"
    "To answer A, first consider the graph.",  # "answer" without a connector is not a statement
]


@pytest.mark.parametrize(("text", "letter"), STATED)
def test_stated_forms(text: str, letter: str) -> None:
    assert extract_choice_letter(text) == letter


@pytest.mark.parametrize(("text", "letter"), REASONING)
def test_final_answer_wins_over_letters_in_reasoning(text: str, letter: str) -> None:
    assert extract_choice_letter(text) == letter


@pytest.mark.parametrize("text", NO_ANSWER)
def test_never_guesses(text: str) -> None:
    assert extract_choice_letter(text) is None


def test_more_letters_and_pronoun_i() -> None:
    valid = "ABCDEFGHIJ"
    assert extract_choice_letter("Answer: J", valid) == "J"
    assert extract_choice_letter("Answer: I", valid) == "I"
    assert extract_choice_letter("Answer: I think it is hard", valid) is None
    assert extract_choice_letter("Answer: J", "ABCD") is None


def test_invalid_valid_letters() -> None:
    with pytest.raises(ValueError):
        extract_choice_letter("Answer: B", "A-D")


def test_score_choice_correct_and_metadata() -> None:
    score = score_choice("Reasoning... Answer: B", "b")
    assert score.correct is True and score.numeric == 1.0
    assert score.extracted == "B" and score.expected == "B"
    assert score.metadata == {"reference_letter": "B", "candidate_letter": "B", "valid_letters": "ABCD",
                              "extraction": "regex"}


def test_score_choice_wrong_and_unscored() -> None:
    assert score_choice("Answer: C", "B").correct is False
    unscored = score_choice("I refuse to answer.", "B")
    assert unscored.correct is None and unscored.unscored and unscored.numeric is None
    assert unscored.metadata["candidate_letter"] is None
    assert unscored.metadata["reference_letter"] == "B"
    assert unscored.metadata["extraction"] == "regex"
