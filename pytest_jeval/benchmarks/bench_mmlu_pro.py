"""MMLU-Pro: harder, ten-option MMLU across 14 categories.

Hub: ``TIGER-Lab/MMLU-Pro`` (split ``test``, 12,032 rows; ``validation`` has 70);
schema ``question_id`` (int, the record id), ``question``, ``options`` (list of up
to 10 strings), ``answer`` (gold letter A-J), ``answer_index`` (0-based),
``cot_content``, ``category`` (per_subject), ``src``.

Options are shown in the dataset's order, lettered A-J. Padding options ``"N/A"``
(as the official evaluation script does) are dropped; the gold letter is then
re-derived from ``answer_index`` so it still names the same option text.

Few-shot (``num_fewshot = k``, lm-eval's ``mmlu_pro``: ``fewshot_split: validation``, ``sampler: first_n``, one task
per category): the first k ``validation`` rows of the sample's own category, each shown in this prompt with its
``cot_content`` as the answer (upstream's ``A: `` prefix dropped), ending ``Answer: <letter>``.
"""

from __future__ import annotations

import string
from typing import Any

from pytest_jeval import Benchmark, FewShot, HubDataset, LoadContext, ModelClient, Reply, Sample
from pytest_jeval.scoring.choice_prompt import MCQ_PROMPT, choice_prompt, option_letters, score_choice_sample

PROMPT = MCQ_PROMPT


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One MMLU-Pro row; the gold letter follows ``answer_index`` into the shown options."""
    raw = [str(o) for o in row["options"]]
    answer_index = row.get("answer_index")
    gold_letter = str(row["answer"]).strip().upper()
    if answer_index is None or not 0 <= int(answer_index) < len(raw):
        answer_index = string.ascii_uppercase.index(gold_letter)
    answer_index = int(answer_index)
    keep = [i for i, o in enumerate(raw) if o.strip() != "N/A" or i == answer_index]
    options = tuple(raw[i] for i in keep)
    if not 2 <= len(options) <= 10:
        raise ValueError(f"MMLU-Pro row has {len(options)} options (expected 2-10)")
    target = string.ascii_uppercase[keep.index(answer_index)]
    qid = row.get("question_id")
    return Sample(
        id=str(qid) if qid not in (None, "") else ctx.default_id(index),
        input=str(row["question"]),
        target=target,
        choices=options,
        subject=row.get("category"),
        metadata={"src": row.get("src"), "dataset_answer": gold_letter, "cot_content": row.get("cot_content")},
    )


def worked_answer(sample: Sample) -> str:
    """A few-shot example's assistant turn: its ``cot_content`` (without ``A: ``), then ``Answer: <letter>``."""
    steps = str(sample.metadata.get("cot_content") or "").strip().removeprefix("A:").strip()
    return f"{steps}\nAnswer: {sample.target}" if steps else f"Answer: {sample.target}"


def letters(sample: Sample) -> str:
    """The valid option letters of a sample."""
    return option_letters(sample)


def prompt(sample: Sample) -> str:
    """Question, lettered options and the answer-format instruction."""
    return choice_prompt(sample, PROMPT)


BENCHMARK = Benchmark(
    name="mmlu-pro",
    category="reasoning",
    description="MMLU-Pro ten-option multiple choice across 14 categories",
    dataset=HubDataset(path="TIGER-Lab/MMLU-Pro", split="test", id_column="question_id"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="mcq",
    scoring="mcq-letter A-J (regex, judge fallback)",
    sample_count=12032,
    fewshot=FewShot(split="validation", answer=worked_answer, sampler="first_n", group=lambda s: s.subject),
)


def test_mmlu_pro(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The final stated letter equals the gold letter."""
    score(score_choice_sample(sample, response.text, judge, PROMPT))
