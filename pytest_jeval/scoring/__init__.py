"""Deterministic scorers: multiple choice, numbers, LaTeX math, GAIA, short text.

See docs/scoring.md for the rules each scorer applies.
"""

from __future__ import annotations

from .gaia import gaia_match, score_gaia
from .math_equiv import final_math_answer, last_boxed, math_equal, normalize_latex, score_math
from .mcq import extract_choice_letter, score_choice
from .numeric import extract_final_number, gsm8k_gold, numbers_equal, parse_number, score_numeric
from .text import exact_match, normalize_text

__all__ = [
    "exact_match",
    "extract_choice_letter",
    "extract_final_number",
    "final_math_answer",
    "gaia_match",
    "gsm8k_gold",
    "last_boxed",
    "math_equal",
    "normalize_latex",
    "normalize_text",
    "numbers_equal",
    "parse_number",
    "score_choice",
    "score_gaia",
    "score_math",
    "score_numeric",
]
