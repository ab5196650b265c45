"""SuperGPQA: graduate-level multiple choice across 285 disciplines.

Hub: ``m-a-p/SuperGPQA`` (split ``train``, the only split); schema ``uuid``,
``question``, ``options`` (list of strings), ``answer`` (option text),
``answer_letter``, ``discipline``, ``field``, ``subfield``, ``difficulty``.
The letter is extracted with a regex; the judge is asked only when none is found.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample
from pytest_jeval.scoring.choice_prompt import MCQ_PROMPT, choice_prompt, option_letters, score_choice_sample

PROMPT = MCQ_PROMPT


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One SuperGPQA row; options are shown in the dataset's order, lettered A, B, ..."""
    options = tuple(str(o) for o in row["options"])
    return Sample(
        id=str(row.get("uuid") or ctx.default_id(index)),
        input=row["question"],
        target=str(row["answer_letter"]).strip().upper(),
        choices=options,
        subject=row.get("subfield") or row.get("field") or row.get("discipline"),
    )


def letters(sample: Sample) -> str:
    """The valid option letters of a sample."""
    return option_letters(sample)


def prompt(sample: Sample) -> str:
    """Question, lettered options and the answer-format instruction."""
    return choice_prompt(sample, PROMPT)


BENCHMARK = Benchmark(
    name="supergpqa",
    category="reasoning",
    description="SuperGPQA graduate-level multiple choice",
    dataset=HubDataset(path="m-a-p/SuperGPQA", split="train", id_column="uuid"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="mcq",
    scoring="mcq-letter (regex, judge fallback)",
    sample_count=26529,
)


def test_supergpqa(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The final stated letter equals the gold letter."""
    score(score_choice_sample(sample, response.text, judge, PROMPT))
