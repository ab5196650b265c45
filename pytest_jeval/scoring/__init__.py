"""Deterministic scorers: multiple choice, numbers, LaTeX math, GAIA, short text, other harnesses' shapes.

See docs/scoring.md for the rules each scorer applies.
A new multiple-choice benchmark needs only what is exported here: :func:`choice_prompt` and
:func:`option_letters` to ask, :func:`score_choice` (regex only) or :func:`score_choice_sample`
(regex, then the judge fallback) to score. Scorers that ask a judge model live in
:mod:`pytest_jeval.scoring.llm_judge`.
"""

from __future__ import annotations

from pytest_jeval.scoring.answers import (
    extract_answer_line,
    extract_answer_word,
    extract_choice_letters,
    score_answer_line,
    score_answer_word,
    score_mcq_multi,
    score_token_f1,
    token_f1,
)
from pytest_jeval.scoring.choice_prompt import MCQ_PROMPT, choice_prompt, option_letters, score_choice_sample
from pytest_jeval.scoring.gaia import gaia_match, score_gaia
from pytest_jeval.scoring.math_equiv import final_math_answer, last_boxed, math_equal, normalize_latex, score_math
from pytest_jeval.scoring.mcq import extract_choice_letter, score_choice
from pytest_jeval.scoring.numeric import extract_final_number, gsm8k_gold, numbers_equal, parse_number, score_numeric
from pytest_jeval.scoring.text import exact_match, normalize_text

__all__ = [
    "MCQ_PROMPT",
    "choice_prompt",
    "exact_match",
    "extract_answer_line",
    "extract_answer_word",
    "extract_choice_letter",
    "extract_choice_letters",
    "extract_final_number",
    "final_math_answer",
    "gaia_match",
    "gsm8k_gold",
    "last_boxed",
    "math_equal",
    "normalize_latex",
    "normalize_text",
    "numbers_equal",
    "option_letters",
    "parse_number",
    "score_answer_line",
    "score_answer_word",
    "score_choice",
    "score_choice_sample",
    "score_gaia",
    "score_math",
    "score_mcq_multi",
    "score_numeric",
    "score_token_f1",
    "token_f1",
]
