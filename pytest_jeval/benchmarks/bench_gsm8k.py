"""GSM8K: grade-school math word problems, scored on the final number.

Hub: ``openai/gsm8k`` (config ``main``, split ``test``); schema ``question``,
``answer`` whose last line is ``#### <number>``.

Few-shot (``num_fewshot = k``): k worked examples from the ``train`` split (lm-eval's ``fewshot_split: train``),
each its question in this prompt and its upstream solution, the final ``#### <number>`` line written as
``Answer: <number>`` (the form this prompt asks for).

Percent convention ``either`` (docs/scoring.md): the golds are plain numbers, and a
reply's ``25%`` matches the gold 25 (the sign as a unit) or 0.25 (its value).
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, FewShot, HubDataset, LoadContext, Reply, Sample
from pytest_jeval.scoring.numeric import PercentConvention, gsm8k_gold, score_numeric

PERCENT: PercentConvention = "either"
"""How a percent sign is read (docs/scoring.md, "Percentages")."""

PROMPT = (
    "Solve the following math problem step by step. "
    "On the last line, write the final answer as 'Answer: <number>'.\n\n{question}"
)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One GSM8K row; the gold is the text after the last ``####``."""
    return Sample(id=ctx.default_id(index), input=row["question"], target=gsm8k_gold(row["answer"]),
                  metadata={"solution": row["answer"]})


def worked_answer(sample: Sample) -> str:
    """A few-shot example's assistant turn: its upstream solution, ``#### <number>`` as ``Answer: <number>``."""
    steps = str(sample.metadata["solution"]).rsplit("####", 1)[0].rstrip()
    return f"{steps}\nAnswer: {sample.target}"


BENCHMARK = Benchmark(
    name="gsm8k",
    category="math",
    description="Grade-school math word problems (final number)",
    dataset=HubDataset(path="openai/gsm8k", name="main", split="test"),
    to_sample=to_sample,
    prompt=lambda s: PROMPT.format(question=s.input),
    scorer="numeric",
    scoring="numeric",
    sample_count=1319,
    fewshot=FewShot(split="train", answer=worked_answer),
)


def test_gsm8k(sample: Sample, response: Reply, score: Any) -> None:
    """The final number in the reply equals the gold number (commas and $ tolerated)."""
    score(score_numeric(response.text, sample.target, percent=PERCENT))
