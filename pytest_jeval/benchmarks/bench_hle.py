"""Humanity's Last Exam (HLE), text-only questions.

Hub: ``cais/hle`` (gated; split ``test``, 2,500 rows); schema ``id`` (the record
id), ``question``, ``image`` (a data URL, or ``""`` for text-only questions),
``image_preview``, ``answer``, ``answer_type`` (``exactMatch`` or
``multipleChoice``), ``author_name``, ``rationale``, ``rationale_image``,
``raw_subject``, ``category`` (per_subject), ``canary``.

Rows with an image are skipped (``to_sample`` returns None; the summary counts
them in ``skipped_rows``). The model gets HLE's answer-format instructions.

Scoring, in order:

1. **Fast path, no judge call.** ``multipleChoice``: the stated letter (MCQ
   extractor) decides right or wrong. ``exactMatch``: the text after the last
   ``Exact Answer:``/``Answer:`` equal to the gold after SQuAD-style
   normalisation is correct.
2. Otherwise the ``[judge]`` gives the HLE structured verdict
   (``correct: yes|no``) against the gold.
3. Without a judge, what the fast path cannot decide is unscored.

``scoring_metadata.method`` says which path decided (``letter``,
``exact_match``, ``judge``).
"""

from __future__ import annotations

import re
import string
from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample, Score
from pytest_jeval.scoring.llm_judge.prompts import structured_score
from pytest_jeval.scoring.mcq import extract_choice_letter
from pytest_jeval.scoring.registry import answer_of, judged, register_scorer
from pytest_jeval.scoring.text import exact_match

EXACT_FORMAT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your final answer}\n"
    "Exact Answer: {your succinct, final answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)
MC_FORMAT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your answer choice}\n"
    "Answer: {your chosen answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)

_ANSWER_LINE = re.compile(r"^[\s*_#>]*(?:exact\s+answer|final\s+answer|answer)[\s*_]*:[\s*_]*(.+?)[\s*_]*$",
                          re.IGNORECASE | re.MULTILINE)
_CHOICE_LABEL = re.compile(r"^\s*\(?([A-Z])[.)]\s", re.MULTILINE)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One text-only HLE question; image questions are skipped."""
    image = row.get("image")
    if image not in (None, ""):
        return None
    answer_type = str(row.get("answer_type") or "exactMatch")
    gold = str(row["answer"]).strip()
    question = str(row["question"])
    valid = None
    if answer_type == "multipleChoice" and re.fullmatch(r"[A-Z]", gold):
        labels = set(_CHOICE_LABEL.findall(question))
        run = 0  # the options are labelled A, B, C, ... at line starts
        while run < 26 and string.ascii_uppercase[run] in labels:
            run += 1
        count = max(run, string.ascii_uppercase.index(gold) + 1)
        valid = string.ascii_uppercase[:count] if run >= 2 else string.ascii_uppercase
    return Sample(
        id=str(row.get("id") or ctx.default_id(index)),
        input=question,
        target=gold,
        subject=row.get("category"),
        metadata={"answer_type": answer_type, "raw_subject": row.get("raw_subject"), "letters": valid},
    )


def prompt(sample: Sample) -> str:
    """HLE's answer-format instructions, then the question."""
    fmt = MC_FORMAT if sample.metadata.get("answer_type") == "multipleChoice" else EXACT_FORMAT
    return f"{fmt}\n\n{sample.input}"


def final_answer(text: str) -> str | None:
    """The text of the last ``Exact Answer:`` / ``Answer:`` line, if any."""
    found = _ANSWER_LINE.findall(text or "")
    return found[-1].strip() if found else None


def score_hle(sample: Sample, reply: str, judge: ModelClient | None) -> Score:
    """Fast path first (letter or normalised exact match), then the judge."""
    gold = sample.target
    letters = sample.metadata.get("letters")
    if letters:
        letter = extract_choice_letter(reply, letters)
        if letter is not None:
            return Score(correct=letter == gold, extracted=letter, expected=gold,
                         metadata={"method": "letter", "answer_type": "multipleChoice"})
    else:
        answer = final_answer(reply)
        if answer is not None and exact_match(answer, gold):
            return Score(correct=True, extracted=answer, expected=gold,
                         metadata={"method": "exact_match", "answer_type": sample.metadata.get("answer_type")})
    return structured_score(judge, question=sample.input, response=reply, correct_answer=gold,
                            metadata={"answer_type": sample.metadata.get("answer_type")})


BENCHMARK = Benchmark(
    name="hle",
    category="short-answer",
    description="Humanity's Last Exam, text-only questions (image rows skipped and counted)",
    dataset=HubDataset(path="cais/hle", split="test", id_column="id"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="hle",
    scoring="exact-match / letter fast path, llm-judge (structured verdict)",
    needs_judge=True,
    sample_count=2500,
)


def test_hle(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The answer matches the gold (fast path) or the judge says it does."""
    score(score_hle(sample, response.text, judge))


@register_scorer("hle", needs_sample=True, uses_judge=True)
def record_hle(record: dict[str, Any], sample: Sample, reparse_judge: bool = False) -> Score:
    """HLE: the letter / exact-match fast path, then the structured judge verdict."""

    answer = answer_of(record)
    return judged(record, reparse_judge, lambda judge: score_hle(sample, answer, judge))
