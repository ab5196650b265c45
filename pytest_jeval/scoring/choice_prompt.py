"""Asking and scoring a multiple-choice sample: lettered options, 'Answer: X', regex then judge."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score

if TYPE_CHECKING:
    from pytest_jeval.calls.client import ModelClient

MCQ_PROMPT = (
    "Answer the following multiple-choice question. Think step by step, then finish with a line "
    "of the form 'Answer: X' where X is one of {letters}.\n\n{question}\n\n{options}"
)
"""The default template; it takes ``letters``, ``question`` and ``options``."""


def option_letters(sample: Sample) -> str:
    """The valid option letters of a sample: ``A``, ``B``, ... one per choice."""
    return string.ascii_uppercase[: len(sample.choices)]


def choice_prompt(sample: Sample, template: str = MCQ_PROMPT) -> str:
    """The question with its options lettered ``A) ...`` and the answer-format instruction."""
    letters = option_letters(sample)
    options = "\n".join(f"{letter}) {text}" for letter, text in zip(letters, sample.choices))
    return template.format(letters=", ".join(letters), question=sample.input, options=options)


def score_choice_sample(
    sample: Sample, reply_text: str, judge: ModelClient | None, template: str = MCQ_PROMPT
) -> Score:
    """The final stated letter against ``sample.target``; the judge is asked only when none is found."""
    from pytest_jeval.scoring.llm_judge.fallback import score_choice_with_fallback

    return score_choice_with_fallback(
        reply_text, sample.target, option_letters(sample), question=choice_prompt(sample, template), judge=judge
    )
